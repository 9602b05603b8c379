# shellcheck shell=bash
# A private mariadbd whose clock the test steps at run time, as an NTP step
# after a VM resume or a manual fix would (issue 44.2). Sourced by the clock
# tests themselves, after tests/lib.sh.
#
# The server runs under libfaketime (Debian's faketime package): its wall
# clock (time, gettimeofday, CLOCK_REALTIME) reads the host's plus the
# offset in $CLOCK_FILE, read again at most once a second
# (FAKETIME_CACHE_DURATION; FAKETIME_NO_CACHE would read the file at every
# clock call of every thread). Its monotonic clock is left alone
# (FAKETIME_DONT_FAKE_MONOTONIC), as a real step leaves it. kyud and the
# jobs run with the host's clock, as they would beside a stepped server.
#
#   clock_db_start [OPTION...]  private_db_start under libfaketime (offset +0)
#   clock_set OFFSET            e.g. +3600, -3600, +0: the server's clock
#                               reads the host's plus OFFSET seconds; returns
#                               once the server says so

CLOCK_FILE=
CLOCK_LIB=

clock_db_start() {
	local f
	for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
		[ -f "$f" ] && { CLOCK_LIB=$f; break; }
	done
	if [ -z "$CLOCK_LIB" ]; then
		echo "SKIP: $T_NAME: libfaketime not found (apt-get install faketime)"
		exit 77
	fi
	CLOCK_FILE=$T_DIR/faketime.rc
	echo "+0" >"$CLOCK_FILE"
	# Exported for the duration of the call only: the server (and the
	# clients sandbox-db runs beside it, with the offset still 0).
	LD_PRELOAD=$CLOCK_LIB FAKETIME_TIMESTAMP_FILE=$CLOCK_FILE FAKETIME_CACHE_DURATION=1 \
		FAKETIME_DONT_FAKE_MONOTONIC=1 private_db_start "$@"
	clock_wait 0
}

# clock_wait SECONDS: until the server's clock reads the host's plus
# SECONDS (within 2 s).
clock_wait() {
	local deadline=$(($(date +%s) + 30 * KYU_TIME_SCALE)) d
	while :; do
		d=$(($(root_sql -N -e "SELECT UNIX_TIMESTAMP()") - $(date +%s)))
		[ $((d - $1)) -ge -2 ] && [ $((d - $1)) -le 2 ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "clock_wait: the server's clock is $d s off the host's, not $1 s"
		sleep 0.2
	done
}

clock_set() {
	[ -n "$CLOCK_FILE" ] || fail "clock_set: no clock_db_start"
	echo "$1" >"$CLOCK_FILE"
	clock_wait "${1#+}"
}
