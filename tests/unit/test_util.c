#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "check.h"

/* The wait status of a real child that ends as told. */
static int status_of(int code, int sig)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (sig) {
			/* No core file: only the flag is of interest, and only
			 * when the system would write one anyway. */
			signal(sig, SIG_DFL);
			raise(sig);
		}
		_exit(code);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

int main(void)
{
	char buf[96];
	bool b = false;

	describe_wait_status(status_of(3, 0), buf, sizeof(buf));
	CHECK_STR(buf, "exited with status 3");
	describe_wait_status(status_of(0, 0), buf, sizeof(buf));
	CHECK_STR(buf, "exited with status 0");
	describe_wait_status(status_of(0, SIGKILL), buf, sizeof(buf));
	CHECK_STR(buf, "killed by signal 9 (SIGKILL)");
	describe_wait_status(status_of(0, SIGTERM), buf, sizeof(buf));
	CHECK_STR(buf, "killed by signal 15 (SIGTERM)");
	/* Built by hand: whether a real crash dumps core depends on limits. */
	describe_wait_status(SIGSEGV | WCOREFLAG, buf, sizeof(buf));
	CHECK_STR(buf, "killed by signal 11 (SIGSEGV) (core dumped)");
	/* Short buffers are cut, never overrun. */
	describe_wait_status(status_of(0, SIGKILL), buf, 10);
	CHECK_STR(buf, "killed by");

	CHECK(parse_bool("Yes", &b) == 0 && b);
	CHECK(parse_bool("off", &b) == 0 && !b);
	CHECK(parse_bool("0", &b) == 0 && !b);
	CHECK(parse_bool("", &b) < 0);
	CHECK(parse_bool("yess", &b) < 0);

	/* The statements' numbers, as printf would print them. */
	{
		struct strbuf sb = { 0 };
		char big[300];
		sb_addu64(&sb, 0);
		sb_adds(&sb, " ");
		sb_addu64(&sb, UINT64_MAX);
		sb_adds(&sb, " ");
		sb_addi64(&sb, INT64_MIN);
		sb_adds(&sb, " ");
		sb_addi64(&sb, -7);
		sb_adds(&sb, " ");
		sb_addi64(&sb, 1234567890);
		CHECK_STR(sb.buf, "0 18446744073709551615 -9223372036854775808 -7 1234567890");
		CHECK(sb.len == strlen(sb.buf));
		/* sb_printf writes in place when it fits, again when not. */
		sb_reset(&sb);
		sb_printf(&sb, "%s=%" PRIu64, "a", (uint64_t)42);
		CHECK_STR(sb.buf, "a=42");
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		sb_printf(&sb, "[%s]", big);
		CHECK(sb.len == 4 + 2 + sizeof(big) - 1 && sb.buf[4] == '[' && sb.buf[sb.len - 1] == ']' &&
		      sb.buf[sb.len] == '\0');
		sb_free(&sb);
	}
	return check_done("util");
}
