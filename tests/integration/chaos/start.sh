#!/usr/bin/env bash
# Fault suite (issue 12), scenario 5: kyud started into a bad environment.
#
# Four kyud at once, each with 2 workers and something wrong:
#   down    the database is not running (TCP to a port nothing listens on;
#           the private server is created, stopped, and started again later)
#   pw      a wrong password (a user of this test's own)
#   notable a database without the kyu_jobs table
#   nodb    a database that does not exist (the user has its grants)
# For OBSERVE seconds nothing is fixed. The behaviour asserted (issue 12 left
# the policy open; this is kyud's as of this test):
#   - every kyud stays up; no worker is restarted (no crash loop); notable
#     reports ready (its database answers), the others say that they wait
#     for the database and report ready once it answers;
#   - down, pw, nodb: each worker logs one line naming the cause, once, and
#     keeps retrying silently;
#       down:  kyud[worker N]: cannot connect to the database: cannot connect: error 2002: Can't connect to server on '127.0.0.1' (111)
#       pw:    kyud[worker N]: cannot connect to the database: cannot connect: error 1045: Access denied for user 'USER'@'localhost' (using password: YES)
#       nodb:  kyud[worker N]: cannot connect to the database: cannot connect: error 1049: Unknown database 'DB'
#   - notable: each claim fails and says so, once per poll, until the table
#     exists (the rate is printed):
#       notable: kyud[worker N]: acquiring jobs failed: error 1146: Table 'DB.kyu_jobs' doesn't exist
# Then each is fixed (server started, password changed to the one kyud has,
# schema loaded, database created): each kyud must run 5 jobs within 90 s,
# without a restart; the verdict (tests/chaos/check.py) covers all four.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

OBSERVE=${OBSERVE:-6}
SHARED=$KYU_DB_SOCKET
DB_NOTABLE=${T_DB}_notable DB_NODB=${T_DB}_nodb
T_USER=k_${T_DB#t_}
shared_sql() { mariadb --no-defaults -uroot --socket="$SHARED" -N -B "$@"; }
shared_sql <<-SQL
	DROP DATABASE IF EXISTS $DB_NOTABLE;
	DROP DATABASE IF EXISTS $DB_NODB;
	CREATE DATABASE $DB_NOTABLE;
	GRANT ALL ON $DB_NOTABLE.* TO 'kyu'@'localhost';
	GRANT ALL ON $DB_NODB.* TO 'kyu'@'localhost';
	DROP USER IF EXISTS '$T_USER'@'localhost';
	CREATE USER '$T_USER'@'localhost' IDENTIFIED BY 'right';
	GRANT ALL ON $T_DB.* TO '$T_USER'@'localhost';
SQL

common=(kyud.workers=2 kyud.lease=6 kyud.poll_interval=1)
d_start pw "${common[@]}" database.socket="$SHARED" database.user="$T_USER" database.password=wrong
d_start notable "${common[@]}" database.socket="$SHARED" database.database="$DB_NOTABLE"
d_start nodb "${common[@]}" database.socket="$SHARED" database.database="$DB_NODB"
chaos_private_db
port=$PRIVATE_DB_PORT
private_db_stop
d_start down "${common[@]}" database.socket= database.host=127.0.0.1 database.port="$port"
# Each worker's first attempt has been made (however long a loaded machine
# takes to get there), then OBSERVE s more: time for a line that would be
# repeated at every retry or poll to show up.
first_tries_logged() {
	local n w
	for n in down pw nodb; do
		for w in 1 2; do
			grep -q "^kyud\[worker $w\]: cannot connect to the database" "${D_LOG[$n]}" || return 1
		done
	done
	grep -q 'acquiring jobs failed' "${D_LOG[notable]}"
}
wait_until 60 "every worker's first connection or claim to fail" first_tries_logged
say "four kyud started; observing for $OBSERVE s"
sleep "$OBSERVE"
problems=()
names=(down pw notable nodb)
for n in "${names[@]}"; do
	kill -0 "${D_PID[$n]}" 2>/dev/null || problems+=("kyud $n exited while the environment was bad")
	cp "${D_LOG[$n]}" "$T_DIR/$n.observed"
done
t_obs=$(now)
# up NAME: seconds kyud NAME had run when observed.
up() { awk -v a="${D_T0[$1]}" -v b="$t_obs" 'BEGIN { printf "%.1f", b - a }'; }

# expect_once NAME ERE: each worker of kyud NAME logged one line matching ERE.
expect_once() {
	local w c
	for w in 1 2; do
		c=$(grep -Ec "^kyud\[worker $w\]: $2" "$T_DIR/$1.observed" || true)
		[ "$c" = 1 ] || problems+=("kyud $1 worker $w: $c line(s) matching /$2/ in its first $(up "$1") s, expected 1")
	done
}
expect_once down "cannot connect to the database: .*error 2002: Can't connect to server on '127\.0\.0\.1'"
expect_once pw "cannot connect to the database: .*error 1045: Access denied for user '$T_USER'@'localhost' \(using password: YES\)"
expect_once nodb "cannot connect to the database: .*error 1049: Unknown database '$DB_NODB'"
n_fail=$(grep -Ec "^kyud\[worker [12]\]: acquiring jobs failed: error 1146: Table '$DB_NOTABLE\.kyu_jobs' doesn't exist" "$T_DIR/notable.observed" || true)
[ "$n_fail" -ge 1 ] || problems+=("kyud notable: no 'acquiring jobs failed: error 1146' line in $(up notable) s")
echo "  what each kyud logged (count, line):"
for n in "${names[@]}"; do
	echo "    $n, in its first $(up "$n") s:"
	grep -v '^kyud\[sup\]: \(starting\|ready\|worker [0-9]* started\)' "$T_DIR/$n.observed" | sort | uniq -c | sed "s/^/      /"
done
say "notable: $n_fail failed claim line(s) in $(up notable) s (poll_interval 1 s)"

# Fix everything; each kyud must then run its jobs.
private_db_start
shared_sql -e "ALTER USER '$T_USER'@'localhost' IDENTIFIED BY 'wrong'"
shared_sql -D "$DB_NOTABLE" <"$KYU_SRC/sql/schema.sql"
shared_sql -e "CREATE DATABASE $DB_NODB"
shared_sql -D "$DB_NODB" <"$KYU_SRC/sql/schema.sql"
t_fix=$(now)
# submit_in SOCKET DB PREFIX: 5 jobs of tests/chaos/job.sh into DB.
submit_in() {
	mariadb --no-defaults -uroot --socket="$1" -D "$2" -e "INSERT INTO kyu_jobs (id, argv)
		SELECT CONCAT('$3', seq), JSON_ARRAY('/bin/bash', '$CHAOS_JOB', '$T_DIR', '0', '100') FROM seq_1_to_5"
	seq 1 5 | sed "s/^/$3/" >>"$T_DIR/ids"
}
submit_in "$KYU_DB_SOCKET" "$T_DB" down
submit_in "$SHARED" "$T_DB" pw
submit_in "$SHARED" "$DB_NOTABLE" notable
submit_in "$SHARED" "$DB_NODB" nodb
chaos_dump_table() {
	root_sql -B -D "$T_DB" -e "SELECT $CHAOS_COLUMNS FROM kyu_jobs"
	for db in "$T_DB" "$DB_NOTABLE" "$DB_NODB"; do
		mariadb --no-defaults -uroot --socket="$SHARED" -N -B -D "$db" -e "SELECT $CHAOS_COLUMNS FROM kyu_jobs"
	done
}
# 90 s: an idle worker retries its connection on a backoff of up to 10 s,
# and a loaded machine is slow besides; the bound is for a kyud that never
# recovers.
deadline=$((SECONDS + 90))
until [ "$(chaos_dump_table | grep -c '	succeeded	')" = 20 ]; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		problems+=("only $(chaos_dump_table | grep -c '	succeeded	') of 20 jobs succeeded within 90 s of the fix")
		break
	fi
	sleep 0.3
done
for n in "${names[@]}"; do
	c=$(grep -c "succeeded" "${D_LOG[$n]}" || true)
	s=$(sed -n 's/^kyud\[worker \([0-9]*\)\]: job \([a-z]*\)[0-9]* succeeded$/\2/p' "${D_LOG[$n]}" | sort -u | tr '\n' ' ')
	echo "  after the fix, kyud $n: $c job(s) succeeded ($s); $(grep -c 'database connection restored' "${D_LOG[$n]}" || true) 'restored' line(s)"
	[ "$c" -ge 5 ] || problems+=("kyud $n ran $c jobs after the fix, expected its 5")
	# Ready once, when its database first answered (before the fix only
	# for notable, whose database always answered).
	r=$(grep -c 'kyud\[sup\]: ready:' "${D_LOG[$n]}" || true)
	[ "$r" = 1 ] || problems+=("kyud $n said ready $r time(s), expected once")
	if [ "$n" != notable ]; then
		r=$(grep -c 'kyud\[sup\]: ready:' "$T_DIR/$n.observed" || true)
		[ "$r" = 0 ] || problems+=("kyud $n said ready while its database could not be used")
	fi
	r=$(grep -c 'kyud\[sup\]: worker [0-9]* started' "${D_LOG[$n]}" || true)
	[ "$r" = 2 ] || problems+=("kyud $n started $r workers for 2 (restarts: a crash loop?)")
done
say "everything ran $(awk -v a="$t_fix" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s after the fix"
for n in "${names[@]}"; do d_term "$n" 30; done
chaos_check
for p in "${problems[@]}"; do echo "PROBLEM: $p"; done
[ "${#problems[@]}" = 0 ] || fail "${#problems[@]} problem(s) (above)"
shared_sql -e "DROP DATABASE IF EXISTS $DB_NOTABLE; DROP DATABASE IF EXISTS $DB_NODB; DROP USER IF EXISTS '$T_USER'@'localhost'"
