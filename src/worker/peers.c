#include "peers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/registry.h"
#include "common/util.h"
#include "common/wake.h"

void peers_init(struct peers *ps, const struct kyu_config *cfg, struct conn *conn,
		const char *daemon)
{
	memset(ps, 0, sizeof(*ps));
	ps->cfg = cfg;
	ps->conn = conn;
	ps->daemon = daemon;
}

static void forget_list(struct peers *ps)
{
	for (int i = 0; i < ps->n; i++) {
		close(ps->p[i].fd);
		free(ps->p[i].queues);
	}
	ps->n = 0;
}

static void forget_end(struct peers *ps, int k)
{
	free(ps->pending[k].queue);
	ps->pending[k] = ps->pending[--ps->n_pending];
}

static void forget_pending(struct peers *ps)
{
	while (ps->n_pending > 0)
		forget_end(ps, 0);
	ps->overflow = false;
}

void peers_free(struct peers *ps)
{
	forget_list(ps);
	forget_pending(ps);
}

/* The same test as REGISTRY_SERVES, on the row's list. */
static bool serves(const char *list, const char *queue)
{
	size_t ql = strlen(queue);

	if (!list[0])
		return true;
	for (const char *s = list; *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == ql && memcmp(s, queue, ql) == 0)
			return true;
		if (!e)
			break;
		s = e + 1;
	}
	return false;
}

static void send_one(struct peers *ps, const struct peer *p, const char *queue)
{
	char buf[sizeof(WAKE_PREFIX) + WAKE_QUEUE_MAX];
	int n = snprintf(buf, sizeof(buf), WAKE_PREFIX "%s", queue);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	/* A hint: a full socket buffer or an unreachable daemon loses it, and
	 * the poll is there for that. */
	if (send(p->fd, buf, (size_t)n, MSG_DONTWAIT) == n)
		ps->sent++;
}

static bool any_recorded(const struct peers *ps)
{
	for (int k = 0; k < ps->n_pending; k++)
		if (ps->pending[k].recorded)
			return true;
	return ps->overflow;
}

/* Announce the recorded ends to every daemon on the list, a datagram per
 * queue. */
static void flush(struct peers *ps)
{
	for (int i = 0; i < ps->n; i++) {
		if (ps->overflow) {
			send_one(ps, &ps->p[i], "");
			continue;
		}
		for (int k = 0; k < ps->n_pending; k++) {
			const struct peer_end *e = &ps->pending[k];
			bool told = false;
			if (!e->recorded || !serves(ps->p[i].queues, e->queue))
				continue;
			for (int m = 0; m < k && !told; m++)
				told = ps->pending[m].recorded &&
				       strcmp(ps->pending[m].queue, e->queue) == 0;
			if (!told)
				send_one(ps, &ps->p[i], e->queue);
		}
	}
	for (int k = ps->n_pending - 1; k >= 0; k--)
		if (ps->pending[k].recorded)
			forget_end(ps, k);
	ps->overflow = false;
}

static bool fresh(const struct peers *ps, double now)
{
	return ps->read_at > 0 && now < ps->read_at + registry_interval(ps->cfg);
}

void peers_ended(struct peers *ps, uint64_t seq, const char *queue)
{
	double now = mono_now();

	if (!queue)
		return;
	/* An end whose result never reached the database (dropped, or the
	 * worker's connection lost meanwhile) is not waited for past a lease:
	 * its slot frees at the lease's expiry, which claims see anyway. */
	for (int k = ps->n_pending - 1; k >= 0; k--)
		if (!ps->pending[k].recorded && now - ps->pending[k].ended_at > ps->cfg->lease)
			forget_end(ps, k);
	if (ps->n_pending == PEERS_PENDING_MAX) {
		ps->overflow = true;
		return;
	}
	ps->pending[ps->n_pending++] =
		(struct peer_end){ .seq = seq, .queue = xstrdup(queue), .ended_at = now };
}

void peers_recorded(struct peers *ps, const struct finish *f, int n)
{
	bool any = false;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < ps->n_pending; k++)
			if (ps->pending[k].seq == f[i].seq && !ps->pending[k].recorded)
				any = ps->pending[k].recorded = true;
	/* A list read a moment ago (or a read that just failed) serves:
	 * daemons come and go at the pace of registry refreshes. */
	if ((any || ps->overflow) && fresh(ps, mono_now()))
		flush(ps);
}

bool peers_due(void *peers, struct stmt_turn *t)
{
	const struct peers *ps = peers;

	return any_recorded(ps) && !fresh(ps, t->now);
}

bool peers_send(void *peers, struct stmt_turn *t, struct strbuf *sb)
{
	const struct peers *ps = peers;

	(void)t;
	sb_adds(sb, "SELECT d.wake_addr, d.queues FROM kyu_daemons AS d WHERE d.wake_addr IS NOT "
		    "NULL AND " REGISTRY_LIVE("d") " AND d.id <> ");
	db_quotes(sb, ps->daemon ? ps->daemon : "");
	return true;
}

void peers_reply(void *peers, const struct db_reply *r)
{
	struct peers *ps = peers;
	const struct db_result *res;
	char err[256];

	/* Read or not, not again before an interval has passed: a missing
	 * table (a schema before version 3) or a grant would fail every time. */
	ps->read_at = mono_now();
	if (r->fail != DB_OK || r->n < 1 || r->r[0].n_cols != 2) {
		if (r->fail == DB_LOST || r->fail == DB_BUSY)
			conn_failed(ps->conn, r, "reading the other daemons");
		else
			log_debug("reading the other daemons in kyu_daemons: %s; slots freed here are "
				  "announced to them again in %.0f s",
				  r->err, registry_interval(ps->cfg));
		for (int k = ps->n_pending - 1; k >= 0; k--)
			if (ps->pending[k].recorded)
				forget_end(ps, k);
		ps->overflow = false;
		return;
	}
	forget_list(ps);
	res = &r->r[0];
	for (size_t i = 0; i < res->n_rows && ps->n < PEERS_MAX; i++) {
		const char *addr = db_cell(res, i, 0), *queues = db_cell(res, i, 1);
		int fd;

		if (!addr)
			continue;
		fd = wake_socket(addr, false, err, sizeof(err));
		if (fd < 0) {
			log_debug("kyu_daemons: %s", err);
			continue;
		}
		ps->p[ps->n].fd = fd;
		ps->p[ps->n].queues = xstrdup(queues ? queues : "");
		ps->n++;
	}
	flush(ps);
}
