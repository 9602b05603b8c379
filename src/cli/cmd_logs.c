/* kyu logs [-f] ID: a job's output, and with -f its live output as it comes
 * (kyud(8), "Live output") until the job ends. See cmd_logs.h. */
#include "cmd_logs.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/capture.h"
#include "cli.h"
#include "table.h"

/* Between two reads of a followed job's row: kyud writes the live tail
 * every live_output seconds (3 by default), so a second loses nothing and
 * costs the server one primary-key read a second. */
#define LOGS_POLL_NS 1000000000L

/* How far a followed job's output has been printed: bytes [0, printed)
 * of attempt att (0: none yet), offsets in what the job wrote. */
struct follow {
	unsigned att;
	unsigned long long printed;
	bool escape;
	bool ended_nl; /* the last byte printed was a newline (or none was) */
};

static void emit(struct follow *f, const char *s, size_t len)
{
	if (!len)
		return;
	table_put_text(s, len, f->escape);
	f->ended_nl = s[len - 1] == '\n';
}

/* A gap between what was printed and the oldest byte still kept. */
static void emit_gap(struct follow *f, unsigned long long n)
{
	char line[96];
	int m = snprintf(line, sizeof(line), "%s[kyu: %llu bytes not shown]\n",
			 f->ended_nl ? "" : "\n", n);
	fwrite(line, 1, (size_t)m, stdout);
	f->ended_nl = true;
}

/* A number at *p followed by the text after (advanced past both), as
 * strtoull reads it; false when either is missing. */
static bool number_then(const char **p, unsigned long long *ret, const char *after)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	*ret = strtoull(*p, &end, 10);
	if (strncmp(end, after, strlen(after)) != 0)
		return false;
	*p = end + strlen(after);
	return true;
}

/* The first line of a live tail (capture.h): its attempt, the bytes
 * written so far, and the line's length with its newline. */
static bool live_header(const char *out, size_t len, unsigned *att, unsigned long long *total,
			size_t *hlen)
{
	const char *nl = memchr(out, '\n', len), *p;
	char line[160];
	size_t plen = sizeof(CAPTURE_LIVE_PREFIX) - 1;
	unsigned long long a, kept;

	if (!nl || len < plen || memcmp(out, CAPTURE_LIVE_PREFIX, plen) != 0 ||
	    (size_t)(nl - out) >= sizeof(line))
		return false;
	memcpy(line, out, (size_t)(nl - out));
	line[nl - out] = '\0';
	*hlen = (size_t)(nl - out) + 1;
	/* "N: the last K of T bytes so far]" or "N: T bytes so far]" */
	p = line + plen;
	if (!number_then(&p, &a, ": ") || a > ~0u)
		return false;
	*att = (unsigned)a;
	if (strncmp(p, "the last ", 9) == 0) {
		p += 9;
		if (!number_then(&p, &kept, " of "))
			return false;
	}
	return number_then(&p, total, " bytes so far]") && *p == '\0';
}

/* The final output of the attempt being printed (capture_render): the
 * head, "\n[kyu: N bytes omitted]\n" and the tail where it was cut. */
static void follow_final(struct follow *f, const char *out, size_t len)
{
	static const char open[] = "\n[kyu: ";
	const char *m = memmem(out, len, open, sizeof(open) - 1),
		   *p = m ? m + sizeof(open) - 1 : NULL;
	unsigned long long omitted, head, tail_from;
	size_t mlen;
	char mark[64] = "";

	/* The marker is short and ends in a newline: a NUL-terminated copy
	 * is read, never past the column. */
	if (m) {
		size_t rest = len - (size_t)(p - out);
		memcpy(mark, p, rest < sizeof(mark) - 1 ? rest : sizeof(mark) - 1);
		p = mark;
	}
	if (!m || !number_then(&p, &omitted, " bytes omitted]\n")) {
		if (f->printed < len)
			emit(f, out + f->printed, len - f->printed);
		f->printed = len > f->printed ? len : f->printed;
		return;
	}
	head = (unsigned long long)(m - out);
	mlen = sizeof(open) - 1 + (size_t)(p - mark);
	/* In the job's bytes the tail starts after the head and what was
	 * omitted; in out, after the marker. */
	tail_from = head + omitted;
	if (f->printed < head) {
		emit(f, out + f->printed, len - f->printed);
	} else {
		const char *tail = m + mlen;
		size_t tlen = len - (size_t)(tail - out);
		if (f->printed < tail_from) {
			emit_gap(f, tail_from - f->printed);
			f->printed = tail_from;
		}
		if (f->printed - tail_from < tlen)
			emit(f, tail + (f->printed - tail_from),
			     tlen - (size_t)(f->printed - tail_from));
	}
	f->printed = tail_from + (len - (size_t)(m + mlen - out));
}

/* One read of the row: print what the job wrote since the last one. */
static void follow_step(struct follow *f, const char *status, unsigned attempts, const char *out,
			size_t len)
{
	unsigned la, fa;
	unsigned long long total;
	size_t hlen;

	if (out && live_header(out, len, &la, &total, &hlen)) {
		const char *body = out + hlen;
		unsigned long long start = total - (len - hlen);
		if (la < f->att)
			return;
		if (la > f->att) {
			if (f->att)
				fprintf(stderr, "kyu: logs: attempt %u\n", la);
			f->att = la;
			f->printed = 0;
		}
		if (f->printed < start) {
			emit_gap(f, start - f->printed);
			f->printed = start;
		}
		if (f->printed < total)
			emit(f, body + (f->printed - start), (size_t)(total - f->printed));
		f->printed = total > f->printed ? total : f->printed;
		return;
	}
	/* Not a live tail: the output an attempt left when it ended, the
	 * last one's unless one runs now (the claim keeps the column). */
	fa = strcmp(status, "running") == 0 && attempts ? attempts - 1 : attempts;
	if (!out || !fa || fa < f->att)
		return;
	if (fa > f->att) {
		if (f->att)
			fprintf(stderr, "kyu: logs: attempt %u\n", fa);
		f->att = fa;
		f->printed = 0;
	}
	follow_final(f, out, len);
}

/* A job that may still write: waiting (to run, or again after a failed
 * attempt), blocked on others, or running. */
static bool may_write(const char *status)
{
	return strcmp(status, "waiting") == 0 || strcmp(status, "running") == 0 ||
	       strcmp(status, "blocked") == 0;
}

int cmd_logs(struct db *db, int argc, char **argv)
{
	struct strbuf sb = { 0 };
	struct follow f = { .escape = table_escapes_text(), .ended_nl = true };
	const struct db_reply *reply;
	const char *id, *status;
	bool follow = false;
	int c, rc = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt(argc, argv, "+f")) != -1) {
		if (c != 'f') {
			fprintf(stderr, "kyu: logs: unknown option %s (kyu logs --help)\n",
				argv[optind - 1]);
			return EXIT_USAGE;
		}
		follow = true;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "kyu: logs: expects one job id (kyu logs --help)\n");
		return EXIT_USAGE;
	}
	if (!db)
		return 0;
	id = argv[optind];
	sb_adds(&sb, "SELECT status, attempts, output FROM kyu_jobs WHERE id = ");
	db_quotes(&sb, id);
	for (;;) {
		const struct db_result *r;
		const char *a, *out;
		struct timespec ts = { LOGS_POLL_NS / 1000000000L, LOGS_POLL_NS % 1000000000L };

		if (db_query(db, sb.buf, sb.len, &reply) != DB_OK || reply->n < 1) {
			rc = cli_die_db(db, "logs");
			break;
		}
		r = &reply->r[0];
		if (r->n_rows == 0) {
			fprintf(stderr, "kyu: logs: %s '%s'\n",
				f.att ? "the row is gone (deleted) of job" : "no job with id", id);
			rc = 1;
			break;
		}
		status = db_cell(r, 0, 0) ? db_cell(r, 0, 0) : "";
		a = db_cell(r, 0, 1);
		out = db_cell(r, 0, 2);
		if (!follow) {
			unsigned la;
			unsigned long long total;
			size_t hlen = 0, len = out ? r->lens[2] : 0;

			/* A running attempt's live tail: its bytes, not the
			 * header kyud keeps its place with. */
			if (out && !live_header(out, len, &la, &total, &hlen))
				hlen = 0;
			if (out)
				emit(&f, out + hlen, len - hlen);
			rc = 0;
			break;
		}
		follow_step(&f, status, a ? (unsigned)strtoul(a, NULL, 10) : 0, out,
			    out ? r->lens[2] : 0);
		fflush(stdout);
		if (!may_write(status)) {
			rc = strcmp(status, "succeeded") == 0   ? 0
			     : strcmp(status, "cancelled") == 0 ? EXIT_JOB_CANCELLED
								: EXIT_JOB_FAILED;
			break;
		}
		nanosleep(&ts, NULL);
	}
	/* The shell's prompt on a line of its own. */
	if (f.escape && !f.ended_nl)
		putchar('\n');
	sb_free(&sb);
	return rc;
}
