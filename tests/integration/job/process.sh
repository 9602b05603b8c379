#!/usr/bin/env bash
# How a job is started: /bin/sh -c in its own process group, stdin from
# /dev/null, no descriptors inherited from kyud but its status channel (3)
# and its end of the worker's life line (4), no blocked or ignored
# signals. The job records what it sees under $T_DIR.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1
# fds: ls itself holds 0, 1, 2, the status channel (3), the life line (4)
# and the directory it reads (5).
sql "INSERT INTO kyu_jobs (id, command) VALUES ('proc', '
  readlink /proc/\$\$/fd/0 > $T_DIR/stdin
  echo \$\$ \$(ps -o pgid= -p \$\$) > $T_DIR/pgid
  ls /proc/self/fd > $T_DIR/fds
  grep -E \"^Sig(Blk|Ign):\" /proc/self/status > $T_DIR/signals
  cat > $T_DIR/input
')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'proc'" succeeded 30
stop_kyud

assert_eq /dev/null "$(cat "$T_DIR/stdin")" "the job's stdin"
read -r shell_pid pgid <"$T_DIR/pgid"
assert_eq "$shell_pid" "$pgid" "the job's process group (its shell leads its own)"
assert_eq "0 1 2 3 4 5" "$(sort -n "$T_DIR/fds" | tr '\n' ' ' | sed 's/ $//')" \
	"descriptors open in the job (anything beyond 0-4 leaked from kyud)"
assert_eq "SigBlk:	0000000000000000" "$(grep SigBlk "$T_DIR/signals")" "blocked signals in the job"
# Signals 32 and 33 belong to glibc's threads; its posix_spawn leaves them
# ignored in the child on purpose, and a glibc program re-arms them itself.
ignored=$(awk '/^SigIgn:/ { print $2 }' "$T_DIR/signals")
assert_eq 0 $((0x$ignored & ~0x180000000)) "ignored signals in the job (mask 0x$ignored)"
