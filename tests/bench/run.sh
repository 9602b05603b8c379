#!/usr/bin/env bash
# kyu benchmark suite: one command, one table.  Never a pass/fail test.
#
#   tests/bench/run.sh                     full run (N=20000, every case, 2 repeats;
#                                          about 40 minutes on 2 cores, most of it
#                                          claims, kyud, scale and idle)
#   N=2000 CASES="limit naive kyud" WORKERS="1 4" tests/bench/run.sh
#                                          quick run (well under 2 minutes)
#   CASES=latency LAT_N=300 tests/bench/run.sh          wake-up latency only (~2 min)
#   CASES=latency LAT_MODES="retry handoff" REPEAT=1 tests/bench/run.sh
#                                          retry and slot handoff rows only (~1 min)
#   CASES=scale SCALE_ROWS=1000000 tests/bench/run.sh   scale, smaller (~4 min)
#   CASES=workflow WF_N=1000 WF_CHAIN=100 tests/bench/run.sh   workflows, small (~1 min)
#   CASES=web WEB_ROWS=1000000 tests/bench/run.sh       the dashboard, smaller (~2 min)
#
# It starts its own mariadbd (scripts/sandbox-db) in a temporary directory on a
# free port, loads sql/schema.sql, and for every case empties kyu_jobs, inserts
# N /bin/true jobs (multi-row INSERTs) and runs them.  jobs/s is always taken
# from the table (database clock): N / (last finished_at - first started_at).
# Statements per job come from SHOW GLOBAL STATUS deltas (this script's own
# queries subtracted).
#
# The floor case (in the main table, as floor:pPbBkK rows): the cheapest queue
# table there is (issue 40), seed 000's PerfectQueue shape in a table of its
# own, claimed and finished in batches by tests/bench/floor.c, each job
# /bin/true; db_ms beside kyud's is what kyu_jobs and kyud's statements add.
#
# The other cases (their own tables at the end):
#   idle     database statements of a running kyud with an empty queue, per
#            second and per poll interval, for each [kyud] poll_interval.
#   latency  INSERT -> start of the job's command, p50/p90/p99/max over LAT_N
#            single-row INSERTs at LAT_RATE per second, three ways: woken by the
#            kyu_notify UDF trigger (sql/notify.sql, plugin loaded from
#            $BUILD_DIR/src/udf/kyu_notify.so), woken by the inserting client
#            itself (it sends "kyu:QUEUE" after each INSERT commits), and by
#            kyud's poll alone (poll_interval LAT_POLL), by the watcher following
#            the binary log (binlog: the server restarted with a ROW binary log
#            for this mode only, wake_poll 0, poll_interval 3600) and by the
#            watcher's short poll (watch: wake_poll 1, poll_interval 3600); for
#            these two also the idle cost over LAT_IDLE_SECS after the run
#            (statements/s, mariadbd CPU) and the watcher's own CPU per 1,000
#            INSERTs, in the note; and the floor: no kyud,
#            the latency program itself claims each row right after its INSERT
#            (kyud's claim, one round trip) and spawns it.  The job is the stamp
#            program, which sends its own start time (the host's monotonic
#            clock) to the latency program; see latency.c.  Also shown: the
#            INSERT's own round trip and started_at - created_at (database
#            clock: INSERT statement to claim statement, no spawn).
#            Two more modes (issue 29), database clock, poll_interval 3600 so
#            that no poll starts anything: retry (LAT_RETRY_N jobs exit 75 on
#            attempt 1 and succeed on attempt 2, backoff_base 1, one kyud:
#            attempt 2's started_at - its run_at, the retry's due time) and
#            handoff (two kyud of LAT_HANDOFF_WORKERS workers, each its own
#            UDP listen port, LAT_HANDOFF_N /bin/true jobs: row slot = a queue
#            with max_running 1, row key = one concurrency key in a plain
#            queue; a job's started_at - the previous one's finished_at, in
#            start order; which daemon ran each, from their debug logs).
#            Each capped at LAT_TIMEOUT seconds ("timed out" in the note).
#   scale    kyu_jobs with SCALE_SMALL and SCALE_ROWS rows, filled with
#            INSERT ... SELECT from the Sequence engine in 1M-row chunks, as
#            "finished" (succeeded within retention) or "future" (waiting,
#            run_at tomorrow) rows.  On top, SCALE_JOBS runnable jobs: claim
#            time of the limit loop (UPDATE+SELECT of SCALE_BATCH rows, one
#            process, no spawn, READ COMMITTED like kyud), then kyud jobs/s on
#            another SCALE_JOBS.  With the SCALE_ROWS finished rows also: kyud's
#            retention DELETE (the statement of store_cleanup, LIMIT = each of
#            SCALE_DEL_BATCHES, back to back) of SCALE_DELETE expired rows, while
#            the limit loop claims SCALE_CLAIM_RATE times per second: claim time
#            during the delete against SCALE_BASE_SECS of the same loop without.
#            (Refilling is cheaper than converting: an UPDATE of every row takes
#            about twice as long as the INSERT, so each row mix is filled once.)
#   memory   VmRSS of the kyud master and of each worker: at idle, and at idle
#            again after MEM_JOBS /bin/true jobs (plus each process's VmHWM).
#   queues   kyud throughput of N /bin/true jobs spread over QUEUE_SETS queues:
#            1 (no kyu_queues rows), 10 (three with a max_running that never
#            binds, one with a rate limit that never binds, one of weight 2),
#            1000 (a few due jobs each, and QUEUE_FUTURE rows due tomorrow in
#            the same queues); jobs/s, statements per job, % of the 1-queue run;
#            then the idle statements/s of that kyud with the 1000 queues'
#            future rows still there (poll_interval 30, QUEUE_IDLE_SECS).
#   tenants  many queues served in turn (issue 43; not in the default CASES):
#            TENANT_ROWS waiting /bin/true jobs in one queue, then the same
#            over TENANT_QUEUES queues (inserted queue after queue), each run
#            by one kyud of TENANT_WORKERS workers for TENANT_SECS seconds:
#            jobs/s, queues that started a job, seconds from kyud's start
#            until each queue's first start (p50/p99/max over the queues that
#            started one), statements and rows read (Handler_read_*) per
#            job, mariadbd CPU ms per job.
#   history  the partition-based retention: finished rows moved to a
#            partitioned kyu_jobs_history (cost per job), retention by DROP
#            PARTITION (claim times around it); not in the default CASES.
#   daemons  DAEMONS kyud side by side (each on its own loopback address),
#            N jobs: jobs/s, claim p50/p99 from their histograms, deadlocks
#            and lock waits per 1,000 claims, statements per job, CPU busy.
#   web      every page of kyu web (build/kyu-web) on a kyu_jobs of WEB_ROWS rows:
#            finished over the last 24 h (1% failed) in four queues, 100000
#            waiting for tomorrow, 10000 due, 100 running, 50 retrying, and
#            their kyu_minutes rows (the same 24 h counted by WEB_WRITERS
#            workers, a row per minute, queue and worker); each page's first
#            request, then WEB_REPEAT more (median and max, ms, HTTP included)
#            from one client process, and kyu-web's VmRSS after. Then the
#            overview once more without kyu_minutes (a schema older than 4:
#            counted on kyu_jobs, "overview_kyu_jobs"). The fill goes without
#            kyu_jobs' INSERT triggers (they change nothing in these rows and
#            cost 90% of it): 10M rows in about 10 minutes on 2 cores.
#   live     what [kyud] live_output costs: LIVE_JOBS jobs that each print LIVE_LINES
#            lines of 80 bytes a second, run by LIVE_WORKERS workers, measured for
#            LIVE_SECS with every interval of LIVE_INTERVALS (0: off): UPDATEs/s,
#            bytes received and redo log written by the server per second, CPU of
#            mariadbd and of kyud's workers; not in the default CASES.
#   workflow the shapes of issue 27's workflows, each run by one kyud of WF_WORKERS
#            workers (/bin/true jobs): fan-out (one upstream, WF_N dependents:
#            from its end to the first and the last dependent started, and to
#            the last ended), fan-in (WF_N upstreams, one dependent: statements,
#            inner statements, CALLs and server CPU per upstream end, at each
#            size of WF_FANIN_SIZES, and the ends' rate over their first and
#            last tenth: all equal when an end costs the same however many have
#            ended; the dependent has after_batch, as an after of 10,000 ids
#            does not fit the 64 KiB of its TEXT column), chain (WF_CHAIN steps:
#            step-to-step latency, the next step's started_at - the previous
#            one's finished_at), and plain (WF_N jobs without upstreams: the
#            baseline). Also what inserting the shape and settling its 'new'
#            items costs.
#   intake   what the INSERT check triggers (kyu_jobs_check, max_waiting, after,
#            traceparent) cost an INSERT: INTAKE_N single-row INSERTs (one
#            session), INTAKE_MULTI_REPS INSERT ... SELECTs of 1,000 rows (timed
#            by the server, SYSDATE(6) around each: median and max), and one
#            INSERT ... SELECT of INTAKE_BULK rows; without any of them, with
#            all but kyu_jobs_check (schema version 6's), with all of them and
#            no kyu_queues row, and into a queue holding its bound of waiting
#            jobs for each bound in INTAKE_BOUNDS (every INSERT refused).
#
# Environment (defaults in brackets):
#   N             jobs per throughput case [20000]
#   REPEAT        runs of every case [2] (idle: IDLE_REPEAT; scale and memory: 1)
#   CASES         any of: claims limit naive floor kyud idle latency scale memory queues intake web tenants
#                 daemons workflow history live ["claims limit naive floor kyud idle latency scale memory
#                 queues intake web daemons workflow"]
#   MODES         argv and/or command: how the job is stored [argv command]
#   LIMIT_SETS    limit loop variants, procs:batch:inflight ["1:100:2 1:100:4 2:100:2"]
#   NAIVE_PROCS   naive pollers [1]        NAIVE_TIME  seconds per naive run [15]
#   FLOOR_SETS    floor variants, procs:batch:inflight ["1:100:4 2:100:4"]
#   FLOOR_FINISH  update (the seed's finish) or delete [update]
#   WORKERS       kyud workers per case ["1 2 4 8"]
#   KYUD          kyud binary [$BUILD_DIR/kyud]     BUILD_DIR [<repo>/build]
#   KYUD_SLOTS    [kyud] slots (empty: kyud default)   KYUD_CLAIM  [kyud] claim (empty: default)
#   KYUD_EXTRA    extra lines for [kyud], e.g. $'poll_interval = 5\nlease = 30'
#   KYUD_STALL    give up on a kyud case after this many seconds without progress [30]
#   IDLE_WORKERS  worker counts for the idle measurement ["1 8"]
#   IDLE_POLLS    [kyud] poll_interval values for it, seconds ["30 5"]
#   IDLE_SECS     measuring window [per interval: max(60, 2.2 x poll_interval), so
#                 that it always holds two polls despite the +-10% jitter]
#   IDLE_REPEAT   runs of each idle measurement [1]
#   LAT_N         INSERTs per latency run [1000]    LAT_RATE  INSERTs per second [50]
#   LAT_MODES     any of: floor udf client poll retry handoff ["floor udf client poll retry handoff"]
#   LAT_RETRY_N   jobs of the retry run [100]   LAT_RETRY_LEASE  its kyud's lease, s [15]
#   LAT_HANDOFF_N jobs of each handoff run [200]   LAT_HANDOFF_WORKERS  workers per daemon [1]
#   LAT_HANDOFF_LEASE  the handoff daemons' lease, s [60]   LAT_TIMEOUT  cap of a retry/handoff run, s [60]
#   LAT_POLL      poll_interval of the poll-only run, seconds [1]
#   LAT_WORKERS   kyud workers in the latency runs [2]
#   LAT_UDF       the plugin [$BUILD_DIR/src/udf/kyu_notify.so]; if missing, no udf run
#   SCALE_ROWS    rows of the big table [10000000]   SCALE_SMALL  rows of the small one [10000]
#   SCALE_MIXES   any of: finished future ["finished future"]
#   SCALE_JOBS    runnable jobs added on top, per measurement [20000]
#   SCALE_BATCH   rows per claim of the limit loop [8]
#   SCALE_WORKERS kyud workers for the scale throughput [4]
#   SCALE_DELETE  expired rows for the retention delete, 0 = skip it [1000000]
#   SCALE_DEL_BATCHES  LIMIT of the delete (cleanup_batch) ["1000 10000"]
#   SCALE_CLAIM_RATE   claims per second during (and before) the delete [50]
#   SCALE_BASE_SECS    length of the run without the delete [10]
#   MEM_WORKERS   kyud workers for the memory case [4]   MEM_JOBS  jobs run [100000]
#   CLAIM_SHAPES  ["plain join skip_locked part8"]; partN = the seeds' partitioned claim   CLAIM_PROCS ["1 2 4 8"]
#   CLAIM_BATCHES ["1 10 100"]   CLAIM_ISOLATION ["rr rc"]   CLAIM_N [10000; 3000 for batch 1]
#   QUEUE_SETS    queue counts of the queues case ["1 10 1000"]   QUEUE_WORKERS  workers [2]
#   QUEUE_FUTURE  not-yet-due rows of the 1000-queue run [100000]   QUEUE_IDLE_SECS [66]
#   LIVE_JOBS     running jobs of the live case [64]   LIVE_WORKERS  kyud workers [2]
#   LIVE_LINES    lines each job prints per second [10]   LIVE_SECS  measuring window [30]
#   LIVE_INTERVALS  [kyud] live_output values ["0 1 2 3 5"]
#   INTAKE_N      INSERTs per intake run [3000]   INTAKE_BOUNDS ["100 1000 10000"]
#   INTAKE_BULK   rows of the intake case's INSERT ... SELECT, with and without the checks [50000]
#   INTAKE_MULTI_REPS  1,000-row INSERTs of each intake run [20]
#   BENCH_SQL     a file of SQL run as root after sql/schema.sql is loaded (each
#                 time), e.g. a draft trigger whose cost the kyud case measures []
#   HIST_KEEP     kept rows of the history table [9000000]  HIST_DROP  rows in the dropped partition [1000000]
#   DAEMONS       daemon counts of the daemons case ["1 2 4 8"]   DAEMON_WORKERS  workers each [2]
#   DAEMON_MODES  true (N /bin/true jobs) and/or sleep (DAEMON_SLEEP_N per daemon of
#                 /bin/sleep DAEMON_SLEEP: slot-bound, shows claims scaling) ["true sleep"]
#   WEB_ROWS      rows of the web case's table [10000000]   WEB_REPEAT  requests per page [5]
#   WEB_WRITERS   workers whose kyu_minutes rows the web case fills [16]
#   WF_N          dependents of the fan-out, upstreams of the fan-in, plain jobs [10000]
#   WF_CHAIN      steps of the chain [1000]   WF_WORKERS  kyud workers [2]
#   WF_SHAPES     any of: plain fanout fanin chain ["plain fanout fanin chain"]
#   WF_FANIN_SIZES  upstream counts of the fan-in runs ["WF_N/10 WF_N"]
#   BENCH_PORT    first port to try [3420]     KEEP=1 keeps the temporary directory
#
# The latency case gives kyud a UDP listen port (a random free one from
# 20000-59999); the other kyud runs have listen empty (the memory case polls
# every second).  Its udf run installs the triggers of sql/notify.sql as root
# and removes them again (sql/unnotify.sql) before the next run.  The scale
# case needs about 3 GB in TMPDIR for its 10M-row table.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-20000}
REPEAT=${REPEAT:-2}
CASES=${CASES:-claims limit naive floor kyud idle latency scale memory queues intake web daemons workflow}
WF_N=${WF_N:-10000}
WF_CHAIN=${WF_CHAIN:-1000}
WF_WORKERS=${WF_WORKERS:-2}
WF_SHAPES=${WF_SHAPES:-plain fanout fanin chain}
WF_FANIN_SIZES=${WF_FANIN_SIZES:-$((WF_N / 10)) $WF_N}
DAEMONS=${DAEMONS:-1 2 4 8}
DAEMON_WORKERS=${DAEMON_WORKERS:-2}
DAEMON_MODES=${DAEMON_MODES:-true sleep}
DAEMON_SLEEP=${DAEMON_SLEEP:-0.5}
DAEMON_SLEEP_N=${DAEMON_SLEEP_N:-320}
HIST_KEEP=${HIST_KEEP:-9000000}
HIST_DROP=${HIST_DROP:-1000000}
QUEUE_SETS=${QUEUE_SETS:-1 10 1000}
TENANT_ROWS=${TENANT_ROWS:-1000000}
TENANT_QUEUES=${TENANT_QUEUES:-10000}
TENANT_WORKERS=${TENANT_WORKERS:-2}
TENANT_SECS=${TENANT_SECS:-60}
QUEUE_WORKERS=${QUEUE_WORKERS:-2}
QUEUE_FUTURE=${QUEUE_FUTURE:-100000}
QUEUE_IDLE_SECS=${QUEUE_IDLE_SECS:-66}
INTAKE_N=${INTAKE_N:-3000}
INTAKE_BULK=${INTAKE_BULK:-50000}
INTAKE_MULTI_REPS=${INTAKE_MULTI_REPS:-20}
BENCH_SQL=${BENCH_SQL:-}
LIVE_JOBS=${LIVE_JOBS:-64}
LIVE_WORKERS=${LIVE_WORKERS:-2}
LIVE_LINES=${LIVE_LINES:-10}
LIVE_SECS=${LIVE_SECS:-30}
LIVE_INTERVALS=${LIVE_INTERVALS:-0 1 2 3 5}
INTAKE_BOUNDS=${INTAKE_BOUNDS:-100 1000 10000}
WEB_ROWS=${WEB_ROWS:-10000000}
WEB_REPEAT=${WEB_REPEAT:-5}
WEB_WRITERS=${WEB_WRITERS:-16}
MODES=${MODES:-argv command}
LIMIT_SETS=${LIMIT_SETS:-1:100:2 1:100:4 2:100:2}
NAIVE_PROCS=${NAIVE_PROCS:-1}
NAIVE_TIME=${NAIVE_TIME:-15}
FLOOR_SETS=${FLOOR_SETS:-1:100:4 2:100:4}
FLOOR_FINISH=${FLOOR_FINISH:-update}
WORKERS=${WORKERS:-1 2 4 8}
BUILD_DIR=${BUILD_DIR:-$root/build}
KYUD=${KYUD:-$BUILD_DIR/kyud}
KYUD_SLOTS=${KYUD_SLOTS:-}
KYUD_CLAIM=${KYUD_CLAIM:-}
KYUD_EXTRA=${KYUD_EXTRA:-}
KYUD_STALL=${KYUD_STALL:-30}
IDLE_WORKERS=${IDLE_WORKERS:-1 8}
IDLE_SECS=${IDLE_SECS:-}
IDLE_POLLS=${IDLE_POLLS:-30 5}
IDLE_REPEAT=${IDLE_REPEAT:-1}
LAT_N=${LAT_N:-1000}
LAT_RATE=${LAT_RATE:-50}
LAT_MODES=${LAT_MODES:-floor udf client binlog watch poll retry handoff}
LAT_IDLE_SECS=${LAT_IDLE_SECS:-10}
LAT_RETRY_N=${LAT_RETRY_N:-100}
LAT_HANDOFF_N=${LAT_HANDOFF_N:-200}
LAT_HANDOFF_WORKERS=${LAT_HANDOFF_WORKERS:-1}
LAT_RETRY_LEASE=${LAT_RETRY_LEASE:-15}
LAT_HANDOFF_LEASE=${LAT_HANDOFF_LEASE:-60}
LAT_TIMEOUT=${LAT_TIMEOUT:-60}
LAT_POLL=${LAT_POLL:-1}
LAT_WORKERS=${LAT_WORKERS:-2}
LAT_UDF=${LAT_UDF:-$BUILD_DIR/src/udf/kyu_notify.so}
SCALE_ROWS=${SCALE_ROWS:-10000000}
SCALE_SMALL=${SCALE_SMALL:-10000}
SCALE_MIXES=${SCALE_MIXES:-finished future}
SCALE_JOBS=${SCALE_JOBS:-20000}
SCALE_BATCH=${SCALE_BATCH:-8}
SCALE_WORKERS=${SCALE_WORKERS:-4}
SCALE_DELETE=${SCALE_DELETE:-1000000}
SCALE_DEL_BATCHES=${SCALE_DEL_BATCHES:-1000 10000}
SCALE_CLAIM_RATE=${SCALE_CLAIM_RATE:-50}
SCALE_BASE_SECS=${SCALE_BASE_SECS:-10}
MEM_WORKERS=${MEM_WORKERS:-4}
MEM_JOBS=${MEM_JOBS:-100000}
CLAIM_SHAPES=${CLAIM_SHAPES:-plain join skip_locked part8}
CLAIM_PROCS=${CLAIM_PROCS:-1 2 4 8}
CLAIM_BATCHES=${CLAIM_BATCHES:-1 10 100}
CLAIM_ISOLATION=${CLAIM_ISOLATION:-rr rc}
CLAIM_N=${CLAIM_N:-}
BENCH_PORT=${BENCH_PORT:-3420}

has_case() { case " $CASES " in *" $1 "*) return 0 ;; esac; return 1; }
note() { echo "bench: $*" >&2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kyu-bench.XXXXXX")
kyud_pid=
extra_pids=() # the latency case's second daemon (handoff)
cleanup() {
	if [ -n "$kyud_pid" ] && kill -0 "$kyud_pid" 2>/dev/null; then
		kill -INT "$kyud_pid" 2>/dev/null || true
		sleep 1
		kill -KILL "$kyud_pid" 2>/dev/null || true
	fi
	for p in "${extra_pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	"$root/scripts/sandbox-db" stop "$tmp/db" >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then note "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- bench programs: from the build, else built here -----------------------------
# limit and latency link kyuworker (the statements kyud ships), so they are
# built by CMake, in a private build directory when BUILD_DIR has none.
bin=$BUILD_DIR/tests/bench
if [ ! -x "$bin/limit" ] || [ ! -x "$bin/naive" ] || [ ! -x "$bin/latency" ] || [ ! -x "$bin/stamp" ] || [ ! -x "$bin/floor" ]; then
	note "bench programs not built in $BUILD_DIR; building them in $tmp/build"
	{ cmake -S "$root" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release &&
		cmake --build "$tmp/build" -j "$(nproc)" \
			--target bench_limit bench_naive bench_latency bench_stamp bench_floor; } >"$tmp/build.log" 2>&1 ||
		{ note "building the bench programs failed:"; tail -n 20 "$tmp/build.log" >&2; exit 1; }
	bin=$tmp/build/tests/bench
fi
bin=$(cd "$bin" && pwd) # the stamp program's path goes into jobs' argv

# --- private server ------------------------------------------------------------
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=$BENCH_PORT
while port_busy "$port"; do port=$((port + 1)); done
# The latency case's udf run needs kyu_notify.so in the server's plugin
# directory: a directory of our own holding a copy, as an installation would.
have_udf=0
if has_case latency && [ -f "$LAT_UDF" ]; then
	mkdir -p "$tmp/plugin"
	cp "$LAT_UDF" "$tmp/plugin/kyu_notify.so"
	export KYU_PLUGIN_DIR=$tmp/plugin
	have_udf=1
fi
"$root/scripts/sandbox-db" start "$tmp/db" "$port" >/dev/null
unset KYU_PLUGIN_DIR
sock=$tmp/db/mysqld.sock
export KYU_DB_SOCKET=$sock
sql() { mariadb --no-defaults -ukyu -pkyu --socket="$sock" -N -B kyu "$@"; }
sql_root() { mariadb --no-defaults -uroot --socket="$sock" -N -B kyu; } # SQL on stdin
load_schema() {
	sql <"$root/sql/schema.sql"
	if [ -n "$BENCH_SQL" ]; then sql_root <"$BENCH_SQL"; fi
}
load_schema
[ -z "$BENCH_SQL" ] || note "loaded BENCH_SQL $BENCH_SQL after sql/schema.sql"
db_pid=$(cat "$tmp/db/mysqld.pid")

status_snapshot() { # prints: questions com_update(+multi) com_select connections
	sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN
	        ('Questions','Com_update','Com_update_multi','Com_select','Connections')" |
		awk '{v[$1]=$2} END {print v["Questions"]+0, v["Com_update"]+v["Com_update_multi"],
		      v["Com_select"]+0, v["Connections"]+0}'
}
# CPU per job (issue 24): what the loop or kyud costs beside the jobs, in ms
# of CPU per job. own: the limit loop's claimer processes (getrusage, printed
# by limit) or kyud's supervisor and workers (their own utime + stime, read
# from /proc just before kyud stops); db: mariadbd; box: the whole machine
# from /proc/stat (the jobs themselves included), the figure that compares
# one machine's runs best. All in clock ticks of /proc (CLK_TCK).
clk_tck=$(getconf CLK_TCK)
box_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8}' /proc/stat; }
self_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
tree_ticks() { # the supervisor $1 and its direct children (the workers)
	local t c
	t=$(self_ticks "$1")
	for c in $(children "$1"); do t=$((t + $(self_ticks "$c"))); done
	echo "$t"
}
ms_per_job() { awk -v t="$1" -v n="$2" -v hz="$clk_tck" 'BEGIN {if (n > 0) printf "%.3f", t * 1000 / hz / n; else print "-"}'; }
# What one status_snapshot itself adds to Questions (and Com_select: none, it is a SHOW).
read -r q0 _ _ _ < <(status_snapshot)
read -r q1 _ _ _ < <(status_snapshot)
self_q=$((q1 - q0))

fill() { # fill N argv|command|sleep
	local n=$1 col=argv val="'[\"/bin/true\"]'"
	[ "$2" = command ] && { col=command; val="'/bin/true'"; }
	[ "$2" = sleep ] && val="'[\"/bin/sleep\", \"$DAEMON_SLEEP\"]'"
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

wait_polls=0 # queries of wait_jobs so far, for the cases that subtract them
results=$tmp/results   # case mode n rep jobs secs jobs/s q/job upd/job sel/job conns rss_m rss_w note
claims=$tmp/claims
idle_res=$tmp/idle     # one line per run of each new case, tab-separated
lat_res=$tmp/latency
scale_res=$tmp/scale
del_res=$tmp/delete
mem_res=$tmp/memory
queue_res=$tmp/queues
tenant_res=$tmp/tenants
: >"$tenant_res"
intake_res=$tmp/intake
live_res=$tmp/live
: >"$live_res"
dmn_res=$tmp/daemons
hist_res=$tmp/history
: >"$hist_res"
: >"$dmn_res"
web_res=$tmp/web
: >"$web_res"
wf_res=$tmp/workflow
: >"$wf_res"
: >"$queue_res"
: >"$intake_res"
: >"$results"
: >"$claims"
: >"$idle_res"
: >"$lat_res"
: >"$scale_res"
: >"$del_res"
: >"$mem_res"
row() { # row FILE FIELD...: one tab-separated line
	local f=$1
	shift
	(IFS=$'\t'; printf '%s\n' "$*") >>"$f"
}
add() { printf '%s\n' "$*" | tr ' ' '\t' | sed 's/\t/ /17g' >>"$results"; }

echo "kyu bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -sr)," \
	"$(mariadb --version | sed 's/.*Distrib \([^,]*\),.*/MariaDB \1/'), N=$N, repeats=$REPEAT"

# --- claim statement shapes under contention (no spawning) --------------------
if has_case claims; then
	echo "claim shapes: each process loops kyud's claim (UPDATE + SELECT, one round trip) and finish (UPDATE ... IN) without spawning"
	for rep in $(seq 1 "$REPEAT"); do
		for iso in $CLAIM_ISOLATION; do
			for b in $CLAIM_BATCHES; do
				n=${CLAIM_N:-$([ "$b" = 1 ] && echo 3000 || echo 10000)}
				for p in $CLAIM_PROCS; do
					for s in $CLAIM_SHAPES; do
						# partN: the seeds' partitioned claim, kyud's plain
						# claim inside one of N partitions (limit --partitions).
						sopt=(-s "$s")
						case $s in part*) sopt=(-s plain --partitions "${s#part}") ;; esac
						line=$("$bin/limit" --fill -n "$n" -b "$b" -k 0 -p "$p" "${sopt[@]}" \
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
				line=$(BENCH_DB_PID=$db_pid "$bin/limit" --fill -n "$N" -p "$lp" -b "$lb" -k "$lk" \
					"${copt[@]}" --timeout 600 2>&1) || { note "limit failed: $line"; continue; }
				nt="deadlocks=$(kv deadlocks "$line"),double=$(kv double_claims "$line")"
				# CPU of the run window alone (limit reads /proc itself).
				add "limit:p${lp}b${lb}k${lk}" "$mode" "$lp" "$rep" "$(kv succeeded "$line")" \
					"$(kv db_span_s "$line")" "$(kv db_jobs_per_s "$line")" \
					"$(kv q_per_job "$line")" "$(kv upd_per_job "$line")" \
					"$(kv sel_per_job "$line")" "$lp" - - "$(kv own_cpu_ms_per_job "$line")" \
					"$(kv db_cpu_ms_per_job "$line")" "$(kv box_cpu_ms_per_job "$line")" "$nt"
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
				"$(kv sel_per_job "$line")" "$NAIVE_PROCS" - - - - - \
				"stopped_after_${NAIVE_TIME}s,deadlocks=$(kv deadlocks "$line")"
		done
	done
fi

# --- the floor: seed 000's minimal queue table (issue 40) ---------------------------
# Its own table, floor_queue (see floor.c); argv mode only (every job is
# /bin/true); procs:batch:inflight as the limit loop's sets.
if has_case floor; then
	for set in $FLOOR_SETS; do
		IFS=: read -r fp fb fk <<<"$set"
		for rep in $(seq 1 "$REPEAT"); do
			line=$(BENCH_DB_PID=$db_pid "$bin/floor" -n "$N" -p "$fp" -b "$fb" -k "$fk" \
				--finish "$FLOOR_FINISH" --timeout 600 2>&1) || { note "floor failed: $line"; continue; }
			add "floor:p${fp}b${fb}k${fk}" argv "$fp" "$rep" "$(kv jobs "$line")" \
				"$(kv secs "$line")" "$(kv jobs_per_s "$line")" \
				"$(kv q_per_job "$line")" "$(kv upd_per_job "$line")" \
				"$(kv sel_per_job "$line")" "$fp" - - "$(kv own_cpu_ms_per_job "$line")" \
				"$(kv db_cpu_ms_per_job "$line")" "$(kv box_cpu_ms_per_job "$line")" \
				"finish=$FLOOR_FINISH,left=$(kv left "$line"),failed=$(kv failed "$line")"
		done
	done
	sql <<<"DROP TABLE IF EXISTS floor_queue"
fi

# --- kyud ----------------------------------------------------------------------------
kyud_ok=1
if has_case kyud || has_case idle || has_case latency || has_case scale || has_case memory ||
	has_case queues || has_case daemons || has_case live || has_case workflow; then
	if [ ! -x "$KYUD" ]; then
		note "kyud not found at $KYUD (set KYUD or BUILD_DIR); skipping the kyud cases"
		echo "note: kyud cases skipped: no kyud binary at $KYUD"
		kyud_ok=0
	fi
fi

# Set by the newer cases for one kyud run: its listen address, and lines
# written after KYUD_EXTRA (in kyu.ini the last value of a key wins).
conf_listen=
conf_extra=
write_conf() { # write_conf WORKERS FILE
	{
		echo "[database]"
		echo "socket = $sock"
		echo "user = kyu"
		echo "password = kyu"
		echo "database = kyu"
		echo "[kyud]"
		echo "workers = $1"
		echo "listen = $conf_listen"
		# No watcher unless a case asks for it (the latency case's binlog
		# and watch modes): the other cases measure the claim loop.
		echo "wake_binlog = off"
		echo "wake_poll = 0"
		[ -n "$KYUD_SLOTS" ] && echo "slots = $KYUD_SLOTS"
		[ -n "$KYUD_CLAIM" ] && echo "claim = $KYUD_CLAIM"
		[ -n "$KYUD_EXTRA" ] && printf '%s\n' "$KYUD_EXTRA"
		[ -n "$conf_extra" ] && printf '%s\n' "$conf_extra"
		# kyud refuses to run jobs as root unless told so.
		[ "$(id -u)" != 0 ] || printf '[queue.*]\nuser = root\n'
	} >"$2"
	# It holds the password: kyud refuses a file every user may read.
	chmod 0600 "$2"
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
	for poll in $IDLE_POLLS; do
		secs=${IDLE_SECS:-$(awk -v p="$poll" 'BEGIN {s = 2.2 * p; s = (s == int(s)) ? s : int(s) + 1; print (s < 60 ? 60 : s)}')}
		for w in $IDLE_WORKERS; do
			for rep in $(seq 1 "$IDLE_REPEAT"); do
				fill 0 argv
				log=$tmp/kyud-idle-$w-$poll-$rep.log
				conf_extra="poll_interval = $poll"
				if ! start_kyud "$w" "$log"; then
					row "$idle_res" "$w" "$poll" "$rep" "$secs" - - - - - - - - kyud_failed
					conf_extra=
					continue
				fi
				conf_extra=
				note "idle: workers=$w poll_interval=$poll: measuring ${secs}s"
				sleep 3
				read -r qa ua sa ca < <(status_snapshot)
				sleep "$secs"
				read -r qb ub sb cb < <(status_snapshot)
				read -r rm rw < <(rss_pair)
				stop_kyud
				q=$((qb - qa - self_q))
				read -r qps qpi < <(awk -v d="$q" -v s="$secs" -v p="$poll" \
					'BEGIN {printf "%.3f %.2f\n", d / s, d / s * p}')
				row "$idle_res" "$w" "$poll" "$rep" "$secs" "$q" "$qps" "$qpi" $((ub - ua)) $((sb - sa)) \
					$((cb - ca - 1)) "$rm" "$rw" ok
			done
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
				ba=$(box_busy) da=$(self_ticks "$db_pid")
				start_kyud "$w" "$log" || { add kyud "$mode" "$w" "$rep" - - - - - - - - - - - - kyud_failed; continue; }
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
				rss="- -" own=-
				[ -n "$kyud_pid" ] && rss=$(rss_pair) && own=$(tree_ticks "$kyud_pid")
				read -r qb ub sb cb < <(status_snapshot)
				bb=$(box_busy) dbb=$(self_ticks "$db_pid")
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
					"$([ "$own" = - ] && echo - || ms_per_job "$own" "$done")" \
					"$(ms_per_job $((dbb - da)) "$done")" "$(ms_per_job $((bb - ba)) "$done")" \
					"${why:-ok}${dbl:+,attempts>1:$dbl}"
				[ -n "$why" ] && note "kyud $mode workers=$w: $why; log: $(tail -n 2 "$log" | tr '\n' ' ')"
			done
		done
	done
fi

# --- helpers of the latency, scale and memory cases ---------------------------------
# Until no row matching the condition is waiting or running; sets why on failure.
wait_jobs() { # wait_jobs CONDITION
	local left last=-1 stall=0
	why=
	while :; do
		sleep 0.5
		left=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE ($1) AND status IN ('waiting','running')")
		wait_polls=$((wait_polls + 1))
		[ "$left" = 0 ] && return 0
		if ! kill -0 "$kyud_pid" 2>/dev/null; then why=kyud_exited; kyud_pid=; return 1; fi
		if [ "$left" = "$last" ]; then
			stall=$((stall + 1))
			[ $((stall / 2)) -ge "$KYUD_STALL" ] && { why="no_progress_${KYUD_STALL}s"; return 1; }
		else
			stall=0 last=$left
		fi
	done
}
# kyud with a UDP listen address on a random free port (sets conf_listen).
start_kyud_listen() { # start_kyud_listen WORKERS LOG
	local p
	for _ in 1 2 3 4 5; do
		p=$((20000 + RANDOM % 40000))
		ss -Huln "sport = :$p" 2>/dev/null | grep . >/dev/null && continue
		conf_listen=127.0.0.1:$p
		start_kyud "$1" "$2" && return 0
		grep -qi 'udp\|listen\|bind' "$2" 2>/dev/null || return 1
	done
	return 1
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}'; }
max_seq() { sql -e "SELECT COALESCE(MAX(seq), 0) FROM kyu_jobs"; }
kyud_rate() { # kyud_rate CONDITION: "jobs jobs/s" of the finished rows matching it
	sql -e "SELECT SUM(status = 'succeeded'),
		IFNULL(ROUND(SUM(status = 'succeeded') /
		      (TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) / 1e6)), '-')
		FROM kyu_jobs WHERE $1"
}

# --- several daemons on one database ---------------------------------------------
# DAEMONS kyud side by side, each on its own loopback address (its wake-up
# and metrics sockets on 127.0.0.(20+i)), DAEMON_WORKERS workers each, poll
# every second; N /bin/true jobs inserted once they are all ready.  Claim
# round trips come from the daemons' own histograms (kyu_claim_duration_seconds,
# summed over daemons; the quantile is interpolated inside its bucket, as
# Prometheus does); lock waits from Innodb_row_lock_waits; CPU from /proc:
# the machine's busy share over the run and mariadbd's part of it.
cpu_busy() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
proc_cpu() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
scrape_sum() { # scrape_sum FILE...: "claims deadlocks p50_ms p99_ms" over the scrapes
	python3 - "$@" <<'PY'
import re, sys
claims = dl = 0.0
buckets = {}
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'^(\w+)(\{[^}]*\})? (\S+)$', line.strip())
        if not m:
            continue
        name, labels, v = m.group(1), m.group(2) or '', float(m.group(3))
        if name == 'kyu_claims_total':
            claims += v
        elif name == 'kyu_deadlocks_retried_total':
            dl += v
        elif name == 'kyu_claim_duration_seconds_bucket':
            le = re.search(r'le="([^"]+)"', labels).group(1)
            le = float('inf') if le == '+Inf' else float(le)
            buckets[le] = buckets.get(le, 0) + v
def q(p):
    items = sorted(buckets.items())
    if not items or items[-1][1] == 0:
        return '-'
    want, lo, below = p * items[-1][1], 0.0, 0.0
    for le, c in items:
        if c >= want:
            if le == float('inf'):
                return '>%.0f' % (lo * 1000)
            return '%.2f' % ((lo + (le - lo) * (want - below) / max(c - below, 1)) * 1000)
        lo, below = le, c
    return '-'
print('%.0f %.0f %s %s' % (claims, dl, q(0.5), q(0.99)))
PY
}
if has_case daemons && [ "$kyud_ok" = 1 ]; then
	mariadbd_pid=$(cat "$tmp/db/mysqld.pid")
	for dmode in $DAEMON_MODES; do
	for d in $DAEMONS; do
		for rep in $(seq 1 "$REPEAT"); do
			dn=$N
			[ "$dmode" = sleep ] && dn=$((DAEMON_SLEEP_N * d))
			fill 0 argv
			pids=() logs=() mports=() why=
			for i in $(seq 1 "$d"); do
				ip=127.0.0.$((20 + i))
				up=$((20000 + RANDOM % 20000)) mp=$((40000 + RANDOM % 20000))
				conf=$tmp/kyu-daemon-$i.ini
				conf_listen=$ip:$up
				conf_extra=$(printf 'poll_interval = 1\nmetrics = %s:%s\nmetrics_interval = 3600' "$ip" "$mp")
				write_conf "$DAEMON_WORKERS" "$conf"
				conf_listen= conf_extra=
				logs+=("$tmp/kyud-daemons-$d-$rep-$i.log")
				mports+=("$ip:$mp")
				"$KYUD" -c "$conf" 2>"${logs[-1]}" &
				pids+=($!)
			done
			for i in "${!pids[@]}"; do
				for _ in $(seq 1 150); do
					grep -q 'ready:' "${logs[$i]}" 2>/dev/null && break
					kill -0 "${pids[$i]}" 2>/dev/null || break
					sleep 0.1
				done
				grep -q 'ready:' "${logs[$i]}" 2>/dev/null ||
					why="daemon_$((i + 1))_not_ready:$(tail -n 1 "${logs[$i]}" | tr ' \t' '__')"
			done
			read -r qa ua sa ca < <(status_snapshot)
			lwa=$(sql -e "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'" | awk '{print $2}')
			read -r ba ta < <(cpu_busy)
			ma=$(proc_cpu "$mariadbd_pid")
			[ -z "$why" ] && fill "$dn" "$dmode"
			left=$dn last=$dn stall=0 polls=0
			while [ -z "$why" ]; do
				sleep 0.5
				left=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting','running')")
				polls=$((polls + 1))
				[ "$left" = 0 ] && break
				if [ "$left" = "$last" ]; then
					stall=$((stall + 1))
					[ $((stall / 2)) -ge "$KYUD_STALL" ] && why="no_progress_${KYUD_STALL}s"
				else
					stall=0 last=$left
				fi
			done
			read -r bb tb < <(cpu_busy)
			mb=$(proc_cpu "$mariadbd_pid")
			lwb=$(sql -e "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'" | awk '{print $2}')
			read -r qb ub sb cb < <(status_snapshot)
			scrapes=()
			for i in "${!mports[@]}"; do
				f=$tmp/metrics-$d-$rep-$i.txt
				python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
					"http://${mports[$i]}/metrics" >"$f" 2>/dev/null && scrapes+=("$f")
			done
			for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
			for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
			read -r claims dl p50 p99 < <(scrape_sum "${scrapes[@]}")
			read -r done span dbl < <(sql -e "SELECT SUM(status='succeeded'),
				TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) / 1e6,
				SUM(attempts > 1) FROM kyu_jobs")
			[ "$done" = NULL ] && done=0
			hz=$(getconf CLK_TCK)
			row "$dmn_res" "$dmode" "$d" "$DAEMON_WORKERS" "$rep" "$done" \
				"$(awk -v d="$done" -v s="$span" 'BEGIN {if (s + 0 > 0) printf "%.0f", d / s; else print "-"}')" \
				"$p50" "$p99" "$claims" \
				"$(awk -v n="$done" -v c="$claims" 'BEGIN {if (c > 0) printf "%.1f", n / c; else print "-"}')" \
				"$(awk -v x="$dl" -v c="$claims" 'BEGIN {if (c > 0) printf "%.1f", x * 1000 / c; else print "-"}')" \
				"$(awk -v x="$((lwb - lwa))" -v c="$claims" 'BEGIN {if (c > 0) printf "%.1f", x * 1000 / c; else print "-"}')" \
				"$(awk -v q="$((qb - qa - self_q - polls * 2))" -v n="$done" 'BEGIN {if (n > 0) printf "%.2f", q / n; else print "-"}')" \
				"$(awk -v b="$((bb - ba))" -v t="$((tb - ta))" 'BEGIN {if (t > 0) printf "%.0f%%", 100 * b / t; else print "-"}')" \
				"$(awk -v m="$((mb - ma))" -v b="$((bb - ba))" 'BEGIN {if (b > 0) printf "%.0f%%", 100 * m / b; else print "-"}')" \
				"${why:-ok}$([ "${dbl:-0}" = 0 ] || echo ",attempts>1:$dbl")"
			[ -n "$why" ] && note "daemons=$d: $why"
		done
	done
	done
fi

# --- the latency case's retry and handoff rows (issue 29) ---------------------------
# Both from the database clock: how long a job that could start waited.
# kyud runs with poll_interval 3600, so no poll starts anything here.
lat_wake() { # lat_wake QUEUE ADDR...: the datagram kyu submit sends, to each
	local q=$1 a
	shift
	for a in "$@"; do printf 'kyu:%s' "$q" 2>/dev/null >"/dev/udp/${a%:*}/${a##*:}" || true; done
}
# lat_until QUERY WANT SECS: until QUERY (a count) reaches WANT; 1 after
# SECS seconds. Its statements are counted in lat_polls.
lat_until() {
	local end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		lat_polls=$((lat_polls + 1))
		[ "$(sql -e "$1")" -ge "$2" ] && return 0
		sleep 0.2
	done
	return 1
}
# lat_quant: numbers (ms) on stdin -> "count p50 p90 p99 max mean" (nearest rank)
lat_quant() {
	sort -n | awk '{v[NR] = $1; s += $1}
		function r(p,  k) {k = int(NR * p); if (k < NR * p) k++; if (k < 1) k = 1; return v[k]}
		END {if (NR == 0) {print "0 - - - - -"; exit}
		     printf "%d %.1f %.1f %.1f %.1f %.1f\n", NR, r(0.5), r(0.9), r(0.99), v[NR], s / NR}'
}
# lat_start NAME WORKERS LOG: a kyud on a free UDP port of 127.0.0.1 (in
# extra_pids; its address in lat_addr), with conf_extra.
lat_start() {
	local p pid conf=$tmp/kyu-lat-$1.ini
	for _ in 1 2 3 4 5; do
		p=$((20000 + RANDOM % 40000))
		ss -Huln "sport = :$p" 2>/dev/null | grep . >/dev/null && continue
		conf_listen=127.0.0.1:$p
		write_conf "$2" "$conf"
		conf_listen=
		"$KYUD" -c "$conf" 2>"$3" &
		pid=$!
		for _ in $(seq 1 150); do
			grep -q 'ready:' "$3" 2>/dev/null && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			extra_pids+=("$pid")
			lat_addr=127.0.0.1:$p
			return 0
		fi
		wait "$pid" 2>/dev/null || true
		grep -qi 'udp\|listen\|bind' "$3" 2>/dev/null || break
	done
	note "latency: kyud $1 did not start: $(tail -n 3 "$3" | tr '\n' ' ')"
	return 1
}
lat_stop() { # every kyud of extra_pids, TERM (they drain), then KILL after 40 s
	local p
	for p in "${extra_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${extra_pids[@]}"; do
		for _ in $(seq 1 400); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	extra_pids=()
}
# lat_per_job QA QB N: statements per job between two status_snapshots
# (this script's own subtracted: one snapshot, its polls, the INSERT).
lat_per_job() {
	awk -v d="$(($2 - $1 - self_q - lat_polls - 1))" -v n="$3" 'BEGIN {if (n > 0) printf "%.2f", d / n; else print "-"}'
}
# retry: LAT_RETRY_N jobs exit 75 (EX_TEMPFAIL) on attempt 1 and succeed
# on attempt 2; [job] backoff_base = 1 (attempt 2 due 0.5 to 1 s after
# attempt 1's end), one kyud of LAT_WORKERS workers. The retry's UPDATE
# sets run_at to its due time (store_finish.c, add_backoff) and the claim
# leaves run_at alone (store_claim.c, add_claim_set): latency = attempt 2's
# started_at - run_at.
lat_retry() { # lat_retry REP
	local rep=$1 n=$LAT_RETRY_N log=$tmp/kyud-latency-retry-$1.log qa qb why='' st got p50 p90 p99 mx mean
	fill 0 argv
	conf_extra=$(printf 'poll_interval = 3600\nlease = %d\n[job]\nbackoff_base = 1' "$LAT_RETRY_LEASE")
	if ! lat_start retry "$LAT_WORKERS" "$log"; then
		conf_extra=
		row "$lat_res" retry "$rep" 3600 - - - - - - - - - - - kyud_failed
		return
	fi
	conf_extra=
	note "latency: retry, $n jobs (exit 75, then 0), backoff_base 1"
	sleep 1
	lat_polls=0
	read -r qa _ _ _ < <(status_snapshot)
	sql <<-SQL
		INSERT INTO kyu_jobs (id, command) SELECT CONCAT('r', seq),
		  '[ "\$KYU_ATTEMPT" -gt 1 ] || exit 75' FROM seq_1_to_$n;
	SQL
	lat_wake default "$lat_addr"
	lat_until "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'r%' AND status IN ('succeeded','failed','cancelled')" \
		"$n" "$LAT_TIMEOUT" || why="timed out after $LAT_TIMEOUT s"
	read -r qb _ _ _ < <(status_snapshot)
	lat_stop
	st=$(sql -e "SELECT TIMESTAMPDIFF(MICROSECOND, run_at, started_at) / 1000 FROM kyu_jobs
		WHERE id LIKE 'r%' AND status = 'succeeded' AND attempts = 2" | lat_quant)
	read -r got p50 p90 p99 mx mean <<<"$st"
	# lost: jobs without a second attempt that succeeded.
	row "$lat_res" retry "$rep" 3600 "$got" $((n - got)) "$p50" "$p90" "$p99" "$mx" "$mean" - - - - \
		"q/job=$(lat_per_job "$qa" "$qb" "$n")${why:+, $why}"
}
# handoff: two kyud (LAT_HANDOFF_WORKERS workers each, each its own UDP
# listen port, both in kyu_daemons), lease 60, and LAT_HANDOFF_N
# /bin/true jobs inserted while both are ready (then woken by datagram):
# slot = a queue with max_running 1, key = one concurrency key in a plain
# queue. gap = a job's started_at - the previous job's finished_at, in
# start order. Which daemon ran each job comes from their debug logs
# ("job ID attempt 1 started"): the note gives each one's count and how
# many times the next job ran on the other daemon (and those gaps' p50).
lat_handoff() { # lat_handoff REP slot|key
	local rep=$1 kind=$2 n=$LAT_HANDOFF_N q ins la lb aa ab qa qb why='' st got sw swp50 ca cb p50 p90 p99 mx mean
	fill 0 argv
	sql -e "DELETE FROM kyu_queues; DELETE FROM kyu_queue_starts"
	if [ "$kind" = slot ]; then
		q=one
		sql -e "INSERT INTO kyu_queues (name, max_running) VALUES ('one', 1)"
		ins="INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('h', seq), 'one', '[\"/bin/true\"]' FROM seq_1_to_$n"
	else
		q=keyed
		ins="INSERT INTO kyu_jobs (id, queue, concurrency_key, argv) SELECT CONCAT('h', seq), 'keyed', 'K', '[\"/bin/true\"]' FROM seq_1_to_$n"
	fi
	la=$tmp/kyud-latency-$kind-$rep-a.log lb=$tmp/kyud-latency-$kind-$rep-b.log
	conf_extra=$(printf 'poll_interval = 3600\nlease = %d\nlog_level = debug' "$LAT_HANDOFF_LEASE")
	if ! { lat_start "$kind-a" "$LAT_HANDOFF_WORKERS" "$la" && aa=$lat_addr &&
		lat_start "$kind-b" "$LAT_HANDOFF_WORKERS" "$lb" && ab=$lat_addr; }; then
		conf_extra=
		lat_stop
		row "$lat_res" "$kind" "$rep" 3600 - - - - - - - - - - - kyud_failed
		return
	fi
	conf_extra=
	lat_polls=0
	lat_until "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr IS NOT NULL" 2 30 ||
		note "latency: $kind: the two daemons not both in kyu_daemons after 30 s"
	note "latency: $kind handoff, $n jobs, two daemons"
	sleep 1
	lat_polls=0
	read -r qa _ _ _ < <(status_snapshot)
	sql -e "$ins"
	lat_wake "$q" "$aa" "$ab"
	lat_until "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'h%' AND status = 'succeeded'" \
		"$n" "$LAT_TIMEOUT" || why="timed out after $LAT_TIMEOUT s"
	read -r qb _ _ _ < <(status_snapshot)
	lat_stop
	{ sed -n 's/.*job \(h[0-9]*\) attempt [0-9]* started.*/\1 A/p' "$la"
	  sed -n 's/.*job \(h[0-9]*\) attempt [0-9]* started.*/\1 B/p' "$lb"; } >"$tmp/lat-ran"
	sql -e "SELECT id, IFNULL(TIMESTAMPDIFF(MICROSECOND, LAG(finished_at) OVER (ORDER BY started_at, seq),
		started_at) / 1000, '-') FROM kyu_jobs WHERE id LIKE 'h%' AND status = 'succeeded'
		ORDER BY started_at, seq" >"$tmp/lat-gaps"
	st=$(awk '$2 != "-" {print $2}' "$tmp/lat-gaps" | lat_quant)
	got=$(wc -l <"$tmp/lat-gaps")
	# Per daemon, and the switches from one to the other (start order).
	awk 'NR == FNR {d[$1] = $2; next}
		{c[d[$1]]++; if (p != "" && d[$1] != p) print "switch", $2; p = d[$1]}
		END {print "count", c["A"] + 0, c["B"] + 0}' "$tmp/lat-ran" "$tmp/lat-gaps" >"$tmp/lat-sw"
	read -r _ ca cb < <(grep '^count' "$tmp/lat-sw")
	read -r sw swp50 _ < <(awk '$1 == "switch" {print $2}' "$tmp/lat-sw" | lat_quant)
	read -r _ p50 p90 p99 mx mean <<<"$st"
	row "$lat_res" "$kind" "$rep" 3600 "$got" $((n - got)) "$p50" "$p90" "$p99" "$mx" "$mean" - - - - \
		"q/job=$(lat_per_job "$qa" "$qb" "$n"), A=$ca B=$cb, switches=$sw (p50 $swp50 ms)${why:+, $why}"
	sql -e "DELETE FROM kyu_queues; DELETE FROM kyu_queue_starts"
}

# --- wake-up latency: INSERT -> start of the command -------------------------------
# The bench's server again, with mariadbd options (none: as it was started).
lat_server() {
	"$root/scripts/sandbox-db" stop "$tmp/db" >/dev/null 2>&1 || true
	KYU_PLUGIN_DIR=$([ "$have_udf" = 1 ] && echo "$tmp/plugin") \
		"$root/scripts/sandbox-db" start "$tmp/db" "$port" "$@" >/dev/null || {
		note "latency: the server did not start with: $*"
		return 1
	}
	db_pid=$(cat "$tmp/db/mysqld.pid")
}
# kyud's watcher process, if it has one.
watcher_pid() {
	local c
	[ -n "$kyud_pid" ] || return 0
	for c in $(children "$kyud_pid"); do
		{ tr '\0' ' ' <"/proc/$c/cmdline"; } 2>/dev/null | grep -q -- '--watcher' && { echo "$c"; return; }
	done
	return 0
}
# lat_idle TICKS_BEFORE TICKS_AFTER: the watcher's CPU per 1,000 INSERTs of
# the run just made, then the idle cost over LAT_IDLE_SECS: "k=v" words.
lat_idle() {
	local qa ua sa ca qb ub sb cb da db hz
	hz=$(getconf CLK_TCK)
	sleep 2
	read -r qa ua sa ca < <(status_snapshot)
	da=$(self_ticks "$db_pid")
	sleep "$LAT_IDLE_SECS"
	read -r qb ub sb cb < <(status_snapshot)
	db=$(self_ticks "$db_pid")
	awk -v w=$(($2 - $1)) -v n="$LAT_N" -v hz="$hz" -v q=$((qb - qa - self_q)) -v s="$LAT_IDLE_SECS" \
		-v d=$((db - da)) 'BEGIN {printf "watcher_ms_per_1000=%.1f,idle_q/s=%.2f,idle_db_cpu%%=%.2f",
			w * 1000 / hz / n * 1000, q / s, d * 100 / hz / s}'
}
if has_case latency && [ "$kyud_ok" = 1 ]; then
	for rep in $(seq 1 "$REPEAT"); do
		for mode in $LAT_MODES; do
			case $mode in
			retry) lat_retry "$rep"; continue ;;
			handoff) lat_handoff "$rep" slot; lat_handoff "$rep" key; continue ;;
			esac
			if [ "$mode" = udf ] && [ "$have_udf" != 1 ]; then
				note "latency: no kyu_notify.so at $LAT_UDF (set LAT_UDF or BUILD_DIR); no udf run"
				row "$lat_res" "$mode" "$rep" - - - - - - - - - - - - "no kyu_notify.so"
				continue
			fi
			fill 0 argv
			log=$tmp/kyud-latency-$mode-$rep.log
			wopt=()
			wait_s=10
			ok=0
			if [ "$mode" = binlog ]; then
				lat_server --log-bin=binlog --binlog-format=ROW --server-id=1 &&
					echo "GRANT REPLICATION SLAVE ON *.* TO 'kyu'@'localhost'" | sql_root
				conf_extra=$(printf 'wake_binlog = on\nwake_poll = 0\npoll_interval = 3600')
				start_kyud "$LAT_WORKERS" "$log" && ok=1
			elif [ "$mode" = watch ]; then
				conf_extra=$(printf 'wake_binlog = off\nwake_poll = 1\npoll_interval = 3600')
				start_kyud "$LAT_WORKERS" "$log" && ok=1
			elif [ "$mode" = floor ]; then
				ok=1 wopt=(--floor)
			elif [ "$mode" = poll ]; then
				conf_listen='' conf_extra="poll_interval = $LAT_POLL"
				wait_s=$((2 * LAT_POLL + 5))
				start_kyud "$LAT_WORKERS" "$log" && ok=1
			else
				conf_extra=
				start_kyud_listen "$LAT_WORKERS" "$log" && ok=1
			fi
			if [ "$ok" = 1 ] && [ "$mode" = udf ]; then
				# kyu_notify sends only to 127.0.0.1:7711 and the targets
				# listed beside it (read again within a second).
				echo "$conf_listen" >"$tmp/plugin/kyu_notify.allow"
				sleep 1.1
				{ echo "SET @kyu_notify_target = '$conf_listen';"; cat "$root/sql/notify.sql"; } |
					sql_root >/dev/null 2>"$tmp/notify.err" || {
					note "latency: sql/notify.sql failed: $(tr '\n' ' ' <"$tmp/notify.err")"
					ok=0
				}
			fi
			[ "$mode" = client ] && wopt=(-w "$conf_listen")
			watch_note=
			if [ "$ok" = 1 ]; then
				note "latency: $mode, $LAT_N INSERTs at $LAT_RATE/s"
				sleep 1
				wpid=$(watcher_pid)
				wa=$(self_ticks "${wpid:-0}")
				line=$("$bin/latency" -n "$LAT_N" -r "$LAT_RATE" -s "$bin/stamp" -l "$tmp/latency.sock" \
					"${wopt[@]}" -W "$wait_s" 2>&1) || { note "latency failed: $line"; line=; }
				if [ -n "$wpid" ]; then
					wb=$(self_ticks "$wpid")
					watch_note=$(lat_idle "$wa" "$wb")
				fi
			else
				line=
			fi
			[ "$mode" = floor ] || stop_kyud
			[ "$mode" = binlog ] && lat_server
			if [ "$mode" = udf ]; then sql_root <"$root/sql/unnotify.sql" >/dev/null 2>&1 || true; fi
			conf_listen='' conf_extra=''
			if [ -z "$line" ]; then
				row "$lat_res" "$mode" "$rep" - - - - - - - - - - - - failed
				continue
			fi
			pi=-
			[ "$mode" = poll ] && pi=$LAT_POLL
			row "$lat_res" "$mode" "$rep" "$pi" "$(kv received "$line")" "$(kv lost "$line")" \
				"$(kv start_p50_ms "$line")" "$(kv start_p90_ms "$line")" "$(kv start_p99_ms "$line")" \
				"$(kv start_max_ms "$line")" "$(kv start_mean_ms "$line")" \
				"$(kv insert_p50_ms "$line")" "$(kv insert_p99_ms "$line")" \
				"$(kv dbclaim_p50_ms "$line")" "$(kv dbclaim_p99_ms "$line")" "ok${watch_note:+,$watch_note}"
		done
	done
fi

# --- queues: the claim with many queues, limits and weights -------------------------
queue_fill() { # queue_fill NQUEUES: N due jobs over NQUEUES queues (+ future rows for 1000)
	local nq=$1
	{
		echo "TRUNCATE TABLE kyu_jobs; DELETE FROM kyu_queues; DELETE FROM kyu_queue_starts;"
		if [ "$nq" -ge 10 ]; then
			echo "INSERT INTO kyu_queues (name, max_running) VALUES ('q0', 100000), ('q1', 100000), ('q2', 100000);"
			echo "INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('q3', 1000000, 1);"
			echo "INSERT INTO kyu_queues (name, weight) VALUES ('q4', 2);"
		fi
		echo "INSERT INTO kyu_jobs (queue, argv) SELECT CONCAT('q', seq % $nq), '[\"/bin/true\"]' FROM seq_0_to_$((N - 1));"
		if [ "$nq" -ge 1000 ] && [ "$QUEUE_FUTURE" -gt 0 ]; then
			echo "INSERT INTO kyu_jobs (queue, argv, run_at) SELECT CONCAT('q', seq % $nq), '[\"/bin/true\"]',"
			echo "  NOW(6) + INTERVAL 1 DAY FROM seq_1_to_$QUEUE_FUTURE;"
		fi
	} | sql
}

# --- many queues: the fan (issue 43) --------------------------------------------
handler_reads() {
	sql -e "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Handler_read%'" | awk '{s += $2} END {print s + 0}'
}
if has_case tenants && [ "$kyud_ok" = 1 ]; then
	for nq in 1 "$TENANT_QUEUES"; do
		note "tenants: $TENANT_ROWS rows over $nq queue(s)"
		{
			echo "TRUNCATE TABLE kyu_jobs; DELETE FROM kyu_queues; DELETE FROM kyu_queue_names;"
			echo "INSERT INTO kyu_jobs (queue, argv) SELECT CONCAT('t', LPAD(seq DIV ($TENANT_ROWS DIV $nq), 6, '0')),"
			echo "  '[\"/bin/true\"]' FROM seq_0_to_$((TENANT_ROWS - 1));"
		} | sql
		log=$tmp/kyud-tenants-$nq.log
		conf_extra="poll_interval = 30"
		t0=$(sql -e "SELECT NOW(6)")
		read -r qa _ _ _ < <(status_snapshot)
		ra=$(handler_reads) da=$(self_ticks "$db_pid")
		start_kyud "$TENANT_WORKERS" "$log" || { conf_extra=; row "$tenant_res" "$nq" - - - - - - - - - kyud_failed; continue; }
		conf_extra=
		sleep "$TENANT_SECS"
		stop_kyud
		read -r qb _ _ _ < <(status_snapshot)
		rb=$(handler_reads) dbb=$(self_ticks "$db_pid")
		read -r done _ < <(kyud_rate "started_at IS NOT NULL")
		jps=$(awk -v n="$done" -v s="$TENANT_SECS" 'BEGIN {printf "%.0f", n / s}')
		sql -e "SELECT TIMESTAMPDIFF(MICROSECOND, '$t0', MIN(started_at)) / 1e6 FROM kyu_jobs
		        WHERE started_at IS NOT NULL GROUP BY queue ORDER BY 1" >"$tmp/tenants-first-$nq"
		read -r started p50 p99 mx < <(awk '{v[NR] = $1} END {n = NR; if (!n) {print 0, "-", "-", "-"; exit}
			printf "%d %.1f %.1f %.1f\n", n, v[int((n - 1) * 0.5) + 1], v[int((n - 1) * 0.99) + 1], v[n]}' \
			"$tmp/tenants-first-$nq")
		row "$tenant_res" "$nq" "$done" "$jps" "$started" "$p50" "$p99" "$mx" \
			"$(awk -v d="$((qb - qa - self_q))" -v n="$done" 'BEGIN {if (n > 0) printf "%.3f", d / n; else print "-"}')" \
			"$(awk -v d="$((rb - ra))" -v n="$done" 'BEGIN {if (n > 0) printf "%.1f", d / n; else print "-"}')" \
			"$(ms_per_job $((dbb - da)) "$done")" ok
	done
fi

if has_case queues && [ "$kyud_ok" = 1 ]; then
	for nq in $QUEUE_SETS; do
		for rep in $(seq 1 "$REPEAT"); do
			queue_fill "$nq"
			log=$tmp/kyud-queues-$nq-$rep.log
			read -r qa ua sa ca < <(status_snapshot)
			conf_extra="poll_interval = 30"
			start_kyud "$QUEUE_WORKERS" "$log" || { conf_extra=; row "$queue_res" "$nq" "$rep" - - - - - - kyud_failed; continue; }
			conf_extra=
			wait_polls=0
			wait_jobs "run_at <= NOW(6)" || true
			read -r qb ub sb cb < <(status_snapshot)
			read -r done jps < <(kyud_rate "run_at <= NOW(6)")
			q=$(awk -v d="$((qb - qa - self_q - wait_polls))" -v n="$done" 'BEGIN {if (n > 0) printf "%.3f", d / n; else print "-"}')
			idle=-
			if [ "$nq" -ge 1000 ] && [ -z "$why" ]; then
				# The same kyud, now idle with the future rows in place; the
				# poll is what it costs (it was started with poll_interval 30).
				sleep 3
				read -r qa _ _ _ < <(status_snapshot)
				sleep "$QUEUE_IDLE_SECS"
				read -r qb _ _ _ < <(status_snapshot)
				idle=$(awk -v d="$((qb - qa - self_q))" -v s="$QUEUE_IDLE_SECS" 'BEGIN {printf "%.3f", d / s}')
			fi
			stop_kyud
			row "$queue_res" "$nq" "$rep" "$done" "$jps" "$q" \
				"$(grep -c 'deadlock, trying again' "$log" || true)" "$idle" "${why:-ok}"
		done
	done
fi

# --- workflows: fan-out, fan-in and chain (issue 27) ---------------------------------
# Each shape hangs under a gate job g (a shell loop that waits for a file),
# which kyud claims when it starts. The shape is inserted while g runs, its
# 'new' items settled by one CALL kyu_settle from this script (timed:
# new_s), then the file is made: g ends, and from its end (finished_at,
# database clock) to the last job's end is the shape's run.  Statements
# over the run are the server's counts (this script's own subtracted):
# q/job = statements kyud sent, inner/job = statements run inside
# kyu_settle and the triggers (Queries - Questions), calls/job = CALLs.
wf_status() { # prints: questions queries calls
	sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Queries','Com_call_procedure')" |
		awk '{v[$1]=$2} END {print v["Questions"]+0, v["Queries"]+0, v["Com_call_procedure"]+0}'
}
wf_reset() {
	echo "TRUNCATE TABLE kyu_jobs; TRUNCATE TABLE kyu_after; TRUNCATE TABLE kyu_after_todo;" | sql
	rm -f "$tmp/wf-gate"
}
# wf_wait COUNT: until COUNT rows besides g ended (polls counted in wf_polls).
wf_wait() {
	local got last=-1 stall=0
	why=
	while :; do
		sleep 0.2
		got=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE id <> 'g' AND status IN ('succeeded','failed','cancelled')")
		wf_polls=$((wf_polls + 1))
		[ "$got" -ge "$1" ] && return 0
		if ! kill -0 "$kyud_pid" 2>/dev/null; then why=kyud_exited; kyud_pid=; return 1; fi
		if [ "$got" = "$last" ]; then
			stall=$((stall + 1))
			[ $((stall / 5)) -ge "$KYUD_STALL" ] && { why="no_progress_${KYUD_STALL}s"; return 1; }
		else
			stall=0 last=$got
		fi
	done
}
# wf_run SHAPE N INSERT-SQL: one measurement; a row of wf_res. Everything
# is inserted and settled before kyud starts, so that g is claimed knowing
# that jobs wait for it (a job claimed before its first dependent was
# inserted leaves its end to the next claim that sees the item: up to a
# poll_interval later without wake-ups).
wf_run() {
	local shape=$1 n=$2 ins=$3 log=$tmp/kyud-wf-$1-$2.log t0 t1 t2 qa qb ia ib ca cb da db total
	wf_reset
	sql -e "INSERT INTO kyu_jobs (id, command) VALUES ('g', 'while [ ! -e $tmp/wf-gate ]; do sleep 0.05; done')"
	t0=$(date +%s.%N)
	sql <<<"$ins"
	t1=$(date +%s.%N)
	total=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE id <> 'g'")
	sql -e "CALL kyu_settle($((total + 100)))"
	t2=$(date +%s.%N)
	start_kyud "$WF_WORKERS" "$log" || { row "$wf_res" "$shape" "$n" - - - - - - - - - - - - - - - kyud_failed; return; }
	for _ in $(seq 1 300); do
		[ "$(sql -e "SELECT status FROM kyu_jobs WHERE id = 'g' AND pid IS NOT NULL")" = running ] && break
		sleep 0.1
	done
	read -r qa ia ca < <(wf_status)
	da=$(self_ticks "$db_pid")
	wf_polls=0
	touch "$tmp/wf-gate"
	wf_wait "$total" || true
	read -r qb ib cb < <(wf_status)
	db=$(self_ticks "$db_pid")
	stop_kyud
	local q=$((qb - qa - wf_self_q - wf_polls)) inner=$((ib - ia - (qb - qa) - wf_self_inner)) calls=$((cb - ca))
	# From g's end: first start, all started, all ended (ms); jobs/s over that.
	read -r first all last jps < <(sql -e "SELECT
		ROUND(TIMESTAMPDIFF(MICROSECOND, g.finished_at, MIN(j.started_at)) / 1000),
		ROUND(TIMESTAMPDIFF(MICROSECOND, g.finished_at, MAX(j.started_at)) / 1000),
		ROUND(TIMESTAMPDIFF(MICROSECOND, g.finished_at, MAX(j.finished_at)) / 1000),
		ROUND(COUNT(*) / (TIMESTAMPDIFF(MICROSECOND, g.finished_at, MAX(j.finished_at)) / 1e6))
		FROM kyu_jobs AS j JOIN kyu_jobs AS g ON g.id = 'g' WHERE j.id <> 'g' AND j.status = 'succeeded'")
	# Latency, a dependent's start after its upstream's end (ms): for every
	# edge of a chain or a fan-out; for a fan-in, z after its last upstream.
	local lat latq="SELECT TIMESTAMPDIFF(MICROSECOND, u.finished_at, d.started_at) / 1000
		FROM kyu_after AS e JOIN kyu_jobs AS u ON u.seq = e.up_seq JOIN kyu_jobs AS d ON d.seq = e.down_seq"
	[ "$shape" != fanin ] || latq="SELECT TIMESTAMPDIFF(MICROSECOND, MAX(u.finished_at), z.started_at) / 1000
		FROM kyu_jobs AS u JOIN kyu_jobs AS z ON z.id = 'z' WHERE u.id LIKE 'u%'"
	lat=$(sql -e "$latq" | sort -n |
		awk '{v[NR] = $1; s += $1} END {if (NR == 0) {print "- - - -"; exit}
			k = int(NR * 0.9 + 0.5); if (k < 1) k = 1
			printf "%.1f %.1f %.1f %.1f\n", s / NR, v[int((NR + 1) / 2)], v[k], v[NR]}')
	# Fan-in: the ends' rate over the first and the last tenth of them
	# (a per-end cost that grew with the ends counted would slow the last).
	local tenth=-
	if [ "$shape" = fanin ]; then
		tenth=$(sql -e "SELECT UNIX_TIMESTAMP(finished_at) FROM kyu_jobs WHERE id LIKE 'u%' ORDER BY finished_at" |
			awk -v n="$n" '{t[NR] = $1} END {k = int(n / 10); if (k < 2) {print "-"; exit}
				a = t[k] - t[1]; b = t[NR] - t[NR - k + 1]
				if (a > 0 && b > 0) printf "%.0f/%.0f\n", (k - 1) / a, (k - 1) / b; else print "-"}')
	fi
	# shellcheck disable=SC2086 # lat: four fields
	row "$wf_res" "$shape" "$n" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" \
		"$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.2f", b - a}')" \
		"$first" "$all" "$last" "$jps" $lat \
		"$(awk -v d="$q" -v n="$n" 'BEGIN {printf "%.2f", d / n}')" \
		"$(awk -v d="$inner" -v n="$n" 'BEGIN {printf "%.1f", d / n}')" \
		"$(awk -v d="$calls" -v n="$n" 'BEGIN {printf "%.3f", d / n}')" \
		"$(ms_per_job $((db - da)) "$n")" "$tenth" "${why:-ok}"
}
if has_case workflow && [ "$kyud_ok" = 1 ]; then
	read -r q0 i0 _ < <(wf_status)
	read -r q1 i1 _ < <(wf_status)
	wf_self_q=$((q1 - q0)) wf_self_inner=$((i1 - i0 - (q1 - q0)))
	for shape in $WF_SHAPES; do
		case $shape in
		plain)
			# The baseline: WF_N jobs without upstreams, due when kyud starts.
			wf_reset
			fill "$WF_N" argv
			read -r qa ia ca < <(wf_status)
			da=$(self_ticks "$db_pid")
			start_kyud "$WF_WORKERS" "$tmp/kyud-wf-plain.log" || { row "$wf_res" plain "$WF_N" - - - - - - - - - - - - - - - kyud_failed; continue; }
			wf_polls=0
			wf_wait "$WF_N" || true
			read -r qb ib cb < <(wf_status)
			db=$(self_ticks "$db_pid")
			stop_kyud
			read -r jps < <(sql -e "SELECT ROUND(COUNT(*) / (TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) / 1e6))
				FROM kyu_jobs WHERE status = 'succeeded'")
			row "$wf_res" plain "$WF_N" - - - - - "$jps" - - - - \
				"$(awk -v d=$((qb - qa - wf_self_q - wf_polls)) -v n="$WF_N" 'BEGIN {printf "%.2f", d / n}')" \
				"$(awk -v d=$((ib - ia - (qb - qa) - wf_self_inner)) -v n="$WF_N" 'BEGIN {printf "%.1f", d / n}')" \
				"$(awk -v d=$((cb - ca)) -v n="$WF_N" 'BEGIN {printf "%.3f", d / n}')" \
				"$(ms_per_job $((db - da)) "$WF_N")" - "${why:-ok}" ;;
		fanout)
			wf_run fanout "$WF_N" "$(awk -v n="$WF_N" 'BEGIN {
				for (i = 1; i <= n; i += 1000) {
					j = i + 999; if (j > n) j = n
					printf "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT(\x27d\x27, seq), \x27[\"/bin/true\"]\x27, \x27[\"g\"]\x27 FROM seq_%d_to_%d;\n", i, j
				}}')" ;;
		fanin)
			for n in $WF_FANIN_SIZES; do
				wf_run fanin "$n" "$(awk -v n="$n" 'BEGIN {
					for (i = 1; i <= n; i += 1000) {
						j = i + 999; if (j > n) j = n
						printf "INSERT INTO kyu_jobs (id, argv, after, batch) SELECT CONCAT(\x27u\x27, seq), \x27[\"/bin/true\"]\x27, \x27[\"g\"]\x27, \x27wf\x27 FROM seq_%d_to_%d;\n", i, j
					}
					printf "INSERT INTO kyu_jobs (id, argv, after_batch) VALUES (\x27z\x27, \x27[\"/bin/true\"]\x27, \x27wf\x27);\n"
				}')"
			done ;;
		chain)
			wf_run chain "$WF_CHAIN" "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('c', seq), '[\"/bin/true\"]',
				IF(seq = 1, '[\"g\"]', CONCAT('[\"c', seq - 1, '\"]')) FROM seq_1_to_$WF_CHAIN;" ;;
		*) note "workflow: unknown shape $shape (plain fanout fanin chain)" ;;
		esac
	done
	wf_reset
fi

# --- intake: the INSERT check triggers' cost per INSERT (max_waiting and the rest) ---
intake_run() { # intake_run LABEL: INTAKE_N single-row INSERTs into queue 'in', one session
	local t0 t1 ok
	t0=$(date +%s.%N)
	awk -v n="$INTAKE_N" 'BEGIN {for (i = 0; i < n; i++) print "INSERT INTO kyu_jobs (queue, argv) VALUES (\x27in\x27, \x27[\"/bin/true\"]\x27);"}' |
		mariadb --no-defaults -ukyu -pkyu --socket="$sock" --force kyu >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	ok=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'in'")
	row "$intake_res" "$1" "$INTAKE_N" "$ok" "$(awk -v a="$t0" -v b="$t1" -v n="$INTAKE_N" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}')"
}
intake_bulk() { # intake_bulk LABEL: one INSERT ... SELECT of INTAKE_BULK rows (a bulk submitter)
	local t0 t1 ok
	echo "TRUNCATE TABLE kyu_jobs;" | sql
	t0=$(date +%s.%N)
	sql -e "INSERT INTO kyu_jobs (queue, argv) SELECT 'in', '[\"/bin/true\"]' FROM seq_1_to_$INTAKE_BULK"
	t1=$(date +%s.%N)
	ok=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'in'")
	row "$intake_res" "$1" "$INTAKE_BULK" "$ok" "$(awk -v a="$t0" -v b="$t1" -v n="$INTAKE_BULK" 'BEGIN {printf "%.1f", (b - a) * 1e6 / n}')"
	echo "TRUNCATE TABLE kyu_jobs;" | sql
}
intake_multi() { # intake_multi LABEL: INTAKE_MULTI_REPS INSERTs of 1,000 rows, each timed by the server
	local t
	echo "TRUNCATE TABLE kyu_jobs;" | sql
	t=$(awk -v n="$INTAKE_MULTI_REPS" 'BEGIN {
		for (i = 0; i < n; i++) {
			print "SET @t0 = SYSDATE(6);"
			print "INSERT INTO kyu_jobs (queue, argv) SELECT \x27in\x27, \x27[\"/bin/true\"]\x27 FROM seq_1_to_1000;"
			print "SELECT TIMESTAMPDIFF(MICROSECOND, @t0, SYSDATE(6));"
		}}' | sql | sort -n | awk '{v[NR] = $1} END {printf "%.1f %.1f", v[int((NR + 1) / 2)] / 1000, v[NR] / 1000}')
	row "$intake_res" "$1" "$INTAKE_MULTI_REPS" "$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'in'")" "$t"
	echo "TRUNCATE TABLE kyu_jobs;" | sql
}
if has_case intake; then
	echo "TRUNCATE TABLE kyu_jobs; DELETE FROM kyu_queues; DROP TRIGGER IF EXISTS kyu_jobs_max_waiting;
	      DROP TRIGGER IF EXISTS kyu_jobs_after_check; DROP TRIGGER IF EXISTS kyu_jobs_traceparent_check;
	      DROP TRIGGER IF EXISTS kyu_jobs_check;" | sql_root
	intake_run "no trigger"
	intake_multi "1000s, no trigger"
	intake_bulk "bulk, no trigger"
	load_schema
	echo "TRUNCATE TABLE kyu_jobs; DROP TRIGGER IF EXISTS kyu_jobs_check;" | sql_root
	intake_run "6's, no row"
	intake_multi "1000s, 6's"
	intake_bulk "bulk, 6's"
	load_schema
	echo "TRUNCATE TABLE kyu_jobs;" | sql
	intake_run "trigger, no row"
	intake_multi "1000s, triggers"
	intake_bulk "bulk, triggers"
	for b in $INTAKE_BOUNDS; do
		echo "TRUNCATE TABLE kyu_jobs; DELETE FROM kyu_queues;
		      INSERT INTO kyu_jobs (queue, argv) SELECT 'in', '[\"/bin/true\"]' FROM seq_1_to_$b;
		      INSERT INTO kyu_queues (name, max_waiting) VALUES ('in', $b);" | sql
		intake_run "full at $b"
	done
	echo "TRUNCATE TABLE kyu_jobs; DELETE FROM kyu_queues;" | sql
fi

# --- memory of the master and of each worker -----------------------------------------
proc_mem() { # proc_mem PID: "VmRSS VmHWM" in KiB
	awk '/^VmRSS:/ {r = $2} /^VmHWM:/ {h = $2} END {print r + 0, h + 0}' "/proc/$1/status" 2>/dev/null ||
		echo "0 0"
}
mem_rows() { # mem_rows PHASE
	local p idx r h
	read -r r h < <(proc_mem "$kyud_pid")
	row "$mem_res" "$1" master "$kyud_pid" "$r" "$h"
	for p in $(children "$kyud_pid"); do
		idx=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | sed -n 's/.*--worker \([0-9]*\).*/\1/p')
		read -r r h < <(proc_mem "$p")
		row "$mem_res" "$1" "worker ${idx:-?}" "$p" "$r" "$h"
	done
}
if has_case memory && [ "$kyud_ok" = 1 ]; then
	fill 0 argv
	log=$tmp/kyud-memory.log
	conf_extra="poll_interval = 1"
	if start_kyud "$MEM_WORKERS" "$log"; then
		sleep 3
		mem_rows idle
		note "memory: $MEM_JOBS jobs with $MEM_WORKERS workers"
		fill "$MEM_JOBS" argv
		if wait_jobs 1; then
			sleep 2
			read -r mdone mjps < <(kyud_rate 1)
			mem_rows "after $mdone jobs ($mjps jobs/s)"
		else
			note "memory: $why; log: $(tail -n 2 "$log" | tr '\n' ' ')"
			[ -n "$kyud_pid" ] && mem_rows "after: $why"
		fi
		stop_kyud
	else
		row "$mem_res" kyud_failed - - - -
	fi
	conf_extra=
fi

# --- scale: claim time and throughput with a big kyu_jobs ---------------------------
scale_insert() { # scale_insert KIND FROM TO [TAG]: rows FROM..TO of the Sequence engine as KIND
	local kind=$1 a=$2 b=$3 tag=${4:-}
	case $kind in
	finished) # succeeded, updated_at 12 h ago + 1 ms per row: within the default retention
		sql -e "INSERT INTO kyu_jobs (id, argv, status, attempts, owner, host, pid, exit_code,
			started_at, finished_at, duration, created_at, updated_at)
			SELECT CONCAT('scale-f-', seq), '[\"/bin/true\"]', 'succeeded', 1, seq, 'bench', 4242, 0,
			t, t, 0.001, t, t
			FROM (SELECT seq, NOW(6) - INTERVAL 12 HOUR + INTERVAL seq * 1000 MICROSECOND AS t
			      FROM seq_${a}_to_${b}) s" ;;
	expired) # succeeded, updated_at two days ago: due for the retention delete
		sql -e "INSERT INTO kyu_jobs (id, argv, status, attempts, owner, host, pid, exit_code,
			started_at, finished_at, duration, created_at, updated_at)
			SELECT CONCAT('scale-x$tag-', seq), '[\"/bin/true\"]', 'succeeded', 1, seq, 'bench', 4242, 0,
			t, t, 0.001, t, t
			FROM (SELECT seq, NOW(6) - INTERVAL 2 DAY + INTERVAL seq * 1000 MICROSECOND AS t
			      FROM seq_${a}_to_${b}) s" ;;
	future) # waiting, due tomorrow (1 ms apart)
		sql -e "INSERT INTO kyu_jobs (id, argv, run_at)
			SELECT CONCAT('scale-w-', seq), '[\"/bin/true\"]',
			NOW(6) + INTERVAL 1 DAY + INTERVAL seq * 1000 MICROSECOND
			FROM seq_${a}_to_${b}" ;;
	runnable)
		sql -e "INSERT INTO kyu_jobs (argv) SELECT '[\"/bin/true\"]' FROM seq_${a}_to_${b}" ;;
	esac
}
scale_add() { # scale_add KIND COUNT [TAG]: in statements of at most 1M rows
	local a
	for ((a = 1; a <= $2; a += 1000000)); do
		scale_insert "$1" "$a" $((a + 999999 < $2 ? a + 999999 : $2)) "${3:-}"
	done
}
if has_case scale && [ "$kyud_ok" = 1 ]; then
	scale_lim=("$bin/limit" -b "$SCALE_BATCH" -k 0 -p 1 --isolation rc --lat --no-verify)
	xtag=0
	for rows in $SCALE_SMALL $SCALE_ROWS; do
		for mix in $SCALE_MIXES; do
			note "scale: filling $rows $mix rows"
			t0=$(date +%s.%N)
			sql -e "TRUNCATE TABLE kyu_jobs"
			scale_add "$mix" "$rows"
			fill_s=$(elapsed "$t0")
			# Claim time of the limit loop on SCALE_JOBS runnable rows.
			base=$(max_seq)
			scale_add runnable "$SCALE_JOBS"
			line=$("${scale_lim[@]}" -n "$SCALE_JOBS" --timeout 600 2>&1) ||
				{ note "scale: limit failed: $line"; line=; }
			sql -e "DELETE FROM kyu_jobs WHERE seq > $base"
			# kyud on another SCALE_JOBS.
			base=$(max_seq)
			scale_add runnable "$SCALE_JOBS"
			kdone=- kjps=- why=
			conf_listen='' conf_extra=''
			if start_kyud "$SCALE_WORKERS" "$tmp/kyud-scale-$rows-$mix.log"; then
				wait_jobs "seq > $base" || note "scale: kyud $why"
				stop_kyud
				read -r kdone kjps < <(kyud_rate "seq > $base")
			else
				why=kyud_failed
			fi
			sql -e "DELETE FROM kyu_jobs WHERE seq > $base"
			row "$scale_res" "$rows" "$mix" "$fill_s" "$(kv claim_p50_ms "$line")" "$(kv claim_p90_ms "$line")" \
				"$(kv claim_p99_ms "$line")" "$(kv claim_max_ms "$line")" "$(kv jobs_per_s "$line")" \
				"$kdone" "$kjps" "${why:-ok}"

			# The retention delete, with the big table of finished rows.
			if [ "$rows" != "$SCALE_ROWS" ] || [ "$mix" != finished ] || [ "$SCALE_DELETE" -le 0 ]; then
				continue
			fi
			for b in $SCALE_DEL_BATCHES; do
				xtag=$((xtag + 1))
				xbase=$(max_seq)
				note "scale: retention delete of $SCALE_DELETE rows, LIMIT $b, during claims"
				t0=$(date +%s.%N)
				scale_add expired "$SCALE_DELETE" "$xtag"
				xfill_s=$(elapsed "$t0")
				base=$(max_seq)
				# Runnable rows for the baseline and up to 5 minutes of delete.
				scale_add runnable $((SCALE_CLAIM_RATE * SCALE_BATCH * (SCALE_BASE_SECS + 300)))
				bline=$("${scale_lim[@]}" --rate "$SCALE_CLAIM_RATE" -t "$SCALE_BASE_SECS" --timeout 600 2>&1) ||
					{ note "scale: limit failed: $bline"; bline=; }
				dline=$("${scale_lim[@]}" --rate "$SCALE_CLAIM_RATE" --delete-batch "$b" --timeout 900 2>&1) ||
					{ note "scale: limit --delete-batch failed: $dline"; dline=; }
				sql -e "DELETE FROM kyu_jobs WHERE seq > $xbase"
				row "$del_res" "$rows" "$b" "$(kv delete_rows "$dline")" "$(kv delete_secs "$dline")" \
					"$(kv delete_stmts "$dline")" "$(kv delete_max_ms "$dline")" \
					"$(kv claim_p50_ms "$bline")" "$(kv claim_p99_ms "$bline")" "$(kv claim_max_ms "$bline")" \
					"$(kv lat_claims "$dline")" "$(kv claim_p50_ms "$dline")" "$(kv claim_p99_ms "$dline")" \
					"$(kv claim_max_ms "$dline")" "$xfill_s"
			done
		done
	done
fi

# --- history table: the partition-based alternative to the retention delete -----
# Finished rows leave kyu_jobs for kyu_jobs_history (partitioned by finished_at)
# in each finish's round trip; retention is then ALTER TABLE ... DROP PARTITION.
# Two measurements: what the move costs per job (limit loop, 2 processes,
# batches of 100, no spawn, with and without the move), and claims at
# SCALE_CLAIM_RATE/s around one DROP PARTITION of HIST_DROP rows in a table of
# HIST_DROP + HIST_KEEP; then, in the same run, the current way: the same rows
# in kyu_jobs itself and kyud's retention delete (LIMIT 1000) while claiming.
hist_table() {
	sql_root <<'SQL'
DROP TABLE IF EXISTS kyu_jobs_history;
CREATE TABLE kyu_jobs_history (
  seq BIGINT UNSIGNED NOT NULL,
  id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  queue VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  status ENUM('waiting','running','succeeded','failed','cancelled') NOT NULL,
  attempts INT UNSIGNED NOT NULL, exit_code INT NULL, error TEXT NULL, output MEDIUMBLOB NULL,
  host VARCHAR(255) NULL, pid INT UNSIGNED NULL, started_at DATETIME(6) NULL,
  finished_at DATETIME(6) NOT NULL, duration DOUBLE NULL, created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (seq, finished_at), KEY kyu_jobs_history_id (id)
) ENGINE = InnoDB
PARTITION BY RANGE COLUMNS (finished_at) (
  PARTITION p_old VALUES LESS THAN ('2000-01-01'),
  PARTITION p_now VALUES LESS THAN (MAXVALUE));
SQL
}
hist_add() { # hist_add FINISHED_AT FROM COUNT: in statements of at most 1M rows
	local at=$1 from=$2 left=$3 k
	while [ "$left" -gt 0 ]; do
		k=$((left < 1000000 ? left : 1000000))
		sql_root <<SQL
INSERT INTO kyu_jobs_history (seq, id, queue, status, attempts, exit_code, host, pid, started_at,
  finished_at, duration, created_at)
SELECT seq, CONCAT('h-', seq), 'default', 'succeeded', 1, 0, 'bench', 1, '$at', '$at', 0.001, '$at'
FROM seq_${from}_to_$((from + k - 1));
SQL
		from=$((from + k)) left=$((left - k))
	done
}
if has_case history; then
	hist_table
	for rep in $(seq 1 "$REPEAT"); do
		for h in plain history; do
			hopt=()
			[ "$h" = history ] && hopt=(--history)
			line=$("$bin/limit" --fill -n "$N" -b 100 -k 0 -p 2 "${hopt[@]}" --no-verify --timeout 600 2>&1) ||
				{ note "history: limit failed: $line"; continue; }
			row "$hist_res" "finish:$h" "$rep" "$(kv jobs "$line")" "$(kv jobs_per_s "$line")" \
				"$(kv claim_ms "$line")" "$(kv finish_ms "$line")" "$(kv q_per_job "$line")" - - - - -
		done
	done
	note "history: filling kyu_jobs_history with $HIST_KEEP kept and $HIST_DROP expired rows"
	hist_table
	t0=$(date +%s.%N)
	hist_add "$(date -u '+%Y-%m-%d %H:%M:%S')" 1 "$HIST_KEEP"
	hist_add 1999-06-01 $((HIST_KEEP + 1)) "$HIST_DROP"
	hfill=$(elapsed "$t0")
	hlim=("$bin/limit" -b "$SCALE_BATCH" -k 0 -p 1 --isolation rc --lat --no-verify --rate "$SCALE_CLAIM_RATE")
	fill $((SCALE_CLAIM_RATE * SCALE_BATCH * (SCALE_BASE_SECS + 30))) argv
	bline=$("${hlim[@]}" -t "$SCALE_BASE_SECS" --timeout 600 2>&1) || { note "history: limit failed: $bline"; bline=; }
	dline=$("${hlim[@]}" --drop-partition p_old --timeout 600 2>&1) || { note "history: drop failed: $dline"; dline=; }
	row "$hist_res" "drop:$HIST_DROP/$((HIST_KEEP + HIST_DROP))" 1 "$(kv lat_claims "$dline")" - \
		"$(kv claim_p50_ms "$bline")/$(kv claim_p99_ms "$bline")" - - \
		"$(kv claim_p50_ms "$dline")" "$(kv claim_p99_ms "$dline")" "$(kv claim_max_ms "$dline")" \
		"$(kv delete_max_ms "$dline")" "fill ${hfill}s"
	sql_root <<<"DROP TABLE IF EXISTS kyu_jobs_history"

	# The current way in the same run: the same rows in kyu_jobs itself,
	# removed by kyud's retention delete (LIMIT 1000) while claiming.
	note "history: kyu_jobs with $HIST_KEEP finished and $HIST_DROP expired rows, retention delete"
	fill 0 argv
	t0=$(date +%s.%N)
	scale_add finished "$HIST_KEEP"
	scale_add expired "$HIST_DROP"
	hfill=$(elapsed "$t0")
	scale_add runnable $((SCALE_CLAIM_RATE * SCALE_BATCH * (SCALE_BASE_SECS + 300)))
	bline=$("${hlim[@]}" -t "$SCALE_BASE_SECS" --timeout 600 2>&1) || { note "history: limit failed: $bline"; bline=; }
	dline=$("${hlim[@]}" --delete-batch 1000 --timeout 900 2>&1) || { note "history: delete failed: $dline"; dline=; }
	row "$hist_res" "delete:$HIST_DROP/$((HIST_KEEP + HIST_DROP))" 1 "$(kv lat_claims "$dline")" - \
		"$(kv claim_p50_ms "$bline")/$(kv claim_p99_ms "$bline")" - - \
		"$(kv claim_p50_ms "$dline")" "$(kv claim_p99_ms "$dline")" "$(kv claim_max_ms "$dline")" \
		"$(kv delete_max_ms "$dline")" "fill ${hfill}s, $(kv delete_stmts "$dline") statements in $(kv delete_secs "$dline") s"
	fill 0 argv
fi

# --- web: the dashboard's pages on a big table ---------------------------------------
web_insert() { # web_insert FROM TO N: finished rows FROM..TO of N, spread over the last 24 h
	sql -e "INSERT INTO kyu_jobs (id, queue, argv, status, attempts, owner, host, pid, exit_code, error,
		started_at, finished_at, duration, created_at, updated_at)
		SELECT CONCAT('web-f-', seq), ELT(1 + seq % 4, 'mail', 'reports', 'thumbs', 'billing'),
		'[\"/bin/true\"]', IF(seq % 100 = 0, 'failed', 'succeeded'), 1, seq, 'bench', 4242,
		IF(seq % 100 = 0, 3, 0), IF(seq % 100 = 0, 'exited with status 3', NULL), t, t, 0.001, t, t
		FROM (SELECT seq, NOW(6) - INTERVAL 24 HOUR + INTERVAL seq * (86400000000 DIV $3) MICROSECOND AS t
		      FROM seq_${1}_to_${2}) s"
}
# kyu_jobs' INSERT triggers (workflows, max_waiting, traceparent) cost about
# 200 us of server CPU a row, 90% of the fill: 10M rows took over 36 minutes
# on 2 cores. They change nothing in these rows (no after, no traceparent, no
# max_waiting on a queue with waiting rows), so the fill goes without them:
# dumped as they are (definer, sql_mode, order) and created again after.
web_triggers_off() {
	local t
	mariadb-dump --no-defaults -uroot --socket="$sock" --no-create-info --no-data --triggers \
		--skip-comments kyu kyu_jobs >"$tmp/web-triggers.sql"
	for t in $(sql -e "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS
	                   WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 'kyu_jobs'"); do
		sql -e "DROP TRIGGER $t"
	done
}
web_triggers_on() { sql_root <"$tmp/web-triggers.sql"; }
if has_case web; then
	if [ ! -x "$BUILD_DIR/kyu-web" ]; then
		note "web: no kyu-web in $BUILD_DIR; skipped"
	else
		note "web: filling $WEB_ROWS rows"
		t0=$(date +%s.%N)
		sql -e "TRUNCATE TABLE kyu_jobs"
		web_triggers_off
		fin=$((WEB_ROWS - 110150))
		for ((a = 1; a <= fin; a += 1000000)); do
			web_insert "$a" $((a + 999999 < fin ? a + 999999 : fin)) "$fin"
		done
		sql -e "INSERT INTO kyu_jobs (id, queue, argv, run_at) SELECT CONCAT('web-w-', seq), 'reports',
			'[\"/bin/true\"]', NOW(6) + INTERVAL 1 DAY FROM seq_1_to_100000"
		sql -e "INSERT INTO kyu_queues (name, paused) VALUES ('mail', 1) ON DUPLICATE KEY UPDATE paused = 1"
		sql -e "INSERT INTO kyu_jobs (id, queue, argv, run_at) SELECT CONCAT('web-d-', seq), 'mail',
			'[\"/bin/true\"]', NOW(6) - INTERVAL 10 MINUTE FROM seq_1_to_10000"
		sql -e "INSERT INTO kyu_jobs (id, queue, argv, status, attempts, owner, lease_until, host, pid, started_at)
			SELECT CONCAT('web-r-', seq), 'thumbs', '[\"/bin/true\"]', 'running', 1, seq,
			NOW(6) + INTERVAL 1 HOUR, 'bench', seq, NOW(6) FROM seq_1_to_100"
		sql -e "INSERT INTO kyu_jobs (id, queue, argv, attempts, error, run_at) SELECT CONCAT('web-t-', seq),
			'billing', '[\"/bin/true\"]', 1, 'exited with status 1', NOW(6) + INTERVAL 1 HOUR FROM seq_1_to_50"
		web_triggers_on
		# What kyud would have counted for those 24 h: a row per minute,
		# queue and worker (four workers a daemon), the jobs shared out.
		per=$((fin / 1440 / 4 / WEB_WRITERS))
		sql -e "TRUNCATE TABLE kyu_minutes;
			INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried)
			SELECT UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL m.seq MINUTE,
			ELT(q.seq, 'mail', 'reports', 'thumbs', 'billing'), CONCAT('bench:', (w.seq - 1) DIV 4, ':0'),
			1 + (w.seq - 1) % 4, $per - $per DIV 100, $per DIV 100, w.seq % 2
			FROM seq_0_to_1439 AS m, seq_1_to_4 AS q, seq_1_to_${WEB_WRITERS} AS w"
		sql -e "ANALYZE TABLE kyu_jobs, kyu_minutes" >/dev/null
		fill_s=$(elapsed "$t0")
		# A cursor from the middle of the succeeded rows: a page deep in the list.
		mid=$(sql -e "SELECT CONCAT(updated_at, ',', seq) FROM kyu_jobs WHERE status = 'succeeded'
			ORDER BY updated_at DESC, seq DESC LIMIT 1 OFFSET $((fin / 2))")
		wport=$((port + 1))
		while port_busy "$wport"; do wport=$((wport + 1)); done
		printf '[database]\nsocket = %s\nuser = kyu\npassword = kyu\ndatabase = kyu\n[web]\nlisten = 127.0.0.1:%s\nopen_to_local_users = yes\n' \
			"$sock" "$wport" >"$tmp/web.ini"
		chmod 0600 "$tmp/web.ini"
		"$BUILD_DIR/kyu-web" -c "$tmp/web.ini" 2>"$tmp/web.log" &
		web_pid=$!
		for _ in $(seq 1 50); do port_busy "$wport" && break; sleep 0.2; done
		cat >"$tmp/web.py" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
base, n, mid, job = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
only = sys.argv[5] if len(sys.argv) > 5 else None
pages = [("overview", "/api/overview"), ("running", "/api/running"),
         ("failed", "/api/jobs?status=failed"), ("succeeded", "/api/jobs?status=succeeded"),
         ("succeeded_deep", "/api/jobs?status=succeeded&before=" + urllib.parse.quote(mid)),
         ("waiting", "/api/jobs?status=waiting"), ("retrying", "/api/retrying"),
         ("job", "/api/job?id=" + job), ("schedules", "/api/schedules"), ("locks", "/api/locks"),
         ("daemons", "/api/daemons")]
# The lists' filters (issue 30): served by an index (queue; a time range),
# or read from a window of the index (a search, a time range with a queue,
# retrying), a search that finds nothing being the worst case.
midt = urllib.parse.quote(mid.split(",")[0])
pages += [("f_failed_queue", "/api/jobs?status=failed&queue=mail"),
          ("f_succ_queue", "/api/jobs?status=succeeded&queue=reports"),
          ("f_succ_until", "/api/jobs?status=succeeded&until=" + midt),
          ("f_succ_newer", "/api/jobs?status=succeeded&after=" + urllib.parse.quote(mid)),
          ("f_succ_q_until", "/api/jobs?status=succeeded&queue=reports&until=" + midt),
          ("f_failed_search", "/api/jobs?status=failed&q=status%203"),
          ("f_succ_search_none", "/api/jobs?status=succeeded&q=nothing-has-this"),
          ("f_retrying_queue", "/api/retrying?queue=billing")]
for name, path in pages:
    if only and name != only:
        continue
    times, status, size = [], 0, 0
    for i in range(n + 1):
        t = time.monotonic()
        try:
            with urllib.request.urlopen(base + path, timeout=60) as r:
                body, status = r.read(), r.status
        except urllib.error.HTTPError as e:
            body, status = e.read(), e.code
        if i:  # the first request warms the connection and the caches
            times.append((time.monotonic() - t) * 1000)
        else:  # kyu-web's own cache (the overview's last hour) is cold
            first = (time.monotonic() - t) * 1000
        size = len(body)
    print("%s%s\t%d\t%.1f\t%.1f\t%.1f\t%d" % (name, "_kyu_jobs" if only else "", status, first,
                                            statistics.median(times), max(times), size))
PY
		python3 "$tmp/web.py" "http://127.0.0.1:$wport" "$WEB_REPEAT" "$mid" "web-f-$((fin / 3))" >>"$web_res" ||
			note "web: the timing client failed"
		sql -e "RENAME TABLE kyu_minutes TO kyu_minutes_away"
		python3 "$tmp/web.py" "http://127.0.0.1:$wport" "$WEB_REPEAT" "$mid" "web-f-$((fin / 3))" overview \
			>>"$web_res" || note "web: the timing client failed"
		sql -e "RENAME TABLE kyu_minutes_away TO kyu_minutes"
		rss=$(awk '/^VmRSS/ {print $2}' "/proc/$web_pid/status" 2>/dev/null || echo -)
		kill -TERM "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
		row "$web_res" "kyu-web_VmRSS_KiB" "-" "$rss" "-" "-" "-"
		row "$web_res" "fill_s" "-" "$fill_s" "-" "-" "-"
	fi
fi

# --- report ------------------------------------------------------------------------
if [ -s "$claims" ]; then
	echo
	echo "Claim shapes under contention (jobs/s per run, claim+select+finish, no spawn; dl = deadlocks+lock wait timeouts retried;"
	echo "lw/1k = InnoDB row lock waits per 1,000 claims; claim_ms = mean claim round trip; dbl = rows claimed twice;"
	echo "plain/pN = the partitioned claim over N partitions)"
	printf '%-4s %-12s %5s %5s  %-26s %-12s %-14s %-14s %-5s %s\n' iso shape procs batch "jobs/s (runs)" "dl (runs)" "lw/1k (runs)" "claim_ms" dbl note
	awk '
	{
		rep = $1; line = $0
		delete kv
		for (i = 2; i <= NF; i++) if (split($i, a, "=") == 2) kv[a[1]] = a[2]
		k = kv["isolation"] " " kv["shape"] (kv["partitions"] > 0 ? "/p" kv["partitions"] : "") " " kv["procs"] " " kv["batch"]
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		r[k] = r[k] (r[k] == "" ? "" : " / ") (kv["db_jobs_per_s"] == "" ? "err" : kv["db_jobs_per_s"])
		d[k] = d[k] (d[k] == "" ? "" : "/") (kv["deadlocks"] + kv["lockwaits"])
		lw[k] = lw[k] (lw[k] == "" ? "" : "/") sprintf("%.0f", kv["lock_waits_per_1000_claims"])
		cm[k] = cm[k] (cm[k] == "" ? "" : "/") sprintf("%.1f", kv["claim_ms"])
		dbl[k] += kv["double_claims"] + (kv["rows"] - kv["attempts1"] - kv["double_claims"] - kv["waiting"])
		if (kv["timeout"] == 1) nt[k] = nt[k] "TIMEOUT(" kv["succeeded"] "/" kv["rows"] ") "
		if ($2 == "error") nt[k] = nt[k] "ERROR "
	}
	END {
		for (i = 1; i <= nk; i++) {
			split(order[i], f, " ")
			printf "%-4s %-12s %5s %5s  %-26s %-12s %-14s %-14s %-5s %s\n", f[1], f[2], f[3], f[4], r[order[i]], d[order[i]], lw[order[i]], cm[order[i]], dbl[order[i]], nt[order[i]]
		}
	}' "$claims"
fi

if [ -s "$results" ]; then
	echo
	echo "Throughput (jobs/s = jobs / (last finished_at - first started_at), database clock;"
	echo "%limit = vs the best one-process limit loop of the same mode (the issue's limit), %any = vs"
	echo "the best limit loop of any process count; each loop the mean of its runs)"
	awk -F'\t' '
	$1 ~ /^limit:/ { s[$1 " " $2] += $7; c[$1 " " $2]++; m[$1 " " $2] = $2; p[$1 " " $2] = $3 }
	{ rows[NR] = $0 }
	END {
		for (k in s) {
			v = s[k] / c[k]
			if (v > best[m[k]]) best[m[k]] = v
			if (p[k] == 1 && v > best1[m[k]]) best1[m[k]] = v
		}
		printf "%-16s %-7s %4s %3s %6s %8s %7s %6s %5s %6s %6s %6s %5s %9s %9s %7s %7s %7s  %s\n", \
			"case", "mode", "w/p", "run", "jobs", "secs", "jobs/s", "%limit", "%any", "q/job", "upd/j", \
			"sel/j", "conns", "rss_m_KiB", "rss_w_KiB", "own_ms", "db_ms", "box_ms", "note"
		for (i = 1; i <= NR; i++) {
			n = split(rows[i], f, "\t")
			pct = pct2 = "-"
			if (f[7] ~ /^[0-9.]+$/ && best1[f[2]] > 0) pct = sprintf("%.0f%%", 100 * f[7] / best1[f[2]])
			if (f[7] ~ /^[0-9.]+$/ && best[f[2]] > 0) pct2 = sprintf("%.0f%%", 100 * f[7] / best[f[2]])
			printf "%-16s %-7s %4s %3s %6s %8s %7s %6s %5s %6s %6s %6s %5s %9s %9s %7s %7s %7s  %s\n", \
				f[1], f[2], f[3], f[4], f[5], (f[6] ~ /^[0-9.]+$/ ? sprintf("%.2f", f[6]) : f[6]), \
				f[7], pct, pct2, f[8], f[9], f[10], f[11], f[12], f[13], f[14], f[15], f[16], f[17]
		}
	}' "$results"
	echo
	echo "own_ms: CPU ms per job of the limit loop's processes or of kyud (supervisor + workers),"
	echo "not counting the jobs; db_ms: of mariadbd; box_ms: of the whole machine (/proc/stat, jobs"
	echo "and the database included; for limit rows the run window alone, for kyud from its start"
	echo "to the last job's end, this script's 0.5 s progress queries included);"
	echo "rss_m/rss_w: RSS of the kyud master / largest worker after the run;"
	echo "conns: new connections (this script's own subtracted)."
	echo "floor rows: seed 000's minimal table (floor.c), jobs/s by the run's wall clock, db_ms over the run"
	echo "alone (its fill excluded): the database cost a job cannot go below; compare db_ms with kyud's."
fi

# table FILE FORMAT COLUMN-NAMES...: prints the names, then each tab-separated
# line of FILE, with FORMAT (only %s conversions; empty fields print as -)
# Chatty jobs that run until stopped: a burst of LIVE_LINES lines, then a
# second's sleep (one fork a second, whatever the rate).
live_snapshot() { # prints: com_update bytes_received redo_bytes
	sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN
	        ('Com_update','Com_update_multi','Bytes_received','Innodb_os_log_written')" |
		awk '{v[$1]=$2} END {print v["Com_update"]+v["Com_update_multi"], v["Bytes_received"]+0,
		      v["Innodb_os_log_written"]+0}'
}
workers_cpu() { local w t=0; for w in $(children "$kyud_pid"); do t=$((t + $(proc_cpu "$w"))); done; echo "$t"; }
if has_case live && [ "$kyud_ok" = 1 ]; then
	db_pid=$(cat "$tmp/db/mysqld.pid")
	hz=$(getconf CLK_TCK)
	line=$(printf 'x%.0s' $(seq 1 70))
	for iv in $LIVE_INTERVALS; do
		{
			echo "TRUNCATE TABLE kyu_jobs;"
			echo "INSERT INTO kyu_jobs (command) SELECT 'while :; do i=0; while [ \$i -lt $LIVE_LINES ]; do echo \"$line \$i\"; i=\$((i+1)); done; sleep 1; done' FROM seq_1_to_$LIVE_JOBS;"
		} | sql
		log=$tmp/kyud-live-$iv.log
		conf_extra=$(printf 'slots = %d\nlive_output = %d\nlease = 60' $(((LIVE_JOBS + LIVE_WORKERS - 1) / LIVE_WORKERS)) "$iv")
		if ! start_kyud "$LIVE_WORKERS" "$log"; then
			row "$live_res" "$iv" "$LIVE_JOBS" - - - - - - - kyud_failed
			conf_extra=
			continue
		fi
		conf_extra=
		for _ in $(seq 1 300); do
			[ "$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'")" = "$LIVE_JOBS" ] && break
			sleep 0.1
		done
		# Every job past its first interval, and a first write of each done.
		sleep $((iv + 3))
		note "live: live_output=$iv, $LIVE_JOBS jobs: measuring ${LIVE_SECS}s"
		read -r ua ra la < <(live_snapshot)
		da=$(proc_cpu "$db_pid")
		wa=$(workers_cpu)
		sleep "$LIVE_SECS"
		read -r ub rb lb < <(live_snapshot)
		db=$(proc_cpu "$db_pid")
		wb=$(workers_cpu)
		running=$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'")
		stop_kyud
		row "$live_res" "$iv" "$LIVE_JOBS" "$running" "$LIVE_SECS" \
			"$(awk -v d=$((ub - ua)) -v s="$LIVE_SECS" 'BEGIN {printf "%.2f", d / s}')" \
			"$(awk -v d=$((rb - ra)) -v s="$LIVE_SECS" 'BEGIN {printf "%.1f", d / s / 1024}')" \
			"$(awk -v d=$((lb - la)) -v s="$LIVE_SECS" 'BEGIN {printf "%.1f", d / s / 1024}')" \
			"$(awk -v d=$((db - da)) -v s="$LIVE_SECS" -v hz="$hz" 'BEGIN {printf "%.1f", 100 * d / hz / s}')" \
			"$(awk -v d=$((wb - wa)) -v s="$LIVE_SECS" -v hz="$hz" 'BEGIN {printf "%.1f", 100 * d / hz / s}')" ok
	done
	sql <<<"TRUNCATE TABLE kyu_jobs"
fi

table() {
	local f=$1 fmt=$2
	shift 2
	# shellcheck disable=SC2059
	printf "$fmt" "$@"
	awk -F'\t' -v fmt="$fmt" '{
		out = ""; rest = fmt; k = 0
		while ((p = index(rest, "%")) > 0) {
			out = out substr(rest, 1, p - 1)
			rest = substr(rest, p)
			match(rest, /^%-?[0-9]*s/)
			k++
			out = out sprintf(substr(rest, 1, RLENGTH), (k > NF || $k == "") ? "-" : $k)
			rest = substr(rest, RLENGTH + 1)
		}
		printf "%s", out rest
	}' "$f"
}

if [ -s "$idle_res" ]; then
	echo
	echo "Idle database cost: a running kyud with an empty queue (statements the server counted in the"
	echo "window, this script's own subtracted; q/poll = q/s x poll_interval; upd = claim UPDATEs = polls)"
	table "$idle_res" '%7s %6s %3s %5s %7s %7s %6s %4s %4s %5s %9s %9s  %s\n' \
		workers poll_s run secs queries q/s q/poll upd sel conns rss_m_KiB rss_w_KiB note
fi

if [ -s "$live_res" ]; then
	echo
	echo "Live output ([kyud] live_output; 0: off): $LIVE_JOBS running jobs printing $LIVE_LINES lines of 80 bytes"
	echo "a second each, $LIVE_WORKERS workers; per second over the window: UPDATEs the server counted (heartbeats"
	echo "included: lease 60, every 15 s), KiB it received, KiB of redo log it wrote; CPU %, of one core"
	table "$live_res" '%8s %5s %8s %5s %6s %7s %8s %7s %10s  %s\n' \
		interval jobs running secs upd/s recv_KiB redo_KiB db_cpu% workers_cpu% note
fi

if [ -s "$lat_res" ]; then
	echo
	echo "Wake-up latency (ms)"
	if awk -F'\t' '$1 !~ /^(retry|slot|key)$/ {f = 1} END {exit !f}' "$lat_res"; then
		echo "floor/udf/client/poll: INSERT -> start of the job's command ($LAT_N single-row INSERTs at $LAT_RATE/s,"
		echo "$LAT_WORKERS workers; start = the command's own first clock reading, host monotonic clock;"
		echo "insert = the INSERT round trip; db = started_at - created_at, database clock, no spawn)"
	fi
	if awk -F'\t' '$1 ~ /^(retry|slot|key)$/ {f = 1} END {exit !f}' "$lat_res"; then
		echo "retry/slot/key: database clock, poll_interval 3600: retry = attempt 2's started_at - its run_at"
		echo "($LAT_RETRY_N jobs, exit 75 then 0, backoff_base 1, lease $LAT_RETRY_LEASE, $LAT_WORKERS workers; lost = no second"
		echo "attempt succeeded); slot (max_running 1) and key (one concurrency key): two daemons of"
		echo "$LAT_HANDOFF_WORKERS worker(s), lease $LAT_HANDOFF_LEASE, $LAT_HANDOFF_N /bin/true jobs, a job's started_at - the"
		echo "previous one's finished_at (got = jobs run); note: statements per job, jobs per daemon A/B,"
		echo "and the starts on the other daemon than the previous job's (switches) with their p50"
	fi
	table "$lat_res" '%-7s %3s %6s %5s %4s %8s %8s %8s %8s %8s  %8s %8s  %7s %7s  %s\n' \
		wake run poll_s got lost p50 p90 p99 max mean ins_p50 ins_p99 db_p50 db_p99 note
fi

if [ -s "$scale_res" ]; then
	echo
	echo "Scale: claim time (ms, UPDATE + SELECT of $SCALE_BATCH rows, limit loop, 1 process, READ COMMITTED,"
	echo "no spawn) and throughput on $SCALE_JOBS runnable jobs added to a table of ROWS rows: finished ="
	echo "succeeded within retention, future = waiting with run_at tomorrow; kyud: $SCALE_WORKERS workers"
	table "$scale_res" '%9s %-9s %7s %7s %7s %7s %7s %8s %6s %7s  %s\n' \
		rows mix fill_s p50 p90 p99 max limit_j/s kyud_n kyud_j/s note
fi

if [ -s "$del_res" ]; then
	echo
	echo "Retention delete while claiming: kyud's DELETE ... LIMIT batch (store_cleanup) back to back until"
	echo "the expired rows are gone, while the limit loop claims $SCALE_CLAIM_RATE times/s ($SCALE_BATCH rows);"
	echo "claim ms without the delete (${SCALE_BASE_SECS}s just before) and during it"
	table "$del_res" '%9s %7s %7s %7s %6s %8s  %7s %7s %7s  %6s %7s %7s %7s  %s\n' \
		rows batch deleted del_s stmts stmt_max base_p50 base_p99 base_max claims p50 p99 max fill_s
fi

if [ -s "$queue_res" ]; then
	echo
	echo "Queues: kyud ($QUEUE_WORKERS workers) on N /bin/true jobs spread over QUEUES queues (see the header:"
	echo "10 = some with non-binding limits, 1000 = a few due each plus $QUEUE_FUTURE due tomorrow);"
	echo "q/job = statements the server counted per job; idle q/s = that kyud idle afterwards, poll 30 s"
	awk -F'\t' '$1 == 1 && $4 ~ /^[0-9]+$/ {b = $4} {r[NR] = $0} END {
		printf "%7s %3s %6s %7s %6s %6s %8s %9s  %s\n", "queues", "run", "jobs", "jobs/s", "%1q", "q/job", "deadlck", "idle_q/s", "note"
		for (i = 1; i <= NR; i++) {
			split(r[i], f, "\t")
			pct = (b > 0 && f[4] ~ /^[0-9]+$/) ? sprintf("%.0f%%", 100 * f[4] / b) : "-"
			printf "%7s %3s %6s %7s %6s %6s %8s %9s  %s\n", f[1], f[2], f[3], f[4], pct, f[5], f[6], f[7], f[8]
		}
	}' "$queue_res"
fi

if [ -s "$wf_res" ]; then
	echo
	echo "Workflows ($WF_WORKERS workers, /bin/true jobs): plain = jobs without upstreams (the baseline); fanout = one"
	echo "upstream, n dependents; fanin = n upstreams, one dependent z; chain = n steps. ins_s: the INSERTs; new_s: one"
	echo "CALL kyu_settle acting on their 'new' items; first/all/last: ms from the upstream's end (a gate job) to the first"
	echo "start, the last start and the last end; jobs/s over that (plain: first start to last end); lat: ms from an"
	echo "upstream's end to its dependent's start (chain: each step; fanout: each dependent; fanin: z after the last"
	echo "upstream), mean p50 p90 max; per job (fanin: per upstream end, chain: per step): q = statements kyud sent,"
	echo "inner = statements run inside kyu_settle and the triggers, calls = CALLs, db_ms = mariadbd CPU ms; tenth ="
	echo "fanin: ends/s over the first and the last tenth of the ends (equal when an end's cost does not grow)"
	table "$wf_res" '%-6s %6s %6s %6s %8s %7s %7s %6s %8s %7s %7s %7s %6s %7s %7s %7s %9s  %s\n' \
		shape n ins_s new_s first_ms all_ms last_ms jobs/s lat_mean lat_p50 lat_p90 lat_max q/job inner/j calls/j db_ms/j tenth note
fi

if [ -s "$tenant_res" ]; then
	echo
	echo "Many queues (tenants): $TENANT_ROWS waiting /bin/true jobs over 1 and $TENANT_QUEUES queues, one kyud of"
	echo "$TENANT_WORKERS workers for $TENANT_SECS s each; started = queues that started a job; first_* = seconds from"
	echo "kyud's start to each such queue's first start (p50/p99/max); q/job = statements; reads/job = Handler_read_*;"
	echo "db_ms/job = mariadbd CPU"
	table "$tenant_res" '%-7s %8s %7s %8s %9s %9s %9s %7s %9s %9s  %s\n' \
		queues jobs jobs/s started first_p50 first_p99 first_max q/job reads/job db_ms/job note
fi

if [ -s "$intake_res" ]; then
	echo
	echo "Intake bound: single-row INSERTs into one queue, one session (us per INSERT, client included;"
	echo "'full at B' = the queue holds B waiting jobs and max_waiting B: every INSERT is refused);"
	echo "bulk = one INSERT ... SELECT of INTAKE_BULK rows (us per row); 1000s = INTAKE_MULTI_REPS INSERTs"
	echo "of 1,000 rows (the last column: ms per INSERT, median and max, server-timed); no trigger = without"
	echo "the four BEFORE INSERT checks (kyu_jobs_check, max_waiting, after, traceparent; the workflows'"
	echo "AFTER INSERT trigger stays); 6's = schema version 6's three (all but kyu_jobs_check)"
	table "$intake_res" '%-18s %6s %8s %12s\n' case inserts rows_now us/insert
fi

if [ -s "$dmn_res" ]; then
	echo
	echo "Daemons side by side on one database: true = N /bin/true jobs, sleep = $DAEMON_SLEEP_N x daemons jobs of"
	echo "/bin/sleep $DAEMON_SLEEP (bounded by slots: $DAEMON_WORKERS workers x the default 8 slots per daemon);"
	echo "claim ms from the daemons' histograms (p50/p99"
	echo "interpolated in their buckets); rows/claim; dl/1k = deadlocks retried and lw/1k = InnoDB row lock"
	echo "waits per 1,000 claims; q/job = statements per job (this script's own subtracted); cpu = machine busy"
	echo "over the run; db = mariadbd's share of that"
	table "$dmn_res" '%-5s %7s %7s %3s %6s %7s %8s %8s %7s %6s %6s %6s %6s %5s %5s  %s\n' \
		jobs daemons workers run jobs jobs/s claim_p50 claim_p99 claims rows/c dl/1k lw/1k q/job cpu db note
fi

if [ -s "$hist_res" ]; then
	echo
	echo "History table: finish:plain/history = limit loop (2 processes, batches of 100, no spawn) without and with"
	echo "moving finished rows to kyu_jobs_history in the finish; drop = claims ($SCALE_BATCH rows, $SCALE_CLAIM_RATE/s) for 2 s"
	echo "before to 2 s after one DROP PARTITION of the expired rows (base = p50/p99 just before, without it);"
	echo "delete = the same rows in kyu_jobs, kyud's retention delete (LIMIT 1000) while claiming, for comparison"
	table "$hist_res" '%-18s %3s %7s %7s %11s %9s %6s %7s %7s %7s %8s  %s\n' \
		case run jobs jobs/s claim_ms finish_ms q/job p50 p99 max drop_ms note
fi

if [ -s "$web_res" ]; then
	echo
	echo "kyu web on kyu_jobs of $WEB_ROWS rows and kyu_minutes of 24 h x 4 queues x $WEB_WRITERS workers: each"
	echo "page's first request, then $WEB_REPEAT more: median and max (ms, HTTP and JSON included; the goal is"
	echo "<= 50 ms); overview_kyu_jobs: without kyu_minutes (its first request not yet cached, the rest from"
	echo "kyu-web's 30 s cache); then kyu-web's VmRSS and the fill time"
	table "$web_res" '%-20s %6s %9s %9s %9s %9s\n' page status first_ms median_ms max_ms bytes
fi

if [ -s "$mem_res" ]; then
	echo
	echo "Memory of kyud ($MEM_WORKERS workers): VmRSS and VmHWM (peak) from /proc/PID/status, KiB"
	table "$mem_res" '%-34s %-9s %8s %9s %9s\n' phase process pid VmRSS VmHWM
fi
