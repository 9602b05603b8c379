# shellcheck shell=bash
# kyu_commands: print the commands that `kyu --help` lists, one a line
# ("submit", "schedule add", "schema status", ...), sorted. The help text
# is kyu's command table: a command added there is found here, and the
# tests that walk every command (cli/doc_commands, cli/exit_status) cover
# it. Sourced by those tests, after tests/lib.sh.
kyu_commands() {
	# Command lines are indented by two spaces, their description set off
	# by two more; a command is its leading words of lower-case letters
	# and '-', alternatives split on '|'.
	"$KYU" --help | sed -n 's/^  \([a-z]\)/\1/p' | sed 's/  .*//; s/ | /\n/g' |
		awk '{ w = ""; for (i = 1; i <= NF && $i ~ /^[a-z][a-z|-]*$/; i++) w = w (w ? " " : "") $i; if (w) print w }' |
		awk '{ n = split($NF, alt, "|"); for (i = 1; i <= n; i++) { $NF = alt[i]; print } }' | sort -u
}
