#!/bin/bash
# The job of the chaos tests (tests/integration/chaos/*.sh,
# lease/chaos_orphan_jobs.sh, lease/stopped_worker.sh): it leaves marks that
# tests/chaos/check.py reads, and detects a second attempt running while an
# earlier one still lives.
#
#     job.sh DIR MIN_MS MAX_MS [FIRST_MS]
#
# Appends to DIR/marks (O_APPEND: each short line is one atomic write):
#     S ID ATTEMPT EPOCH PID PPID     at its start (PPID: the kyud worker)
#     O ID ATTEMPT EPOCH PID PPID     when DIR/locks/ID was already locked,
#                                     i.e. another attempt's process group
#                                     was still alive: the job runs twice at once
#     E ID ATTEMPT EPOCH PID PPID     at its end
# then sleeps (on DIR/never, a FIFO, when there is one) MIN_MS..MAX_MS
# milliseconds (uniform), or FIRST_MS at the
# job's first start when FIRST_MS is given (a long first run, to be fenced,
# interrupted or orphaned; an interrupted attempt is not counted, so
# KYU_ATTEMPT cannot tell a first start: the lock file's absence does).
#
# The lock (flock(2) on fd 9, inherited by the sleep) is held by the kernel
# for as long as any process of the attempt lives, whatever killed the
# others, so "O" is liveness as the kernel sees it, not a guess from times.
d=$1 min=$2 max=$3 first=${4:-}
now() { t=${EPOCHREALTIME/,/.}; }
first_start=1
[ -e "$d/locks/$KYU_JOB_ID" ] && first_start=0
exec 9>>"$d/locks/$KYU_JOB_ID"
now
if flock -n 9; then
	echo "S $KYU_JOB_ID $KYU_ATTEMPT $t $$ $PPID" >>"$d/marks"
else
	echo "S $KYU_JOB_ID $KYU_ATTEMPT $t $$ $PPID" >>"$d/marks"
	echo "O $KYU_JOB_ID $KYU_ATTEMPT $t $$ $PPID" >>"$d/marks"
fi
if [ -n "$first" ] && [ "$first_start" = 1 ]; then
	ms=$first
else
	ms=$((min + RANDOM % (max - min + 1)))
fi
if [ "$ms" -gt 0 ]; then
	printf -v frac %03d $((ms % 1000))
	# Sleep without a fork: a read with a timeout on a FIFO nobody writes
	# (opened read-write, so the open does not wait for a writer). Each
	# exec costs ~1 ms of CPU or more here, and a chaos run starts
	# thousands of jobs on two cores.
	if [ -p "$d/never" ] && exec 8<>"$d/never"; then
		read -r -t "$((ms / 1000)).$frac" -u 8 _
	else
		sleep "$((ms / 1000)).$frac"
	fi
fi
now
echo "E $KYU_JOB_ID $KYU_ATTEMPT $t $$ $PPID" >>"$d/marks"
