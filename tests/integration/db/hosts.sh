#!/usr/bin/env bash
# [database] host as a list, and [database] replica for kyu's reads.
#
# Two servers: a private mariadbd is the primary (kyud and writes), the
# shared test server stands in for a replica. It is no replica (nothing
# replicates between them): each holds a job the other lacks, so where a
# command read or wrote shows in its output, which is what is asserted.
#  - kyud with host = "a port nobody listens on, the primary": skips the
#    first, logs which server it uses, and runs a job there;
#  - kyu with the same list submits to the primary;
#  - kyu list/show/stats with replica = the shared server read there, and
#    write commands (submit, cancel) still go to the primary;
#  - replica = a dead port: kyu says so on stderr and reads the primary.
. "$KYU_SRC/tests/lib.sh"

REPLICA_PORT=$KYU_DB_PORT
REPLICA_SOCKET=$KYU_DB_SOCKET
private_db_start
dead=$(free_tcp_port)
hosts="127.0.0.1:$dead, 127.0.0.1:$PRIVATE_DB_PORT"

# Each server's own job.
sql "INSERT INTO kyu_jobs (id, command, status) VALUES ('on-primary', 'true', 'succeeded')"
mariadb --no-defaults -uroot --socket="$REPLICA_SOCKET" -D "$T_DB" \
	-e "INSERT INTO kyu_jobs (id, command, status) VALUES ('on-replica', 'true', 'succeeded')"

start_kyud database.socket= database.host="$hosts" job.max_attempts=1
wait_for_log "connected to 127\.0\.0\.1:$PRIVATE_DB_PORT" 30
assert_log_lacks "connected to 127\.0\.0\.1:$dead"

ini=$T_DIR/kyu.ini
write_ini "$ini" database.socket= database.host="$hosts"
"$KYU" -c "$ini" submit -i via-list -- true >/dev/null || fail "kyu submit with a host list failed"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'via-list'" succeeded 20
stop_kyud

# Reads from the replica, writes to the primary.
write_ini "$ini" database.socket= database.host="$hosts" database.replica="127.0.0.1:$REPLICA_PORT"
out=$("$KYU" -c "$ini" list 2>"$T_DIR/list.err") || fail "kyu list (replica) failed: $(cat "$T_DIR/list.err")"
grep on-replica <<<"$out" >/dev/null || fail "kyu list did not read the replica: $out"
if grep on-primary <<<"$out" >/dev/null; then fail "kyu list read the primary: $out"; fi
[ ! -s "$T_DIR/list.err" ] || fail "kyu list said on stderr: $(cat "$T_DIR/list.err")"
"$KYU" -c "$ini" show on-replica >/dev/null || fail "kyu show did not read the replica"
if "$KYU" -c "$ini" show on-primary >/dev/null 2>&1; then fail "kyu show read the primary"; fi
stats=$("$KYU" -c "$ini" stats --json) || fail "kyu stats (replica) failed"
"$KYU" -c "$ini" submit -i written -- true >/dev/null || fail "kyu submit (replica set) failed"
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'written'")" "submit went to the primary"
assert_eq 0 "$(mariadb --no-defaults -uroot --socket="$REPLICA_SOCKET" -N -B -D "$T_DB" \
	-e "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'written'")" "submit did not go to the replica"
"$KYU" -c "$ini" cancel written >/dev/null || fail "kyu cancel (replica set) failed"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = 'written'")" "cancel went to the primary"

# A replica that does not answer: the primary, with a note.
write_ini "$ini" database.socket= database.host="$hosts" database.replica="127.0.0.1:$dead" \
	database.connect_timeout=2
out=$("$KYU" -c "$ini" list 2>"$T_DIR/list.err") || fail "kyu list (dead replica) failed"
grep on-primary <<<"$out" >/dev/null || fail "kyu list did not fall back to the primary: $out"
grep "replica does not answer" "$T_DIR/list.err" >/dev/null ||
	fail "no note on stderr for the dead replica: $(cat "$T_DIR/list.err")"

# A bad list is refused at load, with the key and value.
write_ini "$ini" database.host="a,,b"
if "$KYU" -c "$ini" list 2>"$T_DIR/bad.err"; then fail "kyu accepted host = a,,b"; fi
grep "host" "$T_DIR/bad.err" >/dev/null || fail "no error naming host: $(cat "$T_DIR/bad.err")"
: "$stats"
