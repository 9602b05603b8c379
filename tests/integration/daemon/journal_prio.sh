#!/usr/bin/env bash
# Journal priorities: when JOURNAL_STREAM names kyud's stderr (the
# "DEVICE:INODE" systemd sets), every line of the supervisor and of its
# workers (exec'd processes that decide again) starts with the syslog
# priority of its level, <7> debug to <3> error; with a JOURNAL_STREAM that
# names another file (inherited from a unit by a kyud started by hand with
# stderr elsewhere), lines are plain.
. "$KYU_SRC/tests/lib.sh"

# run_once ID: start, run job ID (a debug line), refuse one reload (an
# error line), stop.
run_once() {
	start_kyud kyud.workers=2
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'true')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" succeeded 30
	write_ini "$KYUD_INI" kyud.workers=2 kyud.no_such_key=1
	hup_verdict >/dev/null
	stop_kyud
}

lines_from() { tail -n +"$1" "$KYUD_LOG" | grep 'kyud\[' || true; }

# ---- stderr is the stream JOURNAL_STREAM names
JOURNAL_STREAM=$(stat -c '%d:%i' "$KYUD_LOG")
export JOURNAL_STREAM
run_once first
all=$(lines_from 1)
[ -n "$all" ] || fail "no log lines"
plain=$(printf '%s\n' "$all" | { grep -v '^<[3-7]>kyud\[' || true; } | sed -n 1,5p)
assert_eq "" "$plain" "lines without a priority prefix"
for want in \
	'^<6>kyud\[sup\]: starting [0-9]+ worker' \
	'^<5>kyud\[sup\]: ready: 2 workers, database connected$' \
	'^<3>kyud\[sup\]: reload failed, keeping old config: ' \
	'^<5>kyud\[sup\]: stopping$' \
	'^<7>kyud\[worker [12]\]: job first succeeded$' \
	'^<6>kyud\[worker 2\]: exiting: '; do
	printf '%s\n' "$all" | grep -E -- "$want" >/dev/null || fail "no line matching /$want/"
done

# ---- JOURNAL_STREAM names another file: plain lines
from=$(($(wc -l <"$KYUD_LOG") + 1))
other=$T_DIR/other
: >"$other"
JOURNAL_STREAM=$(stat -c '%d:%i' "$other")
run_once second
unset JOURNAL_STREAM
some=$(lines_from "$from")
[ -n "$some" ] || fail "no log lines in the second run"
prefixed=$(printf '%s\n' "$some" | { grep -v '^kyud\[' || true; } | sed -n 1,5p)
assert_eq "" "$prefixed" "lines that do not start with kyud[ although stderr is not the journal"
printf '%s\n' "$some" | grep -E '^kyud\[sup\]: reload failed' >/dev/null || fail "no plain error line"
