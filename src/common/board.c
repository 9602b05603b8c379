/* The scoreboard: kyud's own counters and histograms, in one shared memory
 * file. See board.h. */
#include "board.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOARD_MAGIC 0x6b797562u /* "kyub" */
/* Changes whenever struct board does: a worker of another build refuses
 * a board it would misread. */
#define BOARD_LAYOUT ((uint32_t)(sizeof(struct board) ^ (BOARD_BUCKETS << 24) ^ (BJ_N << 16)))

static const double latency_bounds[BOARD_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5,    1,     2.5,    5,     10,   30,    60,   300, 3600,
};
static const double batch_bounds[BOARD_BUCKETS] = {
	1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096,
};

const double *board_bounds(enum board_hist h)
{
	return h == BH_BATCH ? batch_bounds : latency_bounds;
}

int board_create(struct board **ret, int *ret_fd)
{
	struct board *b;
	int fd, r;

	fd = memfd_create("kyu-board", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)sizeof(struct board)) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	b->magic = BOARD_MAGIC;
	b->layout = BOARD_LAYOUT;
	*ret = b;
	*ret_fd = fd;
	return 0;
}

int board_map(int fd, bool writable, struct board **ret)
{
	struct stat st;
	struct board *b;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size != (off_t)sizeof(struct board))
		return -EPROTO;
	b = mmap(NULL, sizeof(*b), PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (b == MAP_FAILED)
		return -errno;
	if (b->magic != BOARD_MAGIC || b->layout != BOARD_LAYOUT) {
		munmap(b, sizeof(*b));
		return -EPROTO;
	}
	*ret = b;
	return 0;
}

void board_unmap(struct board *b)
{
	if (b)
		munmap(b, sizeof(*b));
}

/* One writer per word: a relaxed load and store cannot tear, and no other
 * process ever writes it. */
static void bump(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

uint32_t board_n_queues(const struct board_worker *w)
{
	uint32_t n = __atomic_load_n(&w->n_queues, __ATOMIC_ACQUIRE);
	return n > BOARD_QUEUES ? BOARD_QUEUES : n;
}

uint64_t board_running(const struct board *b)
{
	uint64_t running = 0;

	for (int w = 0; w < BOARD_MAX_WORKERS; w++)
		running += board_load(&b->worker[w].gauge[BG_RUNNING]);
	return running;
}

static struct board_queue *queue_entry(struct board_worker *w, const char *queue)
{
	uint32_t n = board_n_queues(w);
	size_t len = strlen(queue);

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(w->queue[i].name, queue) == 0)
			return &w->queue[i];
	if (n == BOARD_QUEUES || len >= BOARD_QUEUE_NAME) {
		struct board_queue *other = &w->queue[BOARD_QUEUES];
		if (!other->name[0])
			memcpy(other->name, BOARD_OTHER_QUEUE, sizeof(BOARD_OTHER_QUEUE));
		return other;
	}
	memcpy(w->queue[n].name, queue, len + 1);
	/* Readers see the name complete before they see the entry. */
	__atomic_store_n(&w->n_queues, n + 1, __ATOMIC_RELEASE);
	return &w->queue[n];
}

void board_count(struct board_worker *w, const char *queue, enum board_job what)
{
	if (w)
		bump(&queue_entry(w, queue ? queue : "")->n[what], 1);
}

void board_add(struct board_worker *w, enum board_counter c, uint64_t n)
{
	if (w && n)
		bump(&w->counter[c], n);
}

void board_set(struct board_worker *w, enum board_gauge g, uint64_t v)
{
	if (w)
		__atomic_store_n(&w->gauge[g], v, __ATOMIC_RELAXED);
}

void board_observe(struct board_worker *w, enum board_hist h, double v)
{
	const double *bounds = board_bounds(h);
	struct board_histogram *hg;
	int i;

	if (!w)
		return;
	hg = &w->hist[h];
	if (!(v >= 0)) /* NaN or a clock step backwards */
		v = 0;
	for (i = 0; i < BOARD_BUCKETS && v > bounds[i]; i++)
		;
	bump(&hg->bucket[i], 1);
	bump(&hg->sum, h == BH_BATCH ? (uint64_t)v : (uint64_t)(v * 1e6 + 0.5));
}

void board_restarted(struct board *b)
{
	bump(&b->worker_restarts, 1);
}
