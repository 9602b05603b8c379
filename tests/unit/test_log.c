#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "check.h"

/* Lines written to stderr while it is the file at path, after
 * log_detect_journal(). */
static void read_back(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

int main(void)
{
	char path[] = "/tmp/kyu-test-log.XXXXXX", value[64], buf[512];
	struct stat st;
	int fd, saved;

	/* What systemd writes, and stat -c %d:%i prints. */
	CHECK(log_journal_matches("64768:1234", 64768, 1234));
	CHECK(log_journal_matches("0:0", 0, 0));
	CHECK(log_journal_matches("18446744073709551615:1", 18446744073709551615ULL, 1));
	CHECK(!log_journal_matches("64768:1235", 64768, 1234));
	CHECK(!log_journal_matches("64769:1234", 64768, 1234));
	/* Anything else is not a match, whatever the numbers. */
	CHECK(!log_journal_matches(NULL, 0, 0));
	CHECK(!log_journal_matches("", 0, 0));
	CHECK(!log_journal_matches(":", 0, 0));
	CHECK(!log_journal_matches("0:", 0, 0));
	CHECK(!log_journal_matches(":0", 0, 0));
	CHECK(!log_journal_matches("64768:1234 ", 64768, 1234));
	CHECK(!log_journal_matches(" 64768:1234", 64768, 1234));
	CHECK(!log_journal_matches("64768:1234:1", 64768, 1234));
	CHECK(!log_journal_matches("+64768:1234", 64768, 1234));
	CHECK(!log_journal_matches("-1:1234", ~0ULL, 1234));
	CHECK(!log_journal_matches("0x10:1234", 16, 1234));
	CHECK(!log_journal_matches("18446744073709551616:1", 0, 1)); /* overflows */

	/* Through stderr: the prefix only when JOURNAL_STREAM names it. */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return check_done("log");
	saved = dup(STDERR_FILENO);
	CHECK(fstat(fd, &st) == 0);
	CHECK(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", value, 1);
	log_set_role("t");
	log_detect_journal();
	log_err("one");
	log_notice("two");
	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", value, 1);
	log_detect_journal();
	log_err("three");
	unsetenv("JOURNAL_STREAM");
	log_detect_journal();
	log_info("four");
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd);
	read_back(path, buf, sizeof(buf));
	unlink(path);
	CHECK_STR(buf, "<3>kyud[t]: one\n<5>kyud[t]: two\nkyud[t]: three\nkyud[t]: four\n");
	return check_done("log");
}
