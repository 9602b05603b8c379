#!/usr/bin/env bash
# What a left-behind process says about itself does not keep it alive
# (issue 25, item 10): a job double-forks a process that takes another,
# running job's KYU_JOB_ID and KYU_ATTEMPT and makes its own session; it is
# killed when its own job ends. A daemon of that other job, started before
# the forging job, is kept while its job runs, and killed when it ends.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, command) VALUES ('long', '
  ( (setsid sleep 300 & echo \$! > $T_DIR/daemon.pid) & )
  while [ ! -e $T_DIR/stop ]; do sleep 0.1; done
  exit 0')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" running 30
for _ in $(seq 300); do [ -s "$T_DIR/daemon.pid" ] && break; sleep 0.1; done
[ -s "$T_DIR/daemon.pid" ] || fail "the long job did not write daemon.pid"
daemon=$(cat "$T_DIR/daemon.pid")
# Its start must be a clock tick (10 ms) before the forging job's.
sleep 0.2

sql "INSERT INTO kyu_jobs (id, command) VALUES ('forger', '
  ( export KYU_JOB_ID=long KYU_ATTEMPT=1; (setsid sleep 300 & echo \$! > $T_DIR/forged.pid) & )
  while [ ! -s $T_DIR/forged.pid ]; do sleep 0.05; done
  exit 0')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'forger'" succeeded 30
forged=$(cat "$T_DIR/forged.pid")
for _ in $(seq 100); do pid_alive "$forged" || break; sleep 0.1; done
pid_alive "$forged" && fail "the process claiming to be job long's ($forged: $(ps -o args= -p "$forged")) outlived its own job"
pid_alive "$daemon" || fail "the long job's daemon ($daemon) was killed while its job runs"
assert_eq running "$(sql "SELECT status FROM kyu_jobs WHERE id = 'long'")" "the long job"

touch "$T_DIR/stop"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" succeeded 30
for _ in $(seq 100); do pid_alive "$daemon" || break; sleep 0.1; done
pid_alive "$daemon" && fail "the long job's daemon ($daemon) outlived its job"
stop_kyud
