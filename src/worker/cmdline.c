/* Whether a job's command line needs a shell at all, and its words when it
 * does not. See cmdline.h. */
#include "cmdline.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Words a shell handles itself when they come first: POSIX special and
 * regular builtins, those of dash 0.5.12 and bash 5.2 (compgen -b), and the
 * reserved words of both (compgen -k). Those made of characters that never
 * reach this table ("[", "{", "!", ...) stay listed, so that widening
 * plain_byte() cannot let them through. */
static const char *const shell_words[] = {
	/* POSIX special builtins */
	".",
	":",
	"break",
	"continue",
	"eval",
	"exec",
	"exit",
	"export",
	"readonly",
	"return",
	"set",
	"shift",
	"times",
	"trap",
	"unset",
	/* POSIX regular builtins ("intrinsic utilities") */
	"alias",
	"bg",
	"cd",
	"command",
	"false",
	"fc",
	"fg",
	"getopts",
	"hash",
	"jobs",
	"kill",
	"newgrp",
	"pwd",
	"read",
	"true",
	"type",
	"ulimit",
	"umask",
	"unalias",
	"wait",
	/* dash */
	"[",
	"chdir",
	"echo",
	"local",
	"printf",
	"test",
	/* bash */
	"bind",
	"builtin",
	"caller",
	"compgen",
	"complete",
	"compopt",
	"declare",
	"dirs",
	"disown",
	"enable",
	"help",
	"history",
	"let",
	"logout",
	"mapfile",
	"popd",
	"pushd",
	"readarray",
	"shopt",
	"source",
	"suspend",
	"typeset",
	/* reserved words */
	"!",
	"{",
	"}",
	"case",
	"do",
	"done",
	"elif",
	"else",
	"esac",
	"fi",
	"for",
	"if",
	"in",
	"then",
	"until",
	"while",
	"[[",
	"]]",
	"coproc",
	"function",
	"select",
	"time",
};

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* A byte that means itself to every shell we know, wherever it stands
 * (the position rules for '=' and '%' are in cmdline_split). */
static bool plain_byte(unsigned char c)
{
	if (c >= 0x80)
		return true; /* shells treat bytes of other scripts as letters */
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	switch (c) {
	case '_':
	case '-':
	case '.':
	case '/':
	case ',':
	case ':':
	case '+':
	case '@':
	case '%':
	case '=':
		return true;
	default:
		return false;
	}
}

static bool is_shell_word(const char *w, size_t len)
{
	for (size_t i = 0; i < sizeof(shell_words) / sizeof(shell_words[0]); i++)
		if (strlen(shell_words[i]) == len && memcmp(shell_words[i], w, len) == 0)
			return true;
	return false;
}

/* Length of the word at s (up to the next blank or the end). */
static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && !is_blank((unsigned char)s[n]))
		n++;
	return n;
}

int cmdline_split(const char *line, char ***argv_out)
{
	const char *p, *first = NULL;
	size_t nwords = 0, first_len = 0, i;
	char **argv;

	*argv_out = NULL;
	/* First pass: judge the line, count its words. */
	for (p = line; *p;) {
		size_t len;

		if (is_blank((unsigned char)*p)) {
			p++;
			continue;
		}
		len = word_len(p);
		for (i = 0; i < len; i++)
			if (!plain_byte((unsigned char)p[i]))
				return 0;
		if (p[0] == '=')
			return 0;
		if (nwords++ == 0) {
			first = p;
			first_len = len;
		}
		p += len;
	}
	if (nwords == 0)
		return 0;
	if (memchr(first, '=', first_len) || first[0] == '%' || is_shell_word(first, first_len))
		return 0;

	argv = xcalloc(nwords + 1, sizeof(char *));
	for (p = line, i = 0; *p;) {
		size_t len;

		if (is_blank((unsigned char)*p)) {
			p++;
			continue;
		}
		len = word_len(p);
		argv[i] = xmalloc(len + 1);
		memcpy(argv[i], p, len);
		argv[i][len] = '\0';
		i++;
		p += len;
	}
	*argv_out = argv;
	return 1;
}
