#!/usr/bin/env bash
# idxcost: what kyu_jobs's indexes cost per job, for the schema and variants
# of it (issue 40). Never a pass/fail test.
#
#   tests/bench/idxcost.sh [VARIANT.sql ...]        N=3000
#   tests/bench/idxcost.sh tests/bench/idxvariants/*.sql   the variants measured
#
# Its own mariadbd (scripts/sandbox-db). For the schema as it is, and for each
# VARIANT.sql (statements run after sql/schema.sql: an index dropped, a column
# added), a database of its own goes through the same fixed statements, with
# no kyud and no other client:
#   insert   N jobs, one INSERT ... SELECT (every trigger runs per row);
#   claim    kyud's claim UPDATE (the columns store_claim.c sets), 10 rows each;
#   finish   kyud's finish UPDATE (store_finish.c), one row each, by seq;
#   delete   the retention DELETE's shape, 100 rows each.
# After each phase the purge is waited for (innodb_max_purge_lag_wait = 0)
# and counted apart. Per job it prints the redo bytes (Innodb_lsn_current) and
# buffer pool write requests of each phase and their sum: what one more or
# one fewer secondary index entry changed per statement shows as. Compare the
# totals: the purge threads may still be finishing one phase's work while the
# next runs, so the split between phases moves by a few page writes. The
# statements and their batches are the same for every variant, so the figures
# do not depend on the machine's load (dbcost.sh's kyud run batches claims and
# finishes as its timing falls, which moves its per-job counts by a few %).
#
# Environment: N [3000]  KEEP=1 keeps the temporary directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-3000}

note() { echo "idxcost: $*" >&2; }
for v in "$@"; do [ -r "$v" ] || { note "cannot read the variant $v"; exit 2; }; done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kyu-idxcost.XXXXXX")
cleanup() {
	"$root/scripts/sandbox-db" stop "$tmp/db" >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then note "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=3620
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
"$root/scripts/sandbox-db" start "$tmp/db" "$port" >"$tmp/db.log" 2>&1 ||
	{ note "mariadbd did not start: $(tail -3 "$tmp/db.log")"; exit 1; }
adm() { mariadb --no-defaults -uroot --socket="$tmp/db/mysqld.sock" -N -B "$@"; }

# Redo bytes and buffer pool write requests, server-wide.
counters() {
	adm -e "SELECT MAX(IF(VARIABLE_NAME = 'INNODB_LSN_CURRENT', VARIABLE_VALUE, NULL)),
	  MAX(IF(VARIABLE_NAME = 'INNODB_BUFFER_POOL_WRITE_REQUESTS', VARIABLE_VALUE, NULL))
	  FROM information_schema.GLOBAL_STATUS"
}
# Blocks until the purge has emptied the history list.
purged() { adm -e "SET GLOBAL innodb_max_purge_lag_wait = 0"; }

# The statements, the same for every variant (seq_1_to_N: the Sequence engine).
echo "INSERT INTO kyu_jobs (queue, argv) SELECT 'default', '[\"/bin/true\"]' FROM seq_1_to_$N;" \
	>"$tmp/insert.sql"
for ((i = 0; i < N / 10; i++)); do
	echo "UPDATE kyu_jobs FORCE INDEX (kyu_jobs_status_queue_due) SET owner = 7," \
		"lease_until = NOW(6) + INTERVAL 60 SECOND, attempts = LEAST(attempts, 4294967294) + 1," \
		"started_at = SYSDATE(6), finished_at = NULL, duration = NULL, host = 'h', status = 'running'" \
		"WHERE status = 'waiting' AND queue = 'default' AND due <= NOW(6) ORDER BY due, priority LIMIT 10;"
done >"$tmp/claim.sql"
{
	echo "SET @first = (SELECT MIN(seq) - 1 FROM kyu_jobs);"
	for ((i = 1; i <= N; i++)); do
		echo "UPDATE kyu_jobs SET exit_code = 0, finished_at = NOW(6)," \
			"duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6," \
			"status = IF(status = 'cancelled', 'cancelled', 'succeeded')" \
			"WHERE seq = @first + $i AND owner = 7 AND status IN ('running', 'cancelled');"
	done
} >"$tmp/finish.sql"
for ((i = 0; i < N / 100; i++)); do
	echo "DELETE FROM kyu_jobs WHERE status = 'succeeded' ORDER BY seq LIMIT 100;"
done >"$tmp/delete.sql"

per_job() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%9.1f", (b - a) / n }'; }

printf '%-24s %-8s %9s %9s %9s %9s\n' variant phase redo_B purge_B bp_wr purge_wr
for v in "" "$@"; do
	name=${v:+$(basename "$v" .sql)}
	name=${name:-schema}
	adm -e "DROP DATABASE IF EXISTS kyu; CREATE DATABASE kyu"
	adm kyu <"$root/sql/schema.sql"
	[ -z "$v" ] || adm kyu <"$v"
	purged
	tr=0 tw=0
	for phase in insert claim finish delete; do
		read -r l0 w0 < <(counters)
		adm kyu <"$tmp/$phase.sql"
		read -r l1 w1 < <(counters)
		purged
		read -r l2 w2 < <(counters)
		printf '%-24s %-8s %s %s %s %s\n' "$name" "$phase" "$(per_job "$l0" "$l1")" \
			"$(per_job "$l1" "$l2")" "$(per_job "$w0" "$w1")" "$(per_job "$w1" "$w2")"
		tr=$((tr + l2 - l0)) tw=$((tw + w2 - w0))
	done
	left=$(adm kyu -e "SELECT COUNT(*) FROM kyu_jobs")
	[ "$left" = 0 ] || note "$name: $left rows left (a statement did not match)"
	printf '%-24s %-8s %s %9s %s\n' "$name" total "$(per_job 0 "$tr")" "" "$(per_job 0 "$tw")"
done
