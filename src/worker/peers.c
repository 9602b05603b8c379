/* Telling the other daemons that a limited slot is free. See
 * peers.h. */
#include "peers.h"

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

void peers_free(struct peers *ps)
{
	forget_list(ps);
	while (ps->n_pending > 0)
		forget_end(ps, 0);
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

static bool any_announce(const struct peers *ps)
{
	for (int k = 0; k < ps->n_pending; k++)
		if (ps->pending[k].announce)
			return true;
	return false;
}

/* Send what is to be announced to every daemon on the list, a datagram per
 * queue, and forget it. */
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
			if (!e->announce || !serves(ps->p[i].queues, e->queue))
				continue;
			for (int m = 0; m < k && !told; m++)
				told = ps->pending[m].announce &&
				       strcmp(ps->pending[m].queue, e->queue) == 0;
			if (!told)
				send_one(ps, &ps->p[i], e->queue);
		}
	}
	for (int k = ps->n_pending - 1; k >= 0; k--)
		if (ps->pending[k].announce)
			forget_end(ps, k);
	ps->overflow = false;
}

static bool fresh(const struct peers *ps, double now)
{
	return ps->read_at > 0 && now < ps->read_at + registry_interval(ps->cfg);
}

/* Announce now if the list serves; else the pump's row reads it first. */
static void announce(struct peers *ps, double now)
{
	if ((any_announce(ps) || ps->overflow) && fresh(ps, now))
		flush(ps);
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
		if (!ps->pending[k].recorded_at && now - ps->pending[k].ended_at > ps->cfg->lease)
			forget_end(ps, k);
	if (ps->n_pending == PEERS_PENDING_MAX) {
		ps->overflow = true;
		return;
	}
	ps->pending[ps->n_pending++] = (struct peer_end){
		.seq = seq,
		.queue = xstrdup(queue),
		.ended_at = now,
	};
}

void peers_recorded(struct peers *ps, const struct finish *f, int n, bool at_once)
{
	double now = mono_now();

	for (int i = 0; i < n; i++)
		for (int k = 0; k < ps->n_pending; k++) {
			struct peer_end *e = &ps->pending[k];
			if (e->seq != f[i].seq || e->recorded_at)
				continue;
			e->recorded_at = now;
			e->announce = at_once;
		}
	announce(ps, now);
}

static bool taken(const struct peer_end *e, const struct claimed *rows, int got)
{
	for (int i = 0; i < got; i++)
		if (rows[i].queue && strcmp(rows[i].queue, e->queue) == 0)
			return true;
	return false;
}

void peers_claimed(struct peers *ps, const struct claimed *rows, int got)
{
	for (int k = ps->n_pending - 1; k >= 0; k--) {
		struct peer_end *e = &ps->pending[k];
		if (!e->recorded_at || e->announce)
			continue;
		if (taken(e, rows, got))
			forget_end(ps, k);
		else
			e->announce = true;
	}
	announce(ps, mono_now());
}

/* Recorded ends no claim answered within PEERS_DECIDE are announced. */
static void decide_late(struct peers *ps, double now)
{
	for (int k = 0; k < ps->n_pending; k++) {
		struct peer_end *e = &ps->pending[k];
		if (e->recorded_at && !e->announce && now >= e->recorded_at + PEERS_DECIDE)
			e->announce = true;
	}
}

bool peers_due(void *peers, struct stmt_turn *t)
{
	struct peers *ps = peers;

	decide_late(ps, t->now);
	if (!any_announce(ps) && !ps->overflow)
		return false;
	if (fresh(ps, t->now)) {
		flush(ps);
		return false;
	}
	return true;
}

double peers_when(void *peers, double now)
{
	const struct peers *ps = peers;
	double next = 0;

	(void)now;
	for (int k = 0; k < ps->n_pending; k++) {
		const struct peer_end *e = &ps->pending[k];
		double t = e->recorded_at + PEERS_DECIDE;
		if (e->recorded_at && !e->announce && (next == 0 || t < next))
			next = t;
	}
	return next;
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
	 * table (a schema before version 3) or a grant would fail every time;
	 * meanwhile what is announced reaches the daemons of the last list. */
	ps->read_at = mono_now();
	if (r->fail != DB_OK || r->n < 1 || r->r[0].n_cols != 2) {
		if (r->fail == DB_LOST || r->fail == DB_BUSY)
			conn_failed(ps->conn, r, "reading the other daemons");
		else
			log_debug("reading the other daemons in kyu_daemons: %s; trying again in "
				  "%.0f s",
				  r->err, registry_interval(ps->cfg));
		flush(ps);
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
