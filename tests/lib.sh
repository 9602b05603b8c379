# shellcheck shell=bash
# Helpers for the integration tests, and the ctest fixture that owns the one
# private mariadbd shared by a whole test run. Every test sources this file,
# which sources the parts in tests/lib/ (each says what it holds), then sets
# the test up (its name, directory, database, and the exit trap).
#   lib/db.sh        the shared server (fixture), root_sql and sql, a
#                    test's private server
#   lib/assert.sh    fail, assert_*
#   lib/wait.sh      wait_for, wait_until, wait_for_log, wait_gone...
#   lib/ini.sh       write_ini
#   lib/kyud.sh      start_kyud, stop_kyud, signal_kyud, start_extra_kyud...
#   lib/count.sh     statement counts, samplers, ms_between
#   lib/net.sh       free_udp_port, free_tcp_port, http_get
#   lib/schedule.sh  cron_instants, assert_cron_contiguous
#   lib/users.sh     ensure_test_users
#   lib/udf.sh       udf_require, udf_db_start (the kyu_notify plugin)
# lib/web.sh (kyu web) is sourced by the web tests themselves, after this
# file: it skips a test when kyu was not built.
#
# A test is a bash script that sources this file, then drives a real kyud:
#
#     . "$KYU_SRC/tests/lib.sh"
#     start_kyud kyud.workers=1 job.max_attempts=1
#     sql "INSERT INTO kyu_jobs (id, command) VALUES ('a', 'true')"
#     wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 1 10
#     stop_kyud
#
# ctest provides KYUD, KYU (the built binaries), KYU_SRC (source tree) and
# KYU_TEST_DIR (the build's tests dir, where the fixture wrote db.env).
# Run one test with its fixture:
#     ctest --test-dir build -R claim.batch_succeed -V
# A script tests/integration/FEATURE/NAME.sh is test integration.FEATURE.NAME.
#
# Every test gets its own database t_<feature>_<name>, its own directory
# $KYU_TEST_DIR/run/<feature>.<name> ($T_DIR) and its own kyud, so tests run in
# parallel. The directory and database are kept when a test fails.
#
# The shared server's data directory (about 270 MB) is made by mktemp -d
# under ${TMPDIR:-/tmp}, outside the source and build trees, and removed by
# db-stop; when a test failed it is kept (stopped) until the next db-start
# in the same build dir, so that its database can be looked at:
#   scripts/sandbox-db start DIR; mariadb --no-defaults -uroot --socket=DIR/mysqld.sock
#
# Fixture mode (executed, not sourced): bash tests/lib.sh db-start|db-stop

# The parts, in lib/ next to this file.
T_LIB=$(dirname "${BASH_SOURCE[0]}")/lib
# shellcheck source=tests/lib/db.sh
. "$T_LIB/db.sh"

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	: "${KYU_SRC:?}" "${KYU_TEST_DIR:?}"
	case ${1:-} in
	db-start) db_start ;;
	db-stop) db_stop ;;
	*) echo "usage: $0 db-start|db-stop" >&2; exit 2 ;;
	esac
	exit
fi

set -euo pipefail

# shellcheck source=tests/lib/assert.sh
. "$T_LIB/assert.sh"
# shellcheck source=tests/lib/wait.sh
. "$T_LIB/wait.sh"
# shellcheck source=tests/lib/ini.sh
. "$T_LIB/ini.sh"
# shellcheck source=tests/lib/kyud.sh
. "$T_LIB/kyud.sh"
# shellcheck source=tests/lib/count.sh
. "$T_LIB/count.sh"
# shellcheck source=tests/lib/net.sh
. "$T_LIB/net.sh"
# shellcheck source=tests/lib/schedule.sh
. "$T_LIB/schedule.sh"
# shellcheck source=tests/lib/users.sh
. "$T_LIB/users.sh"
# shellcheck source=tests/lib/udf.sh
. "$T_LIB/udf.sh"

# On any exit: never leave a kyud, a worker or a job behind. A passing test
# also removes its directory and database; a failing one keeps them, and
# marks the shared server's data directory to be kept by db-stop.
# EXIT_HOOKS: commands a test adds (EXIT_HOOKS+=("userdel x")) to undo what
# it changed outside its own directory and database; run first, whatever
# the outcome, without changing it.
EXIT_HOOKS=()
cleanup() {
	local rc=$? p h
	for h in "${EXIT_HOOKS[@]}"; do
		eval "$h" || true
	done
	for p in ${EXTRA_PIDS:-} ${SAMPLER_PIDS:-}; do
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$p") "$p" 2>/dev/null || true
	done
	if [ -n "${KYUD_PID:-}" ]; then
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$KYUD_PID") "$KYUD_PID" 2>/dev/null || true
		wait "$KYUD_PID" 2>/dev/null || true
	fi
	if [ "$rc" = 0 ]; then
		rm -rf "$T_DIR"
		root_sql -e "DROP DATABASE IF EXISTS $T_DB" || true
	else
		echo "kept for inspection: $T_DIR, database $T_DB (in $KYU_DB_DIR)" >&2
		echo "$T_NAME" >>"$KYU_DB_DIR/failed-tests" || true
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- set-up

: "${KYUD:?set by ctest}" "${KYU_SRC:?set by ctest}" "${KYU_TEST_DIR:?set by ctest}"
# FEATURE.NAME (tests/integration/FEATURE/NAME.sh), as in the test's ctest
# name: two features may each have a test of the same NAME.
T_NAME=$(basename "$(dirname "$0")").$(basename "$0" .sh)
# KYU_TEST_DB names it for a run by hand (KYU_TEST_DB=app for the
# screenshots of docs/, which show the database's name).
T_DB=${KYU_TEST_DB:-t_${T_NAME//[^A-Za-z0-9_]/_}}
T_DIR=$KYU_TEST_DIR/run/$T_NAME
KYUD_PID=
KYUD_LOG=$T_DIR/kyud.log
VALGRIND=()
# The wait helpers' timeouts are multiplied by this: memcheck makes kyud
# start and answer several times slower. Timing assertions of the tests
# themselves (within 2 s of a cancel...) are not scaled, and fail.
KYU_TIME_SCALE=1
if [ "${KYU_VALGRIND:-0}" = 1 ]; then
	KYU_TIME_SCALE=5
	# 99: an exit status kyud never uses itself. Only definite leaks count
	# ("possibly lost" is a pointer into a block, which libraries keep on
	# purpose); the ASan run's LeakSanitizer checks leaks too.
	VALGRIND=(valgrind -q --error-exitcode=99 --trace-children=yes
		--trace-children-skip="/bin/*,/sbin/*,/usr/*,/tmp/*,$T_DIR/*"
		--track-fds=yes --leak-check=full --show-leak-kinds=definite
		--errors-for-leak-kinds=definite --log-file="$T_DIR/valgrind.%p.log")
fi
[ -f "$KYU_TEST_DIR/db.env" ] || { echo "no $KYU_TEST_DIR/db.env: run through ctest (fixture db)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$KYU_TEST_DIR/db.env"
# The shared server, to which private_db_exit (lib/db.sh) returns.
SHARED_DB_SOCKET=$KYU_DB_SOCKET

# A private server kept by an earlier failure of this test (lib/db.sh).
if [ -L "$T_DIR/db" ]; then rm_db_dir "$(readlink "$T_DIR/db")"; fi
rm -rf "$T_DIR"
mkdir -p "$T_DIR"
: >"$KYUD_LOG"
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

root_sql <<-SQL
	DROP DATABASE IF EXISTS $T_DB;
	CREATE DATABASE $T_DB;
	GRANT ALL ON $T_DB.* TO 'kyu'@'localhost';
	GRANT ALL ON $T_DB.* TO 'kyu'@'127.0.0.1';
SQL
root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql"
