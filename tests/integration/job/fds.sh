#!/usr/bin/env bash
# A job inherits descriptors 0, 1 and 2, 3, its status channel (a pipe:
# kyu_jobs(7), "The status channel"), and 4, its end of the worker's life
# line (a pipe: kyud(8), "When kyud dies"), only: not the worker's control
# socket (fd 3 in the worker), nor its authenticated database connection, nor anything
# else of kyud's; also where close_range(2) fails (kernels before 5.9,
# seccomp profiles), shown by running kyud with it denied (issue 25,
# item 8).
. "$KYU_SRC/tests/lib.sh"

# fds ROW: the job's descriptors other than 0-2 and the directory ls
# reads to list them, as "FD -> TARGET" (pipes as "pipe"): its status
# channel and its life line only.
check_fds() {
	local out
	out=$(root_sql -N -B -r -D "$T_DB" -e "SELECT output FROM kyu_jobs WHERE id = '$1'")
	[[ $out == *" 0 -> "* ]] || fail "$1: no listing of the job's descriptors: $out"
	assert_eq "3 -> pipe; 4 -> pipe; " "$(awk '/ -> / && $(NF-2) > 2 && $NF !~ /^\/proc\/[0-9]+\/fd$/ { t = $NF; sub(/:\[[0-9]+\]$/, "", t); printf "%s -> %s; ", $(NF-2), t }' <<<"$out")" \
		"$1: descriptors the job inherited"
}

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, argv) VALUES ('plain', '[\"/bin/ls\", \"-l\", \"/proc/self/fd\"]');
     INSERT INTO kyu_jobs (id, command) VALUES ('shell', 'ls -l /proc/self/fd; true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2 30
check_fds plain
check_fds shell
stop_kyud

[ -n "${KYU_DENY_CLOSE_RANGE:-}" ] || fail "KYU_DENY_CLOSE_RANGE is not set (run through ctest)"
"$KYU_DENY_CLOSE_RANGE" /bin/true || { echo "SKIP: cannot deny close_range here"; exit 77; }
wrapper=$T_DIR/kyud-no-close-range
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$KYU_DENY_CLOSE_RANGE" "$KYUD" >"$wrapper"
chmod +x "$wrapper"
KYUD=$wrapper
start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, argv) VALUES ('denied', '[\"/bin/ls\", \"-l\", \"/proc/self/fd\"]')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'denied'" succeeded 30
check_fds denied
stop_kyud
