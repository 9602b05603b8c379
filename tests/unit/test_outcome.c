/* outcome_decide, outcome_exhausted, outcome_unstarted: every branch.
 *
 * Wait statuses are built by hand in the encoding Linux (and the BSDs) use,
 * which is what <sys/wait.h>'s W* macros decode: exit code in bits 8..15,
 * terminating signal in bits 0..6 (bit 7: core dumped). The first checks
 * make sure the W* macros read them back as meant, and that they agree
 * with W_EXITCODE where the libc has it (glibc does, under _GNU_SOURCE). */
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "worker/outcome.h"
#include "check.h"

#define EXITED(code) (((code) & 0xff) << 8)
#define KILLED(sig) ((sig) & 0x7f)
#define CORE 0x80

static const int perm[] = { 3, 75 };
static const int perm_no75[] = { 3 };

static struct outcome_in in(enum end_reason reason, int wstatus, unsigned attempts, unsigned tempfails,
			    unsigned max_attempts)
{
	struct outcome_in i = {
		.reason = reason,
		.wstatus = wstatus,
		.attempts = attempts,
		.tempfails = tempfails,
		.max_attempts = max_attempts,
		.time_limit = 30,
		.permanent_codes = perm_no75,
		.n_permanent_codes = 1,
	};
	return i;
}

static struct outcome_out decide(struct outcome_in i)
{
	struct outcome_out o;
	memset(&o, 0x5a, sizeof(o)); /* outcome_decide must set every field */
	outcome_decide(&i, &o);
	return o;
}

static void test_wait_encoding(void)
{
	CHECK(WIFEXITED(EXITED(0)) && WEXITSTATUS(EXITED(0)) == 0);
	CHECK(WIFEXITED(EXITED(127)) && WEXITSTATUS(EXITED(127)) == 127);
	CHECK(WIFEXITED(EXITED(255)) && WEXITSTATUS(EXITED(255)) == 255);
	CHECK(WIFSIGNALED(KILLED(SIGKILL)) && WTERMSIG(KILLED(SIGKILL)) == SIGKILL);
	CHECK(WIFSIGNALED(KILLED(SIGSEGV) | CORE) && WTERMSIG(KILLED(SIGSEGV) | CORE) == SIGSEGV);
#ifdef W_EXITCODE
	CHECK(EXITED(3) == W_EXITCODE(3, 0));
	CHECK(KILLED(SIGTERM) == W_EXITCODE(0, SIGTERM));
#endif
}

static void test_none(void)
{
	struct outcome_out o;
	struct outcome_in i;

	/* exit 0: succeeded, whatever the attempt counts say. */
	o = decide(in(END_NONE, EXITED(0), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_SUCCEEDED);
	CHECK(o.exit_code == 0);
	CHECK(o.signal == 0);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "");
	o = decide(in(END_NONE, EXITED(0), 9, 0, 3));
	CHECK(o.outcome == OUT_SUCCEEDED);
	CHECK_STR(o.error, "");

	/* A permanent code fails for good at once, without the attempt
	 * suffix, even with attempts left. */
	o = decide(in(END_NONE, EXITED(3), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.exit_code == 3);
	CHECK(o.signal == 0);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "exit code 3 (permanent: not retried)");
	o = decide(in(END_NONE, EXITED(3), 2, 0, 3));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 3 (permanent: not retried)");

	/* 75 listed as permanent: the list wins over EX_TEMPFAIL. */
	i = in(END_NONE, EXITED(75), 1, 0, 3);
	i.permanent_codes = perm;
	i.n_permanent_codes = 2;
	o = decide(i);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.exit_code == 75);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "exit code 75 (permanent: not retried)");

	/* 75 not listed: retried, not counted, even with no attempts left. */
	o = decide(in(END_NONE, EXITED(75), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.tempfail);
	CHECK(o.exit_code == 75);
	CHECK(o.signal == 0);
	CHECK_STR(o.error, "temporary failure (exit 75): retrying later");
	o = decide(in(END_NONE, EXITED(75), 3, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.tempfail);
	CHECK_STR(o.error, "temporary failure (exit 75): retrying later");
	/* An empty list: the same. */
	i = in(END_NONE, EXITED(75), 5, 1, 3);
	i.permanent_codes = NULL;
	i.n_permanent_codes = 0;
	o = decide(i);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.tempfail);

	/* 127 */
	o = decide(in(END_NONE, EXITED(127), 1, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(!o.tempfail);
	CHECK(o.exit_code == 127);
	CHECK_STR(o.error, "command not found (exit 127)");
	o = decide(in(END_NONE, EXITED(127), 3, 0, 3));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "command not found (exit 127) (attempt 3 of 3)");
	o = decide(in(END_NONE, EXITED(127), 1, 0, 1));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "command not found (exit 127)"); /* attempts 1: no suffix */

	/* 126 */
	o = decide(in(END_NONE, EXITED(126), 2, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == 126);
	CHECK_STR(o.error, "command not executable (exit 126)");
	o = decide(in(END_NONE, EXITED(126), 2, 0, 2));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "command not executable (exit 126) (attempt 2 of 2)");

	/* Other codes. */
	o = decide(in(END_NONE, EXITED(2), 1, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == 2);
	CHECK(o.signal == 0);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "exit code 2");
	o = decide(in(END_NONE, EXITED(255), 2, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == 255);
	CHECK_STR(o.error, "exit code 255");
	o = decide(in(END_NONE, EXITED(2), 1, 0, 1));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 2");
	o = decide(in(END_NONE, EXITED(2), 4, 0, 4));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 2 (attempt 4 of 4)");

	/* Killed by a signal: no exit code, the signal and its name. */
	o = decide(in(END_NONE, KILLED(SIGKILL), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == -1);
	CHECK(o.signal == SIGKILL);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "killed by signal 9 (SIGKILL)");
	o = decide(in(END_NONE, KILLED(SIGSEGV) | CORE, 2, 0, 2));
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.exit_code == -1);
	CHECK(o.signal == SIGSEGV);
	CHECK_STR(o.error, "killed by signal 11 (SIGSEGV) (attempt 2 of 2)");
	o = decide(in(END_NONE, KILLED(SIGTERM), 1, 0, 1));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "killed by signal 15 (SIGTERM)");
}

/* Retry or failed: attempts ended in EX_TEMPFAIL do not count against
 * max_attempts; the suffix counts the attempts that did. */
static void test_counting(void)
{
	struct outcome_out o;

	o = decide(in(END_NONE, EXITED(1), 2, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	o = decide(in(END_NONE, EXITED(1), 3, 0, 3)); /* attempts - tempfails == max */
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 1 (attempt 3 of 3)");
	o = decide(in(END_NONE, EXITED(1), 4, 2, 3)); /* 2 counted of 3 */
	CHECK(o.outcome == OUT_RETRY);
	CHECK_STR(o.error, "exit code 1");
	o = decide(in(END_NONE, EXITED(1), 5, 2, 3)); /* 3 counted of 3 */
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 1 (attempt 3 of 3)");
	/* The suffix goes by attempts > 1, not by the counted ones. */
	o = decide(in(END_NONE, EXITED(1), 2, 1, 1));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 1 (attempt 1 of 1)");
	/* Never a suffix on a retry. */
	o = decide(in(END_NONE, EXITED(1), 7, 5, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK_STR(o.error, "exit code 1");
}

static void test_reasons(void)
{
	struct outcome_out o;
	struct outcome_in i;

	/* Timeout: retried while attempts are left, its status recorded. */
	o = decide(in(END_TIMEOUT, KILLED(SIGKILL), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == -1);
	CHECK(o.signal == SIGKILL);
	CHECK(!o.tempfail);
	CHECK(o.timeout);
	CHECK_STR(o.error, "timed out after 30 s");
	i = in(END_TIMEOUT, KILLED(SIGTERM), 2, 0, 2);
	i.time_limit = 5;
	o = decide(i);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.signal == SIGTERM);
	CHECK_STR(o.error, "timed out after 5 s (attempt 2 of 2)");
	o = decide(in(END_TIMEOUT, KILLED(SIGKILL), 1, 0, 1));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "timed out after 30 s");
	/* A job that exited 0 while being timed out still timed out. */
	o = decide(in(END_TIMEOUT, EXITED(0), 1, 0, 3));
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.exit_code == 0);
	CHECK_STR(o.error, "timed out after 30 s");
	/* ... and 75 is not a tempfail then. */
	o = decide(in(END_TIMEOUT, EXITED(75), 3, 0, 3));
	CHECK(o.outcome == OUT_FAILED);
	CHECK(!o.tempfail);
	CHECK(o.exit_code == 75);

	/* Fence. */
	o = decide(in(END_FENCE, KILLED(SIGKILL), 1, 0, 3));
	CHECK(o.record);
	CHECK(!o.timeout);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.signal == SIGKILL);
	CHECK_STR(o.error, "killed by kyud: its lease could not be renewed (database unreachable)");
	o = decide(in(END_FENCE, KILLED(SIGKILL), 5, 2, 3));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "killed by kyud: its lease could not be renewed (database unreachable) "
			   "(attempt 3 of 3)");

	/* Cancel: cancelled, whatever the counts, never a suffix. */
	o = decide(in(END_CANCEL, KILLED(SIGTERM), 1, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_CANCELLED);
	CHECK(o.signal == SIGTERM);
	CHECK(o.exit_code == -1);
	CHECK_STR(o.error, "cancelled while running; process group terminated");
	o = decide(in(END_CANCEL, EXITED(1), 3, 0, 3));
	CHECK(o.outcome == OUT_CANCELLED);
	CHECK(o.exit_code == 1);
	CHECK_STR(o.error, "cancelled while running; process group terminated");

	/* Shutdown: released, the attempt named. */
	o = decide(in(END_SHUTDOWN, KILLED(SIGTERM), 2, 0, 3));
	CHECK(o.record);
	CHECK(o.outcome == OUT_RELEASE);
	CHECK(o.signal == SIGTERM);
	CHECK_STR(o.error, "interrupted: kyud stopped during attempt 2");
	o = decide(in(END_SHUTDOWN, KILLED(SIGTERM), 3, 0, 3));
	CHECK(o.outcome == OUT_RELEASE);
	CHECK_STR(o.error, "interrupted: kyud stopped during attempt 3");

	/* Lost: nothing is written. */
	o = decide(in(END_LOST, KILLED(SIGKILL), 1, 0, 3));
	CHECK(!o.record);
	CHECK(o.outcome == OUT_RELEASE);
	CHECK(o.signal == SIGKILL);
	CHECK_STR(o.error, "abandoned: its lease was lost");
	o = decide(in(END_LOST, EXITED(0), 3, 0, 3));
	CHECK(!o.record);
	CHECK(o.exit_code == 0);
}

static void test_exhausted(void)
{
	struct outcome_out o, untouched;

	memset(&o, 0x5a, sizeof(o));
	untouched = o;
	/* attempts - tempfails == max_attempts: the last attempt is this one. */
	CHECK(!outcome_exhausted(3, 0, 3, &o));
	CHECK(memcmp(&o, &untouched, sizeof(o)) == 0);
	CHECK(!outcome_exhausted(1, 0, 3, &o));
	CHECK(!outcome_exhausted(5, 2, 3, &o));
	CHECK(!outcome_exhausted(1, 0, 1, &o));
	CHECK(memcmp(&o, &untouched, sizeof(o)) == 0);

	/* One more: the previous attempt was the last. */
	CHECK(outcome_exhausted(4, 0, 3, &o));
	CHECK(o.record);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.exit_code == -1);
	CHECK(o.signal == 0);
	CHECK(!o.tempfail);
	CHECK_STR(o.error,
		  "lease expired during the last attempt (3 of 3): its worker or host was lost");
	memset(&o, 0x5a, sizeof(o));
	CHECK(outcome_exhausted(6, 2, 3, &o));
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error,
		  "lease expired during the last attempt (3 of 3): its worker or host was lost");
	CHECK(outcome_exhausted(2, 0, 1, &o));
	CHECK_STR(o.error,
		  "lease expired during the last attempt (1 of 1): its worker or host was lost");
}

static void test_unstarted(void)
{
	struct outcome_out o;
	char longer[400];

	memset(&o, 0x5a, sizeof(o));
	outcome_unstarted("argv: not a JSON array", &o);
	CHECK(o.record);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.exit_code == -1);
	CHECK(o.signal == 0);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "argv: not a JSON array");

	/* Too long a reason is cut, NUL-terminated. */
	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	outcome_unstarted(longer, &o);
	CHECK(strlen(o.error) == sizeof(o.error) - 1);
	CHECK(strncmp(o.error, longer, sizeof(o.error) - 1) == 0);
}

/* A start that failed for the machine's trouble: retried, counted in
 * tempfails, up to START_RETRIES; the cause always whole-charactered and
 * the verdict always there, however long the cause. */
static void test_unstarted_temporary(void)
{
	struct outcome_out o;
	char longer[400];

	memset(&o, 0x5a, sizeof(o));
	outcome_unstarted_temporary("cannot start a process: Resource temporarily unavailable", 0, &o);
	CHECK(o.record);
	CHECK(o.outcome == OUT_RETRY);
	CHECK(o.tempfail);
	CHECK(o.exit_code == -1);
	CHECK(!o.cost.known);
	CHECK_STR(o.error, "cannot start a process: Resource temporarily unavailable (temporary: retrying later)");

	outcome_unstarted_temporary("x", START_RETRIES - 2, &o);
	CHECK(o.outcome == OUT_RETRY);
	outcome_unstarted_temporary("x", START_RETRIES - 1, &o);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(!o.tempfail);
	CHECK_STR(o.error, "x (temporary, but 20 attempts were temporary failures: giving up)");

	/* "é" is two bytes: cut where it may, the text stays whole
	 * characters and ends with the verdict. */
	for (int i = 0; i + 1 < (int)sizeof(longer); i += 2)
		memcpy(longer + i, "\xC3\xA9", 2);
	longer[sizeof(longer) - 1] = '\0';
	outcome_unstarted_temporary(longer, 0, &o);
	CHECK(strlen(o.error) < sizeof(o.error));
	CHECK(strstr(o.error, " (temporary: retrying later)") != NULL);
	CHECK(((unsigned char)o.error[strlen(o.error) - strlen(" (temporary: retrying later)") - 1]) == 0xA9);
	longer[0] = 'x'; /* a stray continuation byte follows: "?" */
	outcome_unstarted(longer, &o);
	CHECK(strlen(o.error) == sizeof(o.error) - 2 || strlen(o.error) == sizeof(o.error) - 1);
	CHECK(((unsigned char)o.error[strlen(o.error) - 1]) == 0xA9);
}

/* The attempt's cost: wait4's rusage in, microseconds and bytes out,
 * whatever the end; unknown without a reaped process. */
static void test_cost(void)
{
	struct rusage ru;
	struct outcome_out o;
	struct outcome_in i;

	memset(&ru, 0, sizeof(ru));
	ru.ru_utime.tv_sec = 2;
	ru.ru_utime.tv_usec = 345678;
	ru.ru_stime.tv_sec = 0;
	ru.ru_stime.tv_usec = 9;
	ru.ru_maxrss = 65536; /* KiB */
	i = in(END_NONE, EXITED(0), 1, 0, 3);
	i.rusage = &ru;
	o = decide(i);
	CHECK(o.outcome == OUT_SUCCEEDED);
	CHECK(o.cost.known);
	CHECK(o.cost.user_us == 2345678);
	CHECK(o.cost.sys_us == 9);
	CHECK(o.cost.max_rss == 64ULL << 20);

	/* Bytes and microseconds beyond 32 bits. */
	ru.ru_maxrss = 5L << 20;
	ru.ru_utime.tv_sec = 5000;
	ru.ru_utime.tv_usec = 999999;
	i = in(END_TIMEOUT, KILLED(SIGKILL), 3, 0, 3);
	i.rusage = &ru;
	o = decide(i);
	CHECK(o.outcome == OUT_FAILED);
	CHECK(o.cost.known);
	CHECK(o.cost.user_us == 5000999999ULL);
	CHECK(o.cost.max_rss == 5ULL << 30);

	/* A lost lease or a shutdown still carries it; store.c decides what
	 * is written. */
	i = in(END_SHUTDOWN, KILLED(SIGTERM), 1, 0, 3);
	i.rusage = &ru;
	o = decide(i);
	CHECK(o.cost.known);

	/* No rusage: unknown, all zero. */
	o = decide(in(END_NONE, EXITED(1), 1, 0, 3));
	CHECK(!o.cost.known);
	CHECK(o.cost.user_us == 0 && o.cost.sys_us == 0 && o.cost.max_rss == 0);

	/* Never started: unknown. */
	memset(&o, 0x5a, sizeof(o));
	outcome_unstarted("cannot execute x: not found", &o);
	CHECK(!o.cost.known);
	memset(&o, 0x5a, sizeof(o));
	CHECK(outcome_exhausted(4, 0, 3, &o));
	CHECK(!o.cost.known);
}

/* What the job said last follows a bare exit code, and nothing else. */
static void test_said(void)
{
	struct outcome_out o;
	struct outcome_in i;
	char long_said[400];

	i = in(END_NONE, EXITED(3), 1, 0, 1);
	i.n_permanent_codes = 0;
	i.said = "bad thing";
	o = decide(i);
	CHECK(o.outcome == OUT_FAILED);
	CHECK_STR(o.error, "exit code 3: bad thing");
	i = in(END_NONE, EXITED(2), 1, 0, 3);
	i.said = "try again";
	o = decide(i);
	CHECK(o.outcome == OUT_RETRY);
	CHECK_STR(o.error, "exit code 2: try again");
	i = in(END_NONE, EXITED(2), 3, 0, 3);
	i.said = "still bad";
	CHECK_STR(decide(i).error, "exit code 2 (attempt 3 of 3): still bad");
	i = in(END_NONE, EXITED(3), 1, 0, 3); /* 3 is permanent here */
	i.said = "no such account";
	CHECK_STR(decide(i).error, "exit code 3 (permanent: not retried): no such account");
	/* Nothing said, or said empty: as before. */
	i.said = "";
	CHECK_STR(decide(i).error, "exit code 3 (permanent: not retried)");
	/* Not after an error that says more already. */
	i.said = "x";
	i.wstatus = EXITED(0);
	o = decide(i);
	CHECK(o.outcome == OUT_SUCCEEDED);
	CHECK_STR(o.error, "");
	i.wstatus = EXITED(127);
	CHECK_STR(decide(i).error, "command not found (exit 127)");
	i.wstatus = EXITED(126);
	CHECK_STR(decide(i).error, "command not executable (exit 126)");
	i.wstatus = EXITED(75);
	CHECK_STR(decide(i).error, "temporary failure (exit 75): retrying later");
	i.wstatus = KILLED(SIGKILL);
	CHECK_STR(decide(i).error, "killed by signal 9 (SIGKILL)");
	i.wstatus = EXITED(2);
	i.reason = END_TIMEOUT;
	CHECK_STR(decide(i).error, "timed out after 30 s");
	i.reason = END_CANCEL;
	CHECK_STR(decide(i).error, "cancelled while running; process group terminated");
	/* Bounded, cut on a character. */
	for (size_t k = 0; k + 2 < sizeof(long_said); k += 2)
		memcpy(long_said + k, "\xc3\xa9", 2);
	long_said[sizeof(long_said) - 2] = 'z';
	long_said[sizeof(long_said) - 1] = '\0';
	i = in(END_NONE, EXITED(4), 1, 0, 1);
	i.said = long_said;
	o = decide(i);
	CHECK(strncmp(o.error, "exit code 4: \xc3\xa9", 15) == 0);
	CHECK(strlen(o.error) < sizeof(o.error));
	CHECK((strlen(o.error) - 13) % 2 == 0); /* "exit code 4: ", then whole characters */
	CHECK((unsigned char)o.error[strlen(o.error) - 1] == 0xa9);
}

int main(void)
{
	test_wait_encoding();
	test_none();
	test_counting();
	test_reasons();
	test_exhausted();
	test_unstarted();
	test_unstarted_temporary();
	test_cost();
	test_said();
	return check_done("outcome");
}
