#!/usr/bin/env bash
# Every command that `kyu --help` lists is described in man/kyu.1 (an .It Cm
# line naming it; for "schedule enable|disable" and the like, each word),
# and answers `kyu COMMAND --help` with status 0 and its usage on stdout.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

# shellcheck source=tests/lib/commands.sh
. "$KYU_SRC/tests/lib/commands.sh"
mapfile -t cmds < <(kyu_commands)
[ "${#cmds[@]}" -ge 20 ] || fail "only ${#cmds[@]} commands read from kyu --help: ${cmds[*]}"
missing=()
for c in "${cmds[@]}"; do
	first=${c%% *}
	rest=${c#"$first"}
	found=0
	while read -r line; do
		[ -z "$rest" ] && { found=1; break; }
		[[ " $line " == *" ${rest# } "* ]] && { found=1; break; }
	done < <(grep -E "^\.It Cm $first( |$)" "$KYU_SRC/man/kyu.1")
	[ $found = 1 ] || missing+=("$c")
done
[ "${#missing[@]}" = 0 ] || fail "in kyu --help but not in man/kyu.1: $(printf "'%s' " "${missing[@]}")"
for c in "${cmds[@]}"; do
	rc=0
	# shellcheck disable=SC2086
	"$KYU" -c "$T_DIR/none.ini" $c --help >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 0 "$rc" "kyu $c --help (stderr: $(cat "$T_DIR/err"))"
	grep -qF -- "${c##* }" "$T_DIR/out" || fail "kyu $c --help does not show its usage: $(cat "$T_DIR/out")"
done
echo "checked ${#cmds[@]} commands: ${cmds[*]}"
