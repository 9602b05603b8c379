#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "worker/cmdline.h"
#include "check.h"

/* One line and the path it must take: direct with these words, or the
 * shell (words[0] NULL). */
struct line_case {
	const char *line;
	const char *words[6];
};

static const struct line_case cases[] = {
	/* plain words: direct */
	{ "/srv/bin/report --day 2026-11-22", { "/srv/bin/report", "--day", "2026-11-22" } },
	{ "report", { "report" } },
	{ "convert /srv/in/42.png /srv/out/42.jpg", { "convert", "/srv/in/42.png", "/srv/out/42.jpg" } },
	{ "./script.sh arg", { "./script.sh", "arg" } },
	{ "/bin/true", { "/bin/true" } },
	{ "/usr/bin/echo hi", { "/usr/bin/echo", "hi" } }, /* a path is never a builtin */
	{ "trueish x", { "trueish", "x" } },
	{ "Echo x", { "Echo", "x" } },
	{ "env FOO=bar x", { "env", "FOO=bar", "x" } }, /* only a first word assigns */
	{ "cmd --opt=value a=", { "cmd", "--opt=value", "a=" } },
	{ "date +%Y-%m-%d", { "date", "+%Y-%m-%d" } },
	{ "rsync -a host:/src/ user@host:/dst/", { "rsync", "-a", "host:/src/", "user@host:/dst/" } },
	{ "cmd a,b c+d _e", { "cmd", "a,b", "c+d", "_e" } },
	/* blanks: leading, trailing, repeated, tabs */
	{ "  report   a  ", { "report", "a" } },
	{ "\treport\t\ta\t b", { "report", "a", "b" } },
	/* bytes >= 0x80 are letters, first word included */
	{ "/srv/bin/grüße café", { "/srv/bin/grüße", "café" } },
	{ "ünï \xff\xfe", { "ünï", "\xff\xfe" } },

	/* empty or blank: the shell, as before */
	{ "", { NULL } },
	{ "   ", { NULL } },
	{ "\t \t", { NULL } },
	/* quoting and escapes */
	{ "cmd 'a b'", { NULL } },
	{ "cmd \"a\"", { NULL } },
	{ "cmd a\\ b", { NULL } },
	/* expansions */
	{ "cmd $HOME", { NULL } },
	{ "cmd ${x}", { NULL } },
	{ "cmd `date`", { NULL } },
	{ "cmd ~/x", { NULL } },
	{ "cmd ~", { NULL } },
	{ "cmd a=~/x", { NULL } }, /* bash expands after '=' in any word */
	{ "cmd a{b,c}", { NULL } },
	{ "cmd }", { NULL } },
	/* redirections */
	{ "cmd < in", { NULL } },
	{ "cmd >out", { NULL } },
	{ "cmd 2>&1", { NULL } },
	/* pipes and separators */
	{ "a | b", { NULL } },
	{ "a &", { NULL } },
	{ "a; b", { NULL } },
	{ "a && b", { NULL } },
	/* globs */
	{ "cmd *.txt", { NULL } },
	{ "cmd ?", { NULL } },
	{ "cmd [ab]", { NULL } },
	{ "cmd a]", { NULL } },
	/* comments */
	{ "cmd # note", { NULL } },
	{ "cmd a#b", { NULL } },
	/* parentheses */
	{ "(cmd)", { NULL } },
	{ "cmd )", { NULL } },
	/* newlines and other control characters */
	{ "cmd\nother", { NULL } },
	{ "cmd a\n", { NULL } },
	{ "cmd\r", { NULL } },
	{ "cmd \x01", { NULL } },
	{ "cmd\va", { NULL } },
	/* assignments */
	{ "FOO=bar cmd", { NULL } },
	{ "a=b", { NULL } },
	{ "a-b=c cmd", { NULL } },
	/* what only some shells read: zsh's =cmd, bash's %job, ! and ^ */
	{ "=ls", { NULL } },
	{ "cmd =ls", { NULL } },
	{ "%1", { NULL } },
	{ "!", { NULL } },
	{ "cmd !x", { NULL } },
	{ "cmd ^x", { NULL } },
	/* builtins and reserved words, bare and with arguments */
	{ "true", { NULL } },
	{ "  true  ", { NULL } },
	{ "echo hi", { NULL } },
	{ "printf x", { NULL } },
	{ "kill 1", { NULL } },
	{ "test -f x", { NULL } },
	{ "exec foo", { NULL } },
	{ "time cmd", { NULL } },
	{ "if", { NULL } },
};

/* Every name a shell would not look up in PATH: POSIX, dash 0.5.12,
 * bash 5.2 (compgen -b, compgen -k). Kept apart from the list in
 * cmdline.c on purpose. */
static const char *const shell_names[] = {
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "chdir",
	"command", "compgen", "complete", "compopt", "continue", "declare", "dirs", "disown",
	"echo", "enable", "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts",
	"hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile",
	"newgrp", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return",
	"set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type",
	"typeset", "ulimit", "umask", "unalias", "unset", "wait",
	"!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi",
	"for", "function", "if", "in", "select", "then", "time", "until", "while",
};

static void check_case(const struct line_case *c)
{
	static char *unset[] = { NULL };
	char **argv = unset; /* must be overwritten either way */
	int r = cmdline_split(c->line, &argv);
	size_t i;

	if (!c->words[0]) {
		CHECK(r == 0 && argv == NULL);
		if (r != 0)
			fprintf(stderr, "  line \"%s\" should need the shell\n", c->line);
		strv_free(r ? argv : NULL);
		return;
	}
	CHECK(r == 1 && argv != NULL);
	if (r != 1 || !argv) {
		fprintf(stderr, "  line \"%s\" should run directly\n", c->line);
		return;
	}
	for (i = 0; c->words[i]; i++) {
		CHECK_STR(argv[i], c->words[i]);
		if (!argv[i])
			break;
	}
	CHECK(argv[i] == NULL);
	if (argv[i])
		fprintf(stderr, "  line \"%s\": extra word \"%s\"\n", c->line, argv[i]);
	strv_free(argv);
}

static void check_needs_shell(const char *line)
{
	struct line_case c = { .line = line };

	check_case(&c);
}

int main(void)
{
	char line[64];
	char **argv;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	for (size_t i = 0; i < sizeof(shell_names) / sizeof(shell_names[0]); i++) {
		check_needs_shell(shell_names[i]);
		snprintf(line, sizeof(line), "\t%s arg", shell_names[i]);
		check_needs_shell(line);
	}
	/* Only the first word counts: a builtin's name as an argument is plain. */
	CHECK(cmdline_split("/usr/bin/nice true", &argv) == 1);
	CHECK_STR(argv[1], "true");
	strv_free(argv);
	strv_free(NULL);
	return check_done("cmdline");
}
