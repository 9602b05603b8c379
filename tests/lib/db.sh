# shellcheck shell=bash
# The databases of the integration tests: the one mariadbd the whole run
# shares (the ctest fixture: bash tests/lib.sh db-start|db-stop), SQL run
# as its root, and a private mariadbd for a test that stops its server.
# Sourced by tests/lib.sh before anything else: the fixture needs only this.

# ---------------------------------------------------------------- fixture

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# rm_db_dir DIR: remove a data directory made by this file's mktemp calls,
# and nothing else.
rm_db_dir() {
	case ${1##*/} in
	kyu-test-db.* | kyu-private-db.*) rm -rf "$1" ;;
	esac
}

db_stop() {
	local env=$KYU_TEST_DIR/db.env
	[ -f "$env" ] || return 0
	# shellcheck source=/dev/null
	. "$env"
	"$KYU_SRC/scripts/sandbox-db" stop "$KYU_DB_DIR"
	if [ -e "$KYU_DB_DIR/failed-tests" ]; then
		echo "kept for inspection until the next run: $KYU_DB_DIR (databases of:" \
			"$(sort -u "$KYU_DB_DIR/failed-tests" | tr '\n' ' '))" >&2
		echo "$KYU_DB_DIR" >>"$KYU_TEST_DIR/db.kept"
	else
		rm_db_dir "$KYU_DB_DIR"
	fi
	rm -f "$env"
}

db_start() {
	local dir base port kept link
	# A run that was interrupted may have left its server behind.
	db_stop
	# What the previous runs kept for inspection goes now: the shared data
	# directory and the private ones of failed tests (run/NAME/db links).
	if [ -f "$KYU_TEST_DIR/db.kept" ]; then
		while read -r kept; do rm_db_dir "$kept"; done <"$KYU_TEST_DIR/db.kept"
		rm -f "$KYU_TEST_DIR/db.kept"
	fi
	for link in "$KYU_TEST_DIR"/run/*/db; do
		[ -L "$link" ] || continue
		rm_db_dir "$(readlink "$link")"
		rm -f "$link"
	done
	# A new data directory every run (no state leaks between runs), outside
	# the checkout. A Unix socket path must fit in 108 bytes: a long TMPDIR
	# does not do.
	dir=$(mktemp -d "${TMPDIR:-/tmp}/kyu-test-db.XXXXXX")
	if [ ${#dir} -gt 90 ]; then
		rmdir "$dir"
		dir=$(mktemp -d /tmp/kyu-test-db.XXXXXX)
	fi
	# Several suites may share the machine: start at a random port and move
	# on when it is taken (probed first, or mariadbd fails to bind it).
	base=$((20000 + RANDOM % 30000))
	for port in $(seq "$base" $((base + 40))); do
		port_in_use "$port" && continue
		# Check that the server answering on the socket is the one started
		# on this port, not a leftover that sandbox-db found "already running".
		if "$KYU_SRC/scripts/sandbox-db" start "$dir" "$port" &&
			[ "$(mariadb --no-defaults -uroot --socket="$dir/mysqld.sock" -N -e 'SELECT @@port')" = "$port" ]; then
			printf 'KYU_DB_DIR=%q\nKYU_DB_SOCKET=%q\nKYU_DB_PORT=%q\n' \
				"$dir" "$dir/mysqld.sock" "$port" >"$KYU_TEST_DIR/db.env"
			return 0
		fi
		# A server that started but did not answer in time would be taken
		# for ours on the next try.
		"$KYU_SRC/scripts/sandbox-db" stop "$dir" || true
	done
	echo "db-start: could not start mariadbd on any port from $base" >&2
	rm_db_dir "$dir"
	return 1
}

# ---------------------------------------------------------------- SQL

root_sql() { mariadb --no-defaults -uroot --socket="$KYU_DB_SOCKET" "$@"; }

# sql "STATEMENT": run in the test's database; tab-separated, no headers.
sql() { root_sql -N -B -D "$T_DB" -e "$1"; }

# ---------------------------------------------------------------- private database
# For tests that stop and restart the database server (db/restart,
# lease/self_fence): a mariadbd of the test's own, so that the shared one
# keeps serving the other tests.
#
#     private_db_start       # first call: create it, load the schema; from
#                            # now on sql, root_sql and start_kyud use it
#     private_db_stop        # stop it (clean shutdown)
#     private_db_start       # again: same directory and port, data kept
#     private_db_start OPT.. # either, with mariadbd options of the test's
#                            # (given at each start that wants them)
#
# Its data directory is made by mktemp -d under ${TMPDIR:-/tmp} (not in
# the build tree: it is about 270 MB), linked from $T_DIR/db. It is stopped
# when the test exits and removed when the test passes; when the test fails
# it is kept, like $T_DIR, until the next db-start or run of this test.

PRIVATE_DB_DIR=
PRIVATE_DB_PORT=
# SHARED_DB_SOCKET: the fixture's server, set by tests/lib.sh once it has
# read db.env; private_db_exit points KYU_DB_SOCKET back at it.

# private_db_try PORT [OPTION...]: start the server in $PRIVATE_DB_DIR on
# PORT, and check that the server answering on its socket is really the one
# on PORT.
private_db_try() {
	"$KYU_SRC/scripts/sandbox-db" start "$PRIVATE_DB_DIR" "$@" >>"$T_DIR/private-db.log" 2>&1 &&
		[ "$(mariadb --no-defaults -uroot --socket="$PRIVATE_DB_DIR/mysqld.sock" -N -e 'SELECT @@port')" = "$1" ]
}

private_db_start() {
	local base port
	if [ -n "$PRIVATE_DB_PORT" ]; then
		# The same port: kyud's config (the socket) and the data stay valid.
		private_db_try "$PRIVATE_DB_PORT" "$@" ||
			fail "private_db_start: could not restart mariadbd on port $PRIVATE_DB_PORT (see $T_DIR/private-db.log)"
		return
	fi
	PRIVATE_DB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kyu-private-db.XXXXXX")
	# A Unix socket path must fit in 108 bytes: a long TMPDIR does not do.
	if [ ${#PRIVATE_DB_DIR} -gt 90 ]; then
		rmdir "$PRIVATE_DB_DIR"
		PRIVATE_DB_DIR=$(mktemp -d /tmp/kyu-private-db.XXXXXX)
	fi
	ln -s "$PRIVATE_DB_DIR" "$T_DIR/db"
	trap private_db_exit EXIT
	base=$((20000 + RANDOM % 30000))
	for port in $(seq "$base" $((base + 40))); do
		port_in_use "$port" && continue
		if private_db_try "$port" "$@"; then
			PRIVATE_DB_PORT=$port
			break
		fi
		"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1 || true
	done
	[ -n "$PRIVATE_DB_PORT" ] || fail "private_db_start: could not start mariadbd (see $T_DIR/private-db.log)"
	KYU_DB_SOCKET=$PRIVATE_DB_DIR/mysqld.sock
	root_sql <<-SQL
		CREATE DATABASE $T_DB;
		GRANT ALL ON $T_DB.* TO 'kyu'@'localhost';
		GRANT ALL ON $T_DB.* TO 'kyu'@'127.0.0.1';
	SQL
	root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql"
}

private_db_stop() {
	[ -n "$PRIVATE_DB_PORT" ] || fail "private_db_stop: no private database was started"
	"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1
}

# EXIT trap once a private server exists: stop it, then the usual cleanup
# (which drops the test's database on the shared server, made at set-up).
private_db_exit() {
	local rc=$?
	set +e
	"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1
	if [ "$rc" = 0 ]; then
		rm_db_dir "$PRIVATE_DB_DIR"
	else
		echo "kept: private database $PRIVATE_DB_DIR ($T_DIR/db)" >&2
	fi
	KYU_DB_SOCKET=$SHARED_DB_SOCKET
	(exit "$rc")
	cleanup
}
