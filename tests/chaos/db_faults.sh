# shellcheck shell=bash
# Fault suite (issue 12), scenario 3: the database fails under two kyud.
# Sourced by tests/integration/chaos/db.sh (outages a and b) and
# chaos/db_outage.sh (c and d), which set DB_FAULTS; two tests rather than
# one because a loaded 2-core machine takes 30 s or more per server start.
#
# A private mariadbd (tests/lib.sh), kyud a and b (2 workers each, lease 8 s,
# fence_margin 3 s, heartbeat 2 s) running a stream of jobs, while the server
#   (a) restarts cleanly (down ~2 s),
#   (b) is killed with kill -9 and restarted (crash recovery),
#   (c) is stopped for longer than a lease (12 s): jobs running then must be
#       fenced (killed before their lease can expire),
#   (d) is frozen with SIGSTOP for longer than a lease (12 s), then SIGCONT.
# Before each outage, jobs of 0.1-0.8 s and 1-3 s are submitted; before (c)
# and (d) also four jobs whose first run lasts 30 s, which must be fenced.
# Afterwards: everything finished, nothing lost or run twice at once
# (tests/chaos/check.py), both daemons alive the whole time and exit 0 on
# TERM, no worker died, and each worker logged each outage at most once
# ("database connection lost" or "cannot connect", then "restored").
#
# Fence bound: a job's lease on the server is at least what was read just
# before the outage (L), and a heartbeat between that read (t_read) and the
# outage (t_down) extends it by at most (t_down - t_read) + heartbeat. So an
# attempt-1 still alive at L + (t_down - t_read) + heartbeat outlived its
# lease: that is the check (the watcher's "gone" time, an upper bound of the
# death). Killed earlier than L - fence_margin - heartbeat - 1 s is "too early".
#
# SOAK=1: the outages three times over (CHAOS_ROUNDS=N); CHAOS_PHASES="a b c d"
# runs any of them.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

lease=8 margin=3 hb=2
if [ "${SOAK:-0}" = 1 ]; then ROUNDS=${CHAOS_ROUNDS:-3}; else ROUNDS=${CHAOS_ROUNDS:-1}; fi
PHASES=${CHAOS_PHASES:-${DB_FAULTS:?set by the test}}
chaos_private_db
common=(kyud.workers=2 kyud.slots=6 kyud.lease="$lease" kyud.fence_margin="$margin" kyud.heartbeat="$hb"
	database.connect_timeout=2 job.max_attempts=50 job.backoff_base=1 job.backoff_cap=2)
chaos_watch_start
d_start a "${common[@]}"
d_start b "${common[@]}"
problems=()

# Where each outage begins in each log ("LINE PHASE" in $T_DIR/segments-NAME).
log_offsets() {
	local n
	for n in a b; do echo "$(($(wc -l <"${D_LOG[$n]}") + 1)) $1" >>"$T_DIR/segments-$n"; done
}

# check_reconnect_lines: per worker, over the whole log, outage lines
# ("database connection lost" or "cannot connect to the database") and
# "database connection restored" alternate, start with an outage, end
# restored, and no outage has two outage lines of one worker: each outage is
# logged once per worker (a worker idle through it may log nothing; one that
# kept its connection through a short restart may log nothing).
check_reconnect_lines() {
	local n out
	for n in a b; do
		out=$(awk -v name="$n" '
			FNR == NR { seg_line[++ns] = $1; seg_name[ns] = $2; next }
			match($0, /^kyud\[worker [0-9]+\]: /) {
				w = substr($0, 13, RLENGTH - 15)
				seg = "before"
				for (i = 1; i <= ns; i++) if (FNR >= seg_line[i]) seg = seg_name[i]
				if ($0 ~ /: (database connection lost|cannot connect to the database)/) {
					if (state[w] == "L") printf "PROBLEM kyud %s worker %s logged a second outage line without a restore between (outage %s, line %d): %s\n", name, w, seg, FNR, $0
					if (seen[w, seg]++) printf "PROBLEM kyud %s worker %s logged outage %s more than once (line %d): %s\n", name, w, seg, FNR, $0
					state[w] = "L"; n_l[w]++; per[w] = per[w] " " seg ":lost"
				} else if ($0 ~ /: database connection restored/) {
					if (state[w] != "L") printf "PROBLEM kyud %s worker %s: restored without an outage line (line %d)\n", name, w, FNR
					state[w] = "R"; per[w] = per[w] "/restored"
				}
			}
			END {
				for (w in state) {
					if (state[w] == "L") printf "PROBLEM kyud %s worker %s: its last outage was never followed by restored\n", name, w
					printf "  kyud %s worker %s:%s\n", name, w, per[w]
				}
			}' "$T_DIR/segments-$n" "${D_LOG[$n]}")
		echo "$out" | grep -v '^PROBLEM' | sort
		while read -r line; do problems+=("${line#PROBLEM }"); done < <(echo "$out" | grep '^PROBLEM' || true)
	done
}

# wait_running N: until at least N attempts run (started, not ended).
wait_running() {
	local deadline=$((SECONDS + 30))
	until [ "$(awk '$1 == "S" { s[$2 " " $5] = 1 } $1 == "E" { delete s[$2 " " $5] } END { print length(s) }' "$CHAOS_MARKS")" -ge "$1" ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "fewer than $1 jobs running after 30 s"
		sleep 0.2
	done
}

# long_running PREFIX: the pids of PREFIX jobs' first runs, once all 4 run.
wait_long_running() {
	local deadline=$((SECONDS + 30))
	until [ "$(awk -v p="$1" '$1 == "S" && index($2, p) == 1' "$CHAOS_MARKS" | wc -l)" -ge 4 ] &&
		[ "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE '$1%' AND status = 'running' AND pid IS NOT NULL")" = 4 ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "the 4 long jobs $1* did not all start"
		sleep 0.2
	done
}

# check_fenced PREFIX T_READ T_DOWN T_UP: each first run of PREFIX1..4 (read
# leases in $T_DIR/leases-PREFIX) died during the outage, before its lease.
check_fenced() {
	local p=$1 t_read=$2 t_down=$3 t_up=$4 id l d pid out
	for i in 1 2 3 4; do
		id=$p$i
		l=$(awk -v id="$id" '$1 == id { print $2 }' "$T_DIR/leases-$p")
		pid=$(awk -v id="$id" '$1 == "S" && $2 == id { print $5; exit }' "$CHAOS_MARKS")
		d=$(awk -v id="$id" -v pid="$pid" '$1 == "D" && $2 == id && $4 == pid { print $5, $6 }' "$CHAOS_DEATHS")
		if [ -z "$d" ]; then
			problems+=("$id: first run (pid $pid) not seen dead by the watcher")
			continue
		fi
		out=$(awk -v l="$l" -v r="$t_read" -v dn="$t_down" -v up="$t_up" -v hb="$hb" -v m="$margin" -v d="$d" -v id="$id" '
			BEGIN {
				split(d, x, " "); last = x[1]; gone = x[2]; bound = l + (dn - r) + hb
				printf "%s: lease read %.2f s after the outage began, died %.2f-%.2f s after it (bound %.2f)\n",
					id, l - dn, last - dn, gone - dn, bound - dn
				if (gone > bound) printf "PROBLEM %s outlived its lease: alive until %.2f, lease at most %.2f (outage began %.2f)\n", id, last, bound, dn
				if (last < l - m - hb - 1) printf "PROBLEM %s killed too early: %.2f s before the lease read (%.2f)\n", id, l - last, l
				if (gone > up + 0.5 && up > 0) printf "PROBLEM %s still alive when the database came back (%.2f > %.2f)\n", id, gone, up
			}')
		echo "    $(echo "$out" | grep -v '^PROBLEM')"
		while read -r line; do problems+=("${line#PROBLEM }"); done < <(echo "$out" | grep '^PROBLEM' || true)
		grep -Eq "job $id: lease not renewed for [0-9.]+ s \(lease $lease s, fence_margin $margin s\)" \
			"${D_LOG[a]}" "${D_LOG[b]}" || problems+=("$id: no 'lease not renewed ... killing it' line in a's or b's log")
	done
}

outage() { # outage ROUND PHASE
	local r=$1 ph=$2 pfx="r$1$2" t_read t_down t_up down_for pid running
	chaos_submit "${pfx}s" 1 120 100 800
	chaos_submit "${pfx}m" 1 24 1000 3000
	case $ph in c | d)
		chaos_submit "${pfx}L" 1 4 300 600 30000
		wait_long_running "${pfx}L"
		sleep 0.5 ;;
	*) wait_running 6 ;;
	esac
	log_offsets "$r$ph"
	running=$(awk '$1 == "S" { s[$2 " " $5] = 1 } $1 == "E" { delete s[$2 " " $5] } END { print length(s) }' "$CHAOS_MARKS")
	t_read=$(now)
	sql "SELECT id, UNIX_TIMESTAMP(lease_until) FROM kyu_jobs WHERE id LIKE '${pfx}L%'" >"$T_DIR/leases-${pfx}L"
	case $ph in
	a) private_db_stop; down_for=2 ;;
	b) pid=$(private_db_pid)
	   kill -KILL "$pid"
	   while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	   down_for=2 ;;
	c) private_db_stop; down_for=$((lease + 4)) ;;
	d) pid=$(private_db_pid)
	   kill -STOP "$pid"
	   down_for=$((lease + 4)) ;;
	esac
	t_down=$(now)
	say "($r$ph) database $(case $ph in a) echo stopped cleanly;; b) echo killed with SIGKILL;; c) echo stopped;; d) echo frozen with SIGSTOP;; esac) (running: $running job(s) just before); down for $down_for s"
	sleep "$down_for"
	kill -0 "${D_PID[a]}" 2>/dev/null || fail "kyud a died during outage $ph"
	kill -0 "${D_PID[b]}" 2>/dev/null || fail "kyud b died during outage $ph"
	case $ph in
	d) kill -CONT "$pid" ;;
	*) private_db_start ;;
	esac
	t_up=$(now)
	say "($r$ph) database back after $(awk -v a="$t_down" -v b="$t_up" 'BEGIN { printf "%.1f", b - a }') s"
	case $ph in c | d) check_fenced "${pfx}L" "$t_read" "$t_down" "$t_up" ;; esac
	chaos_wait_finished 45 || problems+=("($r$ph) not every job finished after the restore (stalled for 45 s)")
}

for r in $(seq "$ROUNDS"); do
	for ph in $PHASES; do outage "$r" "$ph"; done
done

# A worker that lost its connection reconnects on its own timer, backing
# off to 10 s while the server is away: one with no job left to run may
# still be waiting for it when the last job has finished. Give each up to
# 30 s to log its restore before the daemons stop (the check below then
# says which did not).
unrestored() { # prints the workers whose last outage line has no restore after it
	local n
	for n in a b; do
		awk -v name="$n" 'match($0, /^kyud\[worker [0-9]+\]: /) {
				w = substr($0, 13, RLENGTH - 15)
				if ($0 ~ /: (database connection lost|cannot connect to the database)/) state[w] = "L"
				else if ($0 ~ /: database connection restored/) state[w] = "R"
			}
			END { for (w in state) if (state[w] == "L") print name, w }' "${D_LOG[$n]}"
	done
}
deadline=$((SECONDS + 30))
while [ -n "$(unrestored)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
d_term a 60
d_term b 60
say "outage and restore lines per worker, by outage:"
check_reconnect_lines
chaos_check
for p in "${problems[@]}"; do echo "PROBLEM: $p"; done
[ "${#problems[@]}" = 0 ] || fail "${#problems[@]} problem(s) (above)"
