/* The status channel's lines (worker/status.h): what each line does to
 * the progress, note and result, lines split across reads, malformed
 * lines counted with the first one's reason, and the bound on a line,
 * whatever the job writes. */
#include <string.h>

#include "worker/status.h"
#include "check.h"

static void add(struct status_chan *s, const char *text)
{
	status_add(s, text, strlen(text));
}

static void test_progress(void)
{
	struct status_chan s;
	char msg[256];

	status_init(&s, 100);
	CHECK(!status_used(&s));
	CHECK(s.progress == -1);
	add(&s, "progress 5 start");
	CHECK(s.progress == -1); /* not a line until its '\n' */
	add(&s, "ing\nprogress 100\r\n");
	CHECK(s.progress == 100);
	CHECK(!s.has_note);
	CHECK(s.gen == 2);
	add(&s, "progress 0 \xc3\xa9t\xc3\xa9\n");
	CHECK(s.progress == 0);
	CHECK(s.has_note);
	CHECK_STR(s.note, "\xc3\xa9t\xc3\xa9");
	CHECK(status_used(&s));
	CHECK(s.bad == 0);
	status_bad_message(&s, msg, sizeof(msg));
	CHECK_STR(msg, "");
	/* An empty note is none (NULL in the row). */
	add(&s, "progress 7 \n");
	CHECK(s.progress == 7 && !s.has_note);
	/* A last line without its '\n' counts at the end. */
	add(&s, "progress 9 end");
	status_end(&s);
	CHECK(s.progress == 9);
	CHECK_STR(s.note, "end");
	status_free(&s);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"progress 101\n", "progress -1\n", "progress\n", "progress \n", "progress 5x\n",
		"progress 0050\n", "progress 1 \xff\n", "Progress 5\n", "results {}\n", "hello\n",
	};
	struct status_chan s;
	char note[300], msg[300];

	status_init(&s, 100);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		add(&s, bad[i]);
	memset(note, 'n', sizeof(note));
	memcpy(note, "progress 1 ", 11);
	note[11 + 256] = '\n';
	status_add(&s, note, 11 + 257); /* a note of 256 bytes */
	add(&s, "\n\r\n"); /* blank lines: not counted */
	CHECK(s.progress == -1);
	CHECK(s.bad == 11);
	CHECK(status_used(&s));
	status_bad_message(&s, msg, sizeof(msg));
	CHECK_STR(msg, "kyu: 11 malformed lines on KYU_STATUS_FD ignored; the first: progress is not an "
		       "integer from 0 to 100: '101'");
	status_free(&s);

	/* The first one's text is quoted cut, as valid UTF-8, control
	 * characters shown as '?'. */
	status_init(&s, 100);
	add(&s, "verb\x01\xc3\xa9\xff and more\n");
	status_bad_message(&s, msg, sizeof(msg));
	CHECK_STR(msg, "kyu: 1 malformed line on KYU_STATUS_FD ignored; the first: unknown verb "
		       "'verb?\xc3\xa9?'");
	status_free(&s);
}

static void test_result(void)
{
	struct status_chan s;
	char big[400];

	status_init(&s, 100);
	add(&s, "result {\"a\": 1}\nresult [1,");
	CHECK(s.has_result);
	CHECK(s.result.len == 8 && memcmp(s.result.buf, "{\"a\": 1}", 8) == 0);
	add(&s, "2]\n");
	CHECK(s.result.len == 5 && memcmp(s.result.buf, "[1,2]", 5) == 0);
	/* Not checked here (the server checks JSON): kept as written. */
	add(&s, "result not json\n");
	CHECK(s.result.len == 8 && memcmp(s.result.buf, "not json", 8) == 0);
	add(&s, "result\n");
	CHECK(s.has_result && s.result.len == 0);
	CHECK(s.gen == 0); /* results are not progress: no live write */
	CHECK(s.bad == 0);
	/* The bound: "result " and result_max bytes; a longer line is
	 * dropped to its end, whatever the reads, and counted once; the
	 * result before it stays. */
	add(&s, "result [\"kept\"]\n");
	CHECK(status_line_max(&s) == 7 + 100 || status_line_max(&s) == 13 + 255);
	memset(big, 'x', sizeof(big));
	memcpy(big, "result ", 7);
	for (int i = 0; i < 4; i++)
		status_add(&s, big, sizeof(big));
	add(&s, "tail of it\nprogress 4\n");
	CHECK(s.bad == 1);
	CHECK(s.progress == 4);
	CHECK(s.result.len == 8 && memcmp(s.result.buf, "[\"kept\"]", 8) == 0);
	CHECK(s.line.cap <= 2 * status_line_max(&s) + 64);
	status_free(&s);

	/* result_max 0: no result line fits beside a progress line's bound. */
	status_init(&s, 1000);
	CHECK(status_line_max(&s) == 1007);
	status_free(&s);
}

int main(void)
{
	test_progress();
	test_malformed();
	test_result();
	return check_done("status");
}
