#!/usr/bin/env bash
# Nothing a job started outlives it: once the job's shell exits 0, all of
# these are killed: its background child (same process group); a grandchild
# that made its own session (setsid: out of the group's reach) and was
# re-parented to the worker (the subreaper); a classic double-forked daemon;
# and a setsid'd shell still waiting for a child of its own, so that the
# child is only orphaned once the shell is killed.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, command) VALUES ('forker', '
  sleep 300 & echo \$! > $T_DIR/bg.pid
  (setsid sleep 300 & echo \$! > $T_DIR/setsid.pid)
  ( (setsid sleep 300 & echo \$! > $T_DIR/daemon.pid) & )
  setsid sh -c ''sleep 300 & echo \$! > $T_DIR/tree-child.pid; wait'' & echo \$! > $T_DIR/tree.pid
  for f in setsid daemon tree-child; do
    while [ ! -s $T_DIR/\$f.pid ]; do sleep 0.05; done
  done
  echo started; exit 0')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'forker'" succeeded 30
assert_eq "0	1" "$(sql "SELECT exit_code, output = 'started\\n' FROM kyu_jobs WHERE id = 'forker'")" \
	"exit_code, output = 'started\\n'"

names="bg setsid daemon tree tree-child"
for f in $names; do
	[ -s "$T_DIR/$f.pid" ] || fail "the job did not write $f.pid"
done
# The kill follows the job's end at once; allow a little for the reaping.
for _ in $(seq 300); do
	left=
	for f in $names; do
		p=$(cat "$T_DIR/$f.pid")
		pid_alive "$p" && left="$left $f=$p($(ps -o args= -p "$p"))"
	done
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "processes started by the finished job still running:$left"
assert_log_contains 'killed [0-9]+ process\(es\) left behind by finished jobs'
stop_kyud
