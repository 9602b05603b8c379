/* Results waiting to be recorded. See results.h. */
#include "results.h"

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

struct result_entry {
	struct finish f; /* error and output point into the fields below */
	char *error;
	struct strbuf out;
	char *note;
	struct strbuf result;
	bool has_result;
	int stripped; /* 0, STRIP_OUTPUT or STRIP_ALL: see results_strip */
};

enum { STRIP_OUTPUT = 1, STRIP_ALL };

static struct result_entry *push(struct result_entry **v, int *n, int *cap)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, (size_t)*cap * sizeof(**v));
	}
	memset(&(*v)[*n], 0, sizeof(**v));
	return &(*v)[(*n)++];
}

static bool valid_utf8(const char *p, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_char_len(p + i, n - i)))
			return false;
	return true;
}

/* The error of a result, with what was wrong on the status channel after
 * it: malformed lines, a result that is not text. Its JSON is the
 * server's to check (store_finish.c). */
static char *status_error(const char *error, const struct status_chan *st, bool bad_result)
{
	struct strbuf sb = { 0 };
	char msg[STATUS_WHY_MAX + 128];

	if (error[0])
		sb_adds(&sb, error);
	if (bad_result)
		sb_printf(&sb, "%sresult on KYU_STATUS_FD is not valid JSON: not UTF-8 text",
			  sb.len ? "; kyu: " : "kyu: ");
	status_bad_message(st, msg, sizeof(msg));
	if (msg[0])
		sb_printf(&sb, "%s%s", sb.len ? "; " : "", msg);
	if (!sb.len) {
		sb_free(&sb);
		return NULL;
	}
	utf8_fix(sb.buf);
	return sb.buf;
}

void results_add(struct results *rs, uint64_t seq, uint64_t token, bool downstream, int pid,
		 const struct outcome_out *o, const struct capture *out)
{
	results_add_status(rs, seq, token, downstream, pid, o, out, NULL);
}

void results_add_status(struct results *rs, uint64_t seq, uint64_t token, bool downstream, int pid,
			const struct outcome_out *o, const struct capture *out,
			const struct status_chan *st)
{
	struct result_entry *e;
	struct finish f = {
		.seq = seq,
		.token = token,
		.downstream = downstream,
		.pid = pid,
		.outcome = o->outcome,
		.exit_code = o->exit_code,
		.signal = o->signal,
		.tempfail = o->tempfail,
		.timeout = o->timeout,
		.first = o->first,
		.cost = o->cost,
		/* Failed for good: its queue's failure hook, if it has one,
		 * is made in the same transaction. */
		.hook = o->outcome == OUT_FAILED,
	};
	bool has_out = out && out->total;
	bool used = st && status_used(st) && f.outcome != OUT_RELEASE;
	bool text = used && st->has_result && valid_utf8(st->result.buf, st->result.len);

	rs->newest = mono_now();
	if (results_count(rs) == 0)
		rs->oldest = rs->newest;
	if (f.outcome == OUT_SUCCEEDED && !has_out && !o->error[0] && !used)
		e = push(&rs->plain, &rs->n_plain, &rs->cap_plain);
	else
		e = push(&rs->other, &rs->n_other, &rs->cap_other);
	e->f = f;
	e->f.progress = -1;
	if (used) {
		e->f.status = true;
		e->f.progress = st->progress;
		if (st->has_note)
			e->note = xstrdup(st->note);
		if (text) {
			sb_add(&e->result, st->result.buf ? st->result.buf : "", st->result.len);
			e->has_result = true;
		}
		e->error = status_error(o->error, st, st->has_result && !text);
	} else if (o->error[0]) {
		/* The error column is utf8mb4: a text cut inside a character
		 * would be refused (utf8.h). */
		e->error = xstrdup(o->error);
		utf8_fix(e->error);
	}
	if (has_out)
		capture_render(out, &e->out);
}

int results_count(const struct results *rs)
{
	return rs->n_plain + rs->n_other;
}

const struct finish *results_batch(struct results *rs, int *n, int *n_plain)
{
	int total = results_count(rs), k = 0;

	if (total > rs->cap_view) {
		rs->cap_view = total;
		rs->view = xrealloc(rs->view, (size_t)total * sizeof(*rs->view));
	}
	for (int i = 0; i < rs->n_plain; i++)
		rs->view[k++] = rs->plain[i].f;
	for (int i = 0; i < rs->n_other; i++) {
		struct result_entry *e = &rs->other[i];
		rs->view[k] = e->f;
		rs->view[k].error = e->error;
		rs->view[k].output = e->out.buf;
		rs->view[k].output_len = e->out.len;
		rs->view[k].note = e->note;
		/* An empty result is sent too: the server says it is no JSON. */
		rs->view[k].result = e->has_result ? (e->result.buf ? e->result.buf : "") : NULL;
		rs->view[k].result_len = e->result.len;
		k++;
	}
	*n = total;
	*n_plain = rs->n_plain;
	rs->batch_plain = rs->n_plain;
	return rs->view;
}

static void drop(struct result_entry *v, int *n, int k)
{
	for (int i = 0; i < k; i++) {
		free(v[i].error);
		sb_free(&v[i].out);
		free(v[i].note);
		sb_free(&v[i].result);
	}
	/* An empty list has no array yet: memmove with NULL is undefined even
	 * for zero bytes. */
	if (*n > k)
		memmove(v, v + k, (size_t)(*n - k) * sizeof(*v));
	*n -= k;
}

double results_batch_done(const struct results *rs)
{
	double quiet = rs->newest + RESULTS_QUIET, longest = rs->oldest + RESULTS_LONG;

	if (results_count(rs) == 0)
		return 0;
	if (results_count(rs) >= RESULTS_BATCH)
		return rs->newest;
	return quiet < longest ? quiet : longest;
}

void results_forget(struct results *rs, int n)
{
	/* Plain successes that arrived after the batch was built sit between
	 * its plain ones and its others: count by the batch. */
	int from_plain = n < rs->batch_plain ? n : rs->batch_plain;
	int from_other = n - from_plain;

	drop(rs->plain, &rs->n_plain, from_plain);
	drop(rs->other, &rs->n_other, from_other < rs->n_other ? from_other : rs->n_other);
	rs->batch_plain = 0;
	if (results_count(rs))
		rs->oldest = mono_now();
}

void results_unsure(struct results *rs, int n)
{
	/* Counted by the batch, as results_forget does. */
	int from_plain = n < rs->batch_plain ? n : rs->batch_plain;

	for (int i = 0; i < from_plain && i < rs->n_plain; i++)
		rs->plain[i].f.unsure = true;
	for (int i = 0; i < n - from_plain && i < rs->n_other; i++)
		rs->other[i].f.unsure = true;
}

/* Only printable ASCII of the server's message, which quotes the bytes
 * it refused. */
static void add_ascii(struct strbuf *sb, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++)
		sb_add(sb, s[i] >= 0x20 && s[i] < 0x7f ? &s[i] : "?", 1);
}

bool results_strip(struct results *rs, uint64_t seq, const char *why)
{
	struct strbuf msg = { 0 };

	for (int i = 0; i < rs->n_other; i++) {
		struct result_entry *e = &rs->other[i];
		if (e->f.seq != seq)
			continue;
		if (e->stripped == STRIP_ALL) {
			free(e->error);
			sb_free(&e->out);
			free(e->note);
			sb_free(&e->result);
			memmove(e, e + 1, (size_t)(rs->n_other - i - 1) * sizeof(*e));
			rs->n_other--;
			return false;
		}
		if (e->stripped == STRIP_OUTPUT) {
			/* Its error text or another value of it was refused too:
			 * keep only what cannot be, the status and exit code,
			 * and say what happened in plain ASCII. */
			sb_adds(&msg,
				"kyud could not record this attempt's error text and output (the server said: ");
			add_ascii(&msg, why, 400);
			sb_adds(&msg, ")");
			e->f.cost.known = false;
			e->f.status = false;
			/* The hook's INSERT may be what the server refused
			 * (its queue full: KYU01): the failure is recorded
			 * without it rather than not at all. */
			e->f.hook = false;
			e->stripped = STRIP_ALL;
		} else {
			sb_printf(&msg, "%s; kyud could not record the rest of this result (%s)",
				  e->error ? e->error : "finished", why);
			/* The error column is text: keep it well inside any
			 * limit, cut on a character. */
			msg.len = utf8_cut(msg.buf, msg.len, 1000);
			msg.buf[msg.len] = '\0';
			utf8_fix(msg.buf);
			e->stripped = STRIP_OUTPUT;
		}
		free(e->error);
		e->error = xstrdup(msg.buf);
		sb_free(&msg);
		sb_free(&e->out);
		/* The note and result go with the output: either may be what
		 * was refused (a result over max_allowed_packet). */
		free(e->note);
		e->note = NULL;
		sb_free(&e->result);
		e->has_result = false;
		return true;
	}
	for (int i = 0; i < rs->n_plain; i++) {
		if (rs->plain[i].f.seq == seq) {
			memmove(&rs->plain[i], &rs->plain[i + 1],
				(size_t)(rs->n_plain - i - 1) * sizeof(rs->plain[0]));
			rs->n_plain--;
			return false;
		}
	}
	return false;
}

void results_free(struct results *rs)
{
	drop(rs->plain, &rs->n_plain, rs->n_plain);
	drop(rs->other, &rs->n_other, rs->n_other);
	free(rs->plain);
	free(rs->other);
	free(rs->view);
	memset(rs, 0, sizeof(*rs));
}
