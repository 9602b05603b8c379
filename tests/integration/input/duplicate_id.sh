#!/usr/bin/env bash
# id is the at-most-once submission key: a second INSERT of an id fails with
# ER_DUP_ENTRY (1062) while the row exists, waiting or finished; INSERT
# IGNORE is the silent, idempotent form.
. "$KYU_SRC/tests/lib.sh"

# insert_dup ID: a plain INSERT of an existing id must fail with 1062.
insert_dup() {
	local out
	if out=$(sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'touch $T_DIR/second')" 2>&1); then
		fail "second INSERT of id '$1' succeeded"
	fi
	case $out in
	*"ERROR 1062"*) ;;
	*) fail "second INSERT of id '$1' failed, but not with ER_DUP_ENTRY 1062: $out" ;;
	esac
}

# While waiting (no kyud yet).
sql "INSERT INTO kyu_jobs (id, command) VALUES ('dup-1', 'touch $T_DIR/first')"
insert_dup dup-1
out=$(sql "INSERT IGNORE INTO kyu_jobs (id, command) VALUES ('dup-1', 'touch $T_DIR/second')" 2>&1) ||
	fail "INSERT IGNORE of an existing id failed: $out"
assert_eq "" "$out" "output of INSERT IGNORE"
assert_eq "1	touch $T_DIR/first" "$(sql "SELECT COUNT(*), MIN(command) FROM kyu_jobs WHERE id = 'dup-1'")" \
	"rows with id dup-1 after the duplicates"

# After it has run and finished (well within the retention time).
start_kyud
wait_for "SELECT status FROM kyu_jobs WHERE id = 'dup-1'" succeeded 30
insert_dup dup-1
sql "INSERT IGNORE INTO kyu_jobs (id, command) VALUES ('dup-1', 'touch $T_DIR/second')"
sleep 2 # two poll intervals: a second job, had one been accepted, would have run
stop_kyud
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows in the table"
[ -e "$T_DIR/first" ] || fail "the first job did not run"
[ ! -e "$T_DIR/second" ] || fail "a duplicate submission ran"
