#!/usr/bin/env bash
# kyu benchmark suite: one command, one table.  Never a pass/fail test.
#
#   tests/bench/run.sh                     full run (N=20000, every case, 2 repeats)
#   N=2000 CASES="limit naive kyud" WORKERS="1 4" IDLE_SECS=5 tests/bench/run.sh
#                                          quick run (well under 2 minutes)
#
# It starts its own mariadbd (scripts/sandbox-db) in a temporary directory on a
# free port, loads sql/schema.sql, and for every case empties kyu_jobs, inserts
# N /bin/true jobs (multi-row INSERTs) and runs them.  jobs/s is always taken
# from the table (database clock): N / (last finished_at - first started_at).
# Statements per job come from SHOW GLOBAL STATUS deltas (this script's own
# queries subtracted).
#
# Environment (defaults in brackets):
#   N             jobs per throughput case [20000]
#   REPEAT        runs of every case [2]
#   CASES         any of: claims limit naive kyud idle ["claims limit naive kyud idle"]
#   MODES         argv and/or command: how the job is stored [argv command]
#   LIMIT_SETS    limit loop variants, procs:batch:inflight ["1:100:2 1:100:4 2:100:2"]
#   NAIVE_PROCS   naive pollers [1]        NAIVE_TIME  seconds per naive run [15]
#   WORKERS       kyud workers per case ["1 2 4 8"]
#   KYUD          kyud binary [$BUILD_DIR/kyud]     BUILD_DIR [<repo>/build]
#   KYUD_SLOTS    [kyud] slots (empty: kyud default)   KYUD_CLAIM  [kyud] claim (empty: default)
#   KYUD_EXTRA    extra lines for [kyud], e.g. $'poll_interval = 5\nlease = 30'
#   KYUD_STALL    give up on a kyud case after this many seconds without progress [30]
#   IDLE_WORKERS  worker counts for the idle measurement ["1 8"]   IDLE_SECS [20]
#   CLAIM_SHAPES  ["plain join skip_locked"]   CLAIM_PROCS ["1 2 4 8"]
#   CLAIM_BATCHES ["1 10 100"]   CLAIM_ISOLATION ["rr rc"]   CLAIM_N [10000; 3000 for batch 1]
#   BENCH_PORT    first port to try [3420]     KEEP=1 keeps the temporary directory
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-20000}
REPEAT=${REPEAT:-2}
CASES=${CASES:-claims limit naive kyud idle}
MODES=${MODES:-argv command}
LIMIT_SETS=${LIMIT_SETS:-1:100:2 1:100:4 2:100:2}
NAIVE_PROCS=${NAIVE_PROCS:-1}
NAIVE_TIME=${NAIVE_TIME:-15}
WORKERS=${WORKERS:-1 2 4 8}
BUILD_DIR=${BUILD_DIR:-$root/build}
KYUD=${KYUD:-$BUILD_DIR/kyud}
KYUD_SLOTS=${KYUD_SLOTS:-}
KYUD_CLAIM=${KYUD_CLAIM:-}
KYUD_EXTRA=${KYUD_EXTRA:-}
KYUD_STALL=${KYUD_STALL:-30}
IDLE_WORKERS=${IDLE_WORKERS:-1 8}
IDLE_SECS=${IDLE_SECS:-20}
CLAIM_SHAPES=${CLAIM_SHAPES:-plain join skip_locked}
CLAIM_PROCS=${CLAIM_PROCS:-1 2 4 8}
CLAIM_BATCHES=${CLAIM_BATCHES:-1 10 100}
CLAIM_ISOLATION=${CLAIM_ISOLATION:-rr rc}
CLAIM_N=${CLAIM_N:-}
BENCH_PORT=${BENCH_PORT:-3420}

has_case() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }
note() { echo "bench: $*" >&2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kyu-bench.XXXXXX")
kyud_pid=
cleanup() {
	if [ -n "$kyud_pid" ] && kill -0 "$kyud_pid" 2>/dev/null; then
		kill -INT "$kyud_pid" 2>/dev/null || true
		sleep 1
		kill -KILL "$kyud_pid" 2>/dev/null || true
	fi
	"$root/scripts/sandbox-db" stop "$tmp/db" >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then note "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- bench programs: from the build, else compiled here -----------------------
bin=$BUILD_DIR/tests/bench
if [ ! -x "$bin/limit" ] || [ ! -x "$bin/naive" ]; then
	bin=$tmp/bin
	mkdir -p "$bin"
	note "bench programs not built in $BUILD_DIR; compiling them into $bin"
	for p in limit naive; do
		${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror $(pkg-config --cflags libmariadb) \
			-o "$bin/$p" "$here/$p.c" "$here/common.c" $(pkg-config --libs libmariadb)
	done
fi

# --- private server ------------------------------------------------------------
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=$BENCH_PORT
while port_busy "$port"; do port=$((port + 1)); done
"$root/scripts/sandbox-db" start "$tmp/db" "$port" >/dev/null
sock=$tmp/db/mysqld.sock
export KYU_DB_SOCKET=$sock
sql() { mariadb --no-defaults -ukyu -pkyu --socket="$sock" -N -B kyu "$@"; }
sql <"$root/sql/schema.sql"

status_snapshot() { # prints: questions com_update(+multi) com_select connections
	sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN
	        ('Questions','Com_update','Com_update_multi','Com_select','Connections')" |
		awk '{v[$1]=$2} END {print v["Questions"]+0, v["Com_update"]+v["Com_update_multi"],
		      v["Com_select"]+0, v["Connections"]+0}'
}
# What one status_snapshot itself adds to Questions (and Com_select: none, it is a SHOW).
read -r q0 _ _ _ < <(status_snapshot)
read -r q1 _ _ _ < <(status_snapshot)
self_q=$((q1 - q0))

fill() { # fill N argv|command
	local n=$1 col=argv val="'[\"/bin/true\"]'"
	[ "$2" = command ] && { col=command; val="'/bin/true'"; }
	{
		echo "TRUNCATE TABLE kyu_jobs;"
		awk -v n="$n" -v col="$col" -v val="$val" 'BEGIN {
			for (i = 0; i < n; i++) {
				if (i % 1000 == 0) printf "%sINSERT INTO kyu_jobs (%s) VALUES ", (i ? ";\n" : ""), col
				else printf ","
				printf "(%s)", val
			}
			if (n > 0) print ";"
		}'
	} | sql
}

kv() { # kv KEY LINE
	local k=$1
	shift
	sed -n "s/.* $k=\\([^ ]*\\).*/\\1/p" <<<" $*"
}

results=$tmp/results   # case mode n rep jobs secs jobs/s q/job upd/job sel/job conns rss_m rss_w note
claims=$tmp/claims
: >"$results"
: >"$claims"
add() { printf '%s\n' "$*" | tr ' ' '\t' | sed 's/\t/ /14g' >>"$results"; }

echo "kyu bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -sr)," \
	"$(mariadb --version | sed 's/.*Distrib \([^,]*\),.*/MariaDB \1/'), N=$N, repeats=$REPEAT"

# --- claim statement shapes under contention (no spawning) --------------------
if has_case claims; then
	echo "claim shapes: each process loops claim (UPDATE + SELECT) and finish (UPDATE ... IN) without spawning"
	for rep in $(seq 1 "$REPEAT"); do
		for iso in $CLAIM_ISOLATION; do
			for b in $CLAIM_BATCHES; do
				n=${CLAIM_N:-$([ "$b" = 1 ] && echo 3000 || echo 10000)}
				for p in $CLAIM_PROCS; do
					for s in $CLAIM_SHAPES; do
						line=$("$bin/limit" --fill -n "$n" -b "$b" -k 0 -p "$p" -s "$s" \
							--isolation "$iso" --timeout 30 2>&1) || line="error $line"
						echo "$rep $line" >>"$claims"
						printf '.' >&2
					done
				done
			done
		done
	done
	echo >&2
fi

# --- the limit loop ------------------------------------------------------------
if has_case limit; then
	for mode in $MODES; do
		for set in $LIMIT_SETS; do
			IFS=: read -r lp lb lk <<<"$set"
			for rep in $(seq 1 "$REPEAT"); do
				copt=()
				[ "$mode" = command ] && copt=(-c)
				line=$("$bin/limit" --fill -n "$N" -p "$lp" -b "$lb" -k "$lk" "${copt[@]}" \
					--timeout 600 2>&1) || { note "limit failed: $line"; continue; }
				nt="deadlocks=$(kv deadlocks "$line"),double=$(kv double_claims "$line")"
				add "limit:p${lp}b${lb}k${lk}" "$mode" "$lp" "$rep" "$(kv succeeded "$line")" \
					"$(kv db_span_s "$line")" "$(kv db_jobs_per_s "$line")" \
					"$(kv q_per_job "$line")" "$(kv upd_per_job "$line")" \
					"$(kv sel_per_job "$line")" "$lp" - - "$nt"
			done
		done
	done
fi

# --- the naive poller ------------------------------------------------------------
if has_case naive; then
	for mode in $MODES; do
		for rep in $(seq 1 "$REPEAT"); do
			copt=()
			[ "$mode" = command ] && copt=(-c)
			line=$("$bin/naive" --fill -n "$N" -p "$NAIVE_PROCS" -t "$NAIVE_TIME" "${copt[@]}" 2>&1) ||
				{ note "naive failed: $line"; continue; }
			add "naive" "$mode" "$NAIVE_PROCS" "$rep" "$(kv succeeded "$line")" \
				"$(kv db_span_s "$line")" "$(kv db_jobs_per_s "$line")" \
				"$(kv q_per_job "$line")" "$(kv upd_per_job "$line")" \
				"$(kv sel_per_job "$line")" "$NAIVE_PROCS" - - \
				"stopped_after_${NAIVE_TIME}s,deadlocks=$(kv deadlocks "$line")"
		done
	done
fi

# --- kyud ----------------------------------------------------------------------------
kyud_ok=1
if has_case kyud || has_case idle; then
	if [ ! -x "$KYUD" ]; then
		note "kyud not found at $KYUD (set KYUD or BUILD_DIR); skipping the kyud cases"
		echo "note: kyud cases skipped: no kyud binary at $KYUD"
		kyud_ok=0
	fi
fi

write_conf() { # write_conf WORKERS FILE
	{
		echo "[database]"
		echo "socket = $sock"
		echo "user = kyu"
		echo "password = kyu"
		echo "database = kyu"
		echo "[kyud]"
		echo "workers = $1"
		echo "listen ="
		[ -n "$KYUD_SLOTS" ] && echo "slots = $KYUD_SLOTS"
		[ -n "$KYUD_CLAIM" ] && echo "claim = $KYUD_CLAIM"
		[ -n "$KYUD_EXTRA" ] && printf '%s\n' "$KYUD_EXTRA"
	} >"$2"
}

children() { # pids of the direct children of $1
	local p
	if [ -r "/proc/$1/task/$1/children" ]; then
		cat "/proc/$1/task/$1/children"
	else
		for p in /proc/[0-9]*; do
			[ "$(awk '{print $4}' "$p/stat" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
		done
	fi
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
rss_pair() { # prints "master_kib worker_max_kib"
	local m w max=0
	m=$(rss_kib "$kyud_pid")
	for w in $(children "$kyud_pid"); do
		r=$(rss_kib "$w")
		[ "${r:-0}" -gt "$max" ] && max=$r
	done
	echo "${m:-0} $max"
}

start_kyud() { # start_kyud WORKERS LOG; returns non-zero (with a note) on failure
	local conf=$tmp/kyu-$1.ini
	write_conf "$1" "$conf"
	if ! "$KYUD" -c "$conf" --check-config >"$2" 2>&1; then
		note "kyud --check-config refused $conf: $(tail -n 3 "$2" | tr '\n' ' ')"
		return 1
	fi
	"$KYUD" -c "$conf" 2>"$2" &
	kyud_pid=$!
	for _ in $(seq 1 150); do
		grep -q 'ready:' "$2" 2>/dev/null && return 0
		kill -0 "$kyud_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$kyud_pid" 2>/dev/null; then
		note "kyud did not log 'ready:' within 15 s; carrying on"
		return 0
	fi
	note "kyud exited at start-up: $(tail -n 3 "$2" | tr '\n' ' ')"
	kyud_pid=
	return 1
}
stop_kyud() {
	[ -n "$kyud_pid" ] || return 0
	kill -TERM "$kyud_pid" 2>/dev/null || true
	for _ in $(seq 1 400); do kill -0 "$kyud_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$kyud_pid" 2>/dev/null || true
	wait "$kyud_pid" 2>/dev/null || true
	kyud_pid=
}

if has_case idle && [ "$kyud_ok" = 1 ]; then
	for w in $IDLE_WORKERS; do
		for rep in $(seq 1 "$REPEAT"); do
			fill 0 argv
			log=$tmp/kyud-idle-$w-$rep.log
			start_kyud "$w" "$log" || { add idle - "$w" "$rep" - - - - - - - - - kyud_failed; continue; }
			sleep 3
			read -r rm rw < <(rss_pair)
			read -r qa ua sa ca < <(status_snapshot)
			sleep "$IDLE_SECS"
			read -r qb ub sb cb < <(status_snapshot)
			qps=$(awk -v d=$((qb - qa - self_q)) -v s="$IDLE_SECS" 'BEGIN {printf "%.3f", d / s}')
			stop_kyud
			add idle - "$w" "$rep" 0 "$IDLE_SECS" - - - - $((cb - ca - 1)) "$rm" "$rw" "idle_queries_per_s=$qps"
		done
	done
fi

if has_case kyud && [ "$kyud_ok" = 1 ]; then
	for mode in $MODES; do
		for w in $WORKERS; do
			for rep in $(seq 1 "$REPEAT"); do
				fill "$N" "$mode"
				log=$tmp/kyud-$mode-$w-$rep.log
				read -r qa ua sa ca < <(status_snapshot)
				start_kyud "$w" "$log" || { add kyud "$mode" "$w" "$rep" - - - - - - - - - kyud_failed; continue; }
				polls=0 left=$N last=$N stall=0 why=
				while :; do
					sleep 0.5
					left=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting','running')")
					polls=$((polls + 1))
					[ "$left" = 0 ] && break
					if ! kill -0 "$kyud_pid" 2>/dev/null; then why="kyud_exited"; kyud_pid=; break; fi
					if [ "$left" = "$last" ]; then
						stall=$((stall + 1))
						[ $((stall / 2)) -ge "$KYUD_STALL" ] && { why="no_progress_${KYUD_STALL}s"; break; }
					else
						stall=0 last=$left
					fi
				done
				rss="- -"
				[ -n "$kyud_pid" ] && rss=$(rss_pair)
				read -r qb ub sb cb < <(status_snapshot)
				stop_kyud
				read -r done span dbl < <(sql -e "SELECT SUM(status='succeeded'),
					TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) / 1e6,
					SUM(attempts > 1) FROM kyu_jobs")
				[ "$done" = NULL ] && done=0
				jps=$(awk -v d="$done" -v s="$span" 'BEGIN {if (s + 0 > 0) printf "%.0f", d / s; else print "-"}')
				per() { awk -v d="$1" -v n="$done" 'BEGIN {if (n > 0) printf "%.3f", d / n; else print "-"}'; }
				qd=$((qb - qa - self_q - polls))
				add kyud "$mode" "$w" "$rep" "$done" "$span" "$jps" "$(per "$qd")" \
					"$(per $((ub - ua)))" "$(per $((sb - sa - polls)))" $((cb - ca - polls - 1)) $rss \
					"${why:-ok}${dbl:+,attempts>1:$dbl}"
				[ -n "$why" ] && note "kyud $mode workers=$w: $why; log: $(tail -n 2 "$log" | tr '\n' ' ')"
			done
		done
	done
fi

# --- report ------------------------------------------------------------------------
if [ -s "$claims" ]; then
	echo
	echo "Claim shapes under contention (jobs/s per run, claim+select+finish, no spawn; dl = deadlocks+lock wait timeouts retried; dbl = rows claimed twice)"
	printf '%-4s %-12s %5s %5s  %-26s %-12s %-5s %s\n' iso shape procs batch "jobs/s (runs)" "dl (runs)" dbl note
	awk '
	{
		rep = $1; line = $0
		delete kv
		for (i = 2; i <= NF; i++) if (split($i, a, "=") == 2) kv[a[1]] = a[2]
		k = kv["isolation"] " " kv["shape"] " " kv["procs"] " " kv["batch"]
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		r[k] = r[k] (r[k] == "" ? "" : " / ") (kv["db_jobs_per_s"] == "" ? "err" : kv["db_jobs_per_s"])
		d[k] = d[k] (d[k] == "" ? "" : "/") (kv["deadlocks"] + kv["lockwaits"])
		dbl[k] += kv["double_claims"] + (kv["rows"] - kv["attempts1"] - kv["double_claims"] - kv["waiting"])
		if (kv["timeout"] == 1) nt[k] = nt[k] "TIMEOUT(" kv["succeeded"] "/" kv["rows"] ") "
		if ($2 == "error") nt[k] = nt[k] "ERROR "
	}
	END {
		for (i = 1; i <= nk; i++) {
			split(order[i], f, " ")
			printf "%-4s %-12s %5s %5s  %-26s %-12s %-5s %s\n", f[1], f[2], f[3], f[4], r[order[i]], d[order[i]], dbl[order[i]], nt[order[i]]
		}
	}' "$claims"
fi

if [ -s "$results" ]; then
	echo
	echo "Throughput (jobs/s = jobs / (last finished_at - first started_at), database clock; %limit = vs the best limit loop of the same mode, mean of its runs)"
	awk -F'\t' '
	$1 ~ /^limit:/ { s[$1 " " $2] += $7; c[$1 " " $2]++; m[$1 " " $2] = $2 }
	{ rows[NR] = $0 }
	END {
		for (k in s) { v = s[k] / c[k]; if (v > best[m[k]]) best[m[k]] = v }
		printf "%-16s %-7s %4s %3s %6s %8s %7s %6s %6s %6s %6s %5s %9s %9s  %s\n", \
			"case", "mode", "w/p", "run", "jobs", "secs", "jobs/s", "%limit", "q/job", "upd/j", "sel/j", \
			"conns", "rss_m_KiB", "rss_w_KiB", "note"
		for (i = 1; i <= NR; i++) {
			n = split(rows[i], f, "\t")
			pct = "-"
			if (f[7] ~ /^[0-9.]+$/ && best[f[2]] > 0) pct = sprintf("%.0f%%", 100 * f[7] / best[f[2]])
			printf "%-16s %-7s %4s %3s %6s %8s %7s %6s %6s %6s %6s %5s %9s %9s  %s\n", \
				f[1], f[2], f[3], f[4], f[5], (f[6] ~ /^[0-9.]+$/ ? sprintf("%.2f", f[6]) : f[6]), \
				f[7], pct, f[8], f[9], f[10], f[11], f[12], f[13], f[14]
		}
	}' "$results"
	echo
	echo "rss_m/rss_w: RSS of the kyud master / largest worker after the run (idle rows: at idle);"
	echo "idle rows: queries/s of a running kyud with an empty queue over ${IDLE_SECS}s (a window shorter"
	echo "than [kyud] poll_interval can read 0); conns: new connections (this script's own subtracted)."
fi
