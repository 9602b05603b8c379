/* The outcome policy: how an attempt's end becomes the row's new state. See
 * outcome.h. */
#include "outcome.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/utf8.h"

static bool retryable(const struct outcome_in *in)
{
	/* Attempts that ended in EX_TEMPFAIL do not count against
	 * max_attempts. */
	return in->attempts - in->tempfails < in->max_attempts;
}

static bool permanent(const struct outcome_in *in, int code)
{
	for (int i = 0; i < in->n_permanent_codes; i++)
		if (in->permanent_codes[i] == code)
			return true;
	return false;
}

static const char *sig_name(int sig)
{
	const char *s = sigabbrev_np(sig);
	return s ? s : "?";
}

static uint64_t timeval_us(const struct timeval *tv)
{
	if (tv->tv_sec < 0 || tv->tv_usec < 0)
		return 0;
	return (uint64_t)tv->tv_sec * 1000000 + (uint64_t)tv->tv_usec;
}

/* wait4 reports the process and the descendants it waited for: CPU time
 * summed, ru_maxrss the largest single peak, in KiB on Linux. */
static void cost_of(const struct rusage *ru, struct attempt_cost *c)
{
	c->known = true;
	c->user_us = timeval_us(&ru->ru_utime);
	c->sys_us = timeval_us(&ru->ru_stime);
	c->max_rss = ru->ru_maxrss > 0 ? (uint64_t)ru->ru_maxrss * 1024 : 0;
}

/* After the exit code, what the job said last, as much as fits, cut on
 * a character. */
static void add_said(const struct outcome_in *in, struct outcome_out *out)
{
	size_t l = strlen(out->error), room = sizeof(out->error) - l;
	size_t n;

	if (!in->said || !in->said[0] || room <= 3)
		return;
	n = utf8_cut(in->said, strlen(in->said), room - 3);
	snprintf(out->error + l, room, ": %.*s", (int)n, in->said);
}

void outcome_decide(const struct outcome_in *in, struct outcome_out *out)
{
	const size_t len = sizeof(out->error);
	int code = -1, sig = 0;
	bool bare = false; /* the error is "exit code N" and what policy made of it */

	memset(out, 0, sizeof(*out));
	out->record = true;
	out->first = in->attempts <= 1;
	if (in->rusage)
		cost_of(in->rusage, &out->cost);
	if (WIFEXITED(in->wstatus))
		code = WEXITSTATUS(in->wstatus);
	else if (WIFSIGNALED(in->wstatus))
		sig = WTERMSIG(in->wstatus);
	out->exit_code = code;
	out->signal = sig;

	switch (in->reason) {
	case END_LOST:
		/* Another claim owns the row now; writing would be a late write. */
		out->record = false;
		out->outcome = OUT_RELEASE;
		snprintf(out->error, len, "abandoned: its lease was lost");
		return;
	case END_SHUTDOWN:
		out->outcome = OUT_RELEASE;
		snprintf(out->error, len, "interrupted: kyud stopped during attempt %u",
			 in->attempts);
		return;
	case END_CANCEL:
		out->outcome = OUT_CANCELLED;
		snprintf(out->error, len, "cancelled while running; process group terminated");
		return;
	case END_TIMEOUT:
		out->outcome = retryable(in) ? OUT_RETRY : OUT_FAILED;
		out->timeout = true;
		snprintf(out->error, len, "timed out after %u s", in->time_limit);
		break;
	case END_FENCE:
		out->outcome = retryable(in) ? OUT_RETRY : OUT_FAILED;
		snprintf(out->error, len,
			 "killed by kyud: its lease could not be renewed (database unreachable)");
		break;
	case END_NONE:
		if (code == 0) {
			out->outcome = OUT_SUCCEEDED;
			return;
		}
		if (code > 0 && permanent(in, code)) {
			/* Checked first: an operator who lists 75 means it. */
			out->outcome = OUT_FAILED;
			snprintf(out->error, len, "exit code %d (permanent: not retried)", code);
			add_said(in, out);
			return;
		}
		if (code == EXIT_TEMPFAIL) {
			out->outcome = OUT_RETRY;
			out->tempfail = true;
			snprintf(out->error, len, "temporary failure (exit 75): retrying later");
			return;
		}
		out->outcome = retryable(in) ? OUT_RETRY : OUT_FAILED;
		if (code == 127)
			snprintf(out->error, len, "command not found (exit 127)");
		else if (code == 126)
			snprintf(out->error, len, "command not executable (exit 126)");
		else if (code > 0)
			snprintf(out->error, len, "exit code %d", code);
		else
			snprintf(out->error, len, "killed by signal %d (SIG%s)", sig,
				 sig_name(sig));
		/* Only a plain code says nothing of why. */
		bare = code > 0 && code != 126 && code != 127;
		break;
	}
	if (out->outcome == OUT_FAILED && in->attempts > 1) {
		size_t l = strlen(out->error);
		snprintf(out->error + l, len - l, " (attempt %u of %u)",
			 in->attempts - in->tempfails, in->max_attempts);
	}
	if (bare)
		add_said(in, out);
}

bool outcome_exhausted(unsigned attempts, unsigned tempfails, unsigned max_attempts,
		       struct outcome_out *out)
{
	if (attempts - tempfails <= max_attempts)
		return false;
	memset(out, 0, sizeof(*out));
	out->record = true;
	out->outcome = OUT_FAILED;
	out->exit_code = -1;
	snprintf(out->error, sizeof(out->error),
		 "lease expired during the last attempt (%u of %u): its worker or host was lost",
		 attempts - tempfails - 1, max_attempts);
	return true;
}

bool outcome_bad_row(const struct claimed *c, struct outcome_out *out)
{
	char why[200];

	if (c->bad)
		snprintf(why, sizeof(why), "%s", c->bad);
	else if (c->max_attempts == 0)
		snprintf(why, sizeof(why),
			 "max_attempts = 0: must be at least 1 (or NULL for the default)");
	else if (c->attempts == UINT32_MAX)
		snprintf(why, sizeof(why),
			 "attempts = %u: at the column's limit, cannot count another", c->attempts);
	else if (c->tempfails >= c->attempts)
		snprintf(why, sizeof(why),
			 "tempfails = %u: must be below attempts (%u after this claim)",
			 c->tempfails, c->attempts);
	else
		return false;
	outcome_unstarted(why, out);
	return true;
}

void outcome_unstarted_temporary(const char *why, unsigned tempfails, struct outcome_out *out)
{
	char tail[96];
	size_t room;
	bool again = tempfails + 1 < START_RETRIES;

	if (again)
		snprintf(tail, sizeof(tail), " (temporary: retrying later)");
	else
		snprintf(tail, sizeof(tail),
			 " (temporary, but %u attempts were temporary failures: giving up)",
			 tempfails + 1);
	/* The cause first, cut if need be, so that the tail is always there. */
	room = sizeof(out->error) - 1 - strlen(tail);
	outcome_unstarted(why, out);
	room = utf8_cut(out->error, strlen(out->error), room);
	snprintf(out->error + room, sizeof(out->error) - room, "%s", tail);
	if (again) {
		out->outcome = OUT_RETRY;
		out->tempfail = true;
	}
}

void outcome_unstarted(const char *why, struct outcome_out *out)
{
	memset(out, 0, sizeof(*out));
	out->record = true;
	out->outcome = OUT_FAILED;
	out->exit_code = -1;
	snprintf(out->error, sizeof(out->error), "%s", why);
	/* why often holds a row's text, cut here by bytes. */
	utf8_fix(out->error);
}
