/* text.c: UTF-8 names, and the escaping kyu uses for what rows hold. */
#include <string.h>

#include "common/text.h"
#include "common/utf8.h"
#include "check.h"

static const char *esc(const char *s, size_t len, enum escape e)
{
	static struct strbuf sb;

	sb_reset(&sb);
	text_escape(&sb, s, len, e);
	sb_add(&sb, "", 0);
	return sb.buf;
}

#define ESC(lit, e) esc(lit, sizeof(lit) - 1, e)

int main(void)
{
	/* UTF-8 as utf8mb4 stores it. */
	CHECK(utf8_char_len("a", 1) == 1);
	CHECK(utf8_char_len("\xc3\xa9", 2) == 2);
	CHECK(utf8_char_len("\xc3\xa9", 1) == 0);
	CHECK(utf8_char_len("\xe2\x82\xac", 3) == 3);
	CHECK(utf8_char_len("\xf0\x9f\x98\x80", 4) == 4);
	CHECK(utf8_char_len("\xc0\xaf", 2) == 0);         /* overlong '/' */
	CHECK(utf8_char_len("\xe0\x80\xaf", 3) == 0);     /* overlong */
	CHECK(utf8_char_len("\xed\xa0\x80", 3) == 0);     /* surrogate */
	CHECK(utf8_char_len("\xf4\x90\x80\x80", 4) == 0); /* past U+10FFFF */
	CHECK(utf8_char_len("\x80", 1) == 0);
	CHECK(utf8_char_len("\xe9t", 2) == 0);            /* latin-1 */

	CHECK(text_name_chars("mail") == 4);
	CHECK(text_name_chars("caf\xc3\xa9") == 4);
	CHECK(text_name_chars("") == 0);
	CHECK(text_name_chars("caf\xe9") == -1);
	CHECK(text_name_chars("a\tb") == -1);
	CHECK(text_name_chars("\x1b[31m") == -1);
	CHECK(text_name_chars("a\x7f") == -1);
	CHECK(text_name_chars("\xc2\x9b" "31m") == -1); /* C1 CSI */
	CHECK(text_name_chars("\xc2\xa0") == 1);        /* NBSP: not a control */

	/* Fields: one row stays one row; backslash too, so that the text
	 * reads back unambiguously. The rest passes as it is. */
	CHECK_STR(ESC("a\tb\nc\\d", ESCAPE_FIELD), "a\\tb\\nc\\\\d");
	CHECK_STR(ESC("x\0y", ESCAPE_FIELD), "x\\0y");
	CHECK_STR(ESC("\x1b[2J\r\xe9", ESCAPE_FIELD), "\x1b[2J\r\xe9");
	CHECK_STR(ESC("caf\xc3\xa9", ESCAPE_FIELD), "caf\xc3\xa9");

	/* A terminal: nothing it would act on. */
	CHECK_STR(ESC("\x1b]0;owned\x07\x1b[2J", ESCAPE_TERMINAL), "\\e]0;owned\\x07\\e[2J");
	CHECK_STR(ESC("a\tb\nc\r\\", ESCAPE_TERMINAL), "a\\tb\\nc\\r\\\\");
	CHECK_STR(ESC("\x7f\x01", ESCAPE_TERMINAL), "\\x7f\\x01");
	CHECK_STR(ESC("\xc2\x9b" "2J", ESCAPE_TERMINAL), "\\xc2\\x9b2J");
	CHECK_STR(ESC("caf\xe9!", ESCAPE_TERMINAL), "caf\\xe9!");
	CHECK_STR(ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", ESCAPE_TERMINAL),
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* A character cut at the end of the value, and a lone continuation
	 * byte: each byte on its own. */
	CHECK_STR(ESC("ab\xe2\x82", ESCAPE_TERMINAL), "ab\\xe2\\x82");
	CHECK_STR(ESC("\x80z", ESCAPE_TERMINAL), "\\x80z");
	CHECK_STR(ESC("", ESCAPE_TERMINAL), "");
	return check_done("text");
}
