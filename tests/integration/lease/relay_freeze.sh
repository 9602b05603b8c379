#!/usr/bin/env bash
# Self-fencing when the database stops answering (rather than refusing):
# kyud A reaches MariaDB through a TCP relay (tests/relay.py), kyud B
# directly through the socket. With A's jobs running, the relay is frozen
# (kill -STOP: connections stay open, nothing is forwarded, no error ever
# comes back). Then:
#   - A kills each of its jobs before the lease the server holds expires
#     (and not absurdly early), and A's supervisor and worker stay alive;
#   - B takes every job over (attempt 2) only after its lease expired, and
#     never while attempt 1 still runs;
#   - once the relay is thawed, every row ends succeeded at attempt 2, and
#     A's late writes change nothing.
# Run twice: lease 10 / fence_margin 3, and lease 60 / fence_margin 10.
# (RELAY_FREEZE_CASES="10:3" runs a subset, for debugging.) About 110 s in
# all, 120 s on a loaded machine (the lease-60 case waits out a heartbeat and
# a whole lease): its ctest TIMEOUT must be above the default 120.
#
# Only orderings and the lease bound are asserted (times by the host clock,
# which is the database's: same machine), never tight timings:
#   - lease_until is read right after the relay is seen stopped: a lower bound
#     of the lease the server holds (a renewal whose reply A did not get can
#     only have extended it; one whose reply A got had committed before);
#   - a job's death time is when the watcher saw it gone (an upper bound);
#   - attempt 2's start is B's claim time (started_at, a lower bound).
. "$KYU_SRC/tests/lib.sh"

N=4 # jobs per case; A and B have 6 slots, so A's worker also claims (and
#     blocks on the frozen relay) while its jobs run
RELAY_PID='' B_PID='' B_LOG='' WATCH_PID=''

relay_freeze_exit() {
	local rc=$?
	set +e
	[ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null
	if [ -n "$RELAY_PID" ]; then
		kill -KILL "$RELAY_PID" 2>/dev/null
		wait "$RELAY_PID" 2>/dev/null
	fi
	if [ "$rc" != 0 ] && [ -s "${B_LOG:-}" ]; then
		echo "---- $B_LOG (kyud B, direct), last lines other than job started/succeeded/acquired:" >&2
		grep -Ev 'job .* (attempt [0-9]+ started|succeeded)|acquired [0-9]+ job' "$B_LOG" | tail -n 15 >&2
		echo "---- last lines:" >&2
		tail -n 10 "$B_LOG" >&2
		echo "----" >&2
	fi
	if [ -n "$B_PID" ]; then
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$B_PID") "$B_PID" 2>/dev/null
		wait "$B_PID" 2>/dev/null
	fi
	(exit "$rc")
	cleanup
}
trap relay_freeze_exit EXIT

# gt A B [PLUS]: A > B + PLUS, as floats.
gt() { awk -v a="$1" -v b="$2" -v c="${3:-0}" 'BEGIN { exit !(a > b + c) }'; }
now() { echo "${EPOCHREALTIME/,/.}"; }
# say MSG: progress, with the time since the case started.
say() { awk -v a="$t0" -v b="$(now)" -v m="$*" 'BEGIN { printf "  [%5.1f s] %s\n", b - a, m }'; }

# Process state letter of PID (R, S, T, Z, ...), empty when gone; no fork.
proc_state() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 0
	st=${st##*) }
	echo "${st%% *}"
}

# is_descendant PID ANCESTOR
is_descendant() {
	local p=$1 pp
	while [ "$p" -gt 1 ]; do
		pp=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
		[ -n "$pp" ] || return 1
		[ "$pp" = "$2" ] && return 0
		p=$pp
	done
	return 1
}

start_relay() {
	local pf=$T_DIR/relay-$case.port
	rm -f "$pf"
	python3 "$KYU_SRC/tests/relay.py" "$pf" 127.0.0.1 "$KYU_DB_PORT" 600 2>>"$T_DIR/relay-$case.log" &
	RELAY_PID=$!
	for _ in $(seq 300); do [ -s "$pf" ] && break; sleep 0.1; done
	[ -s "$pf" ] || fail "relay did not write its port within 30 s (see $T_DIR/relay-$case.log)"
	RELAY_PORT=$(cat "$pf")
	assert_eq 1 "$(mariadb --no-defaults --protocol=tcp -h127.0.0.1 -P"$RELAY_PORT" -ukyu -pkyu \
		-D "$T_DB" -N -B -e 'SELECT 1' 2>&1)" "a query through the relay (port $RELAY_PORT to $KYU_DB_PORT)"
}

start_b() {
	local deadline
	B_LOG=$T_DIR/b-$case.log
	: >"$B_LOG"
	write_ini "$T_DIR/b-$case.ini" kyud.workers=1 kyud.slots=6 kyud.lease="$lease" kyud.fence_margin="$margin"
	env --default-signal "$KYUD" -c "$T_DIR/b-$case.ini" 2>>"$B_LOG" &
	B_PID=$!
	deadline=$(($(date +%s) + 60))
	until grep -q 'kyud\[sup\]: ready:' "$B_LOG"; do
		kill -0 "$B_PID" 2>/dev/null || fail "kyud B exited before it was ready"
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud B not ready after 60 s"
		sleep 0.1
	done
}

stop_b() {
	local deadline=$(($(date +%s) + 30)) rc=0
	kill -TERM "$B_PID"
	while kill -0 "$B_PID" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud B (pid $B_PID) still running 30 s after TERM"
		sleep 0.1
	done
	wait "$B_PID" || rc=$?
	B_PID=
	assert_eq 0 "$rc" "kyud B exit status after TERM"
	grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$B_LOG" && fail "sanitizer report in $B_LOG"
	return 0
}

# watch_deaths OUT PID...: append "PID EPOCH" to OUT when each PID is gone (or
# a zombie), polling every 50 ms; gives up after 5 minutes.
watch_deaths() {
	local out=$1 p s until=$((SECONDS + 300))
	shift
	local -A alive=()
	for p; do alive[$p]=1; done
	while [ ${#alive[@]} -gt 0 ] && [ "$SECONDS" -lt "$until" ]; do
		for p in "${!alive[@]}"; do
			s=$(proc_state "$p")
			if [ -z "$s" ] || [ "$s" = Z ]; then
				echo "$p $(now)" >>"$out"
				unset "alive[$p]"
			fi
		done
		sleep 0.05
	done
}

run_case() {
	lease=$1 margin=$2 case=lease$1
	local pfx=L$1-j marks=$T_DIR/starts-$case deaths=$T_DIR/deaths-$case hb
	local id i p row ids=() pid1=() lease0=() lease_at=() t0 deadline stop_at max_l
	hb=$(awk -v l="$lease" 'BEGIN { print l / 4 }')
	t0=$(now)
	echo "== case lease=$lease fence_margin=$margin (heartbeat $hb s)"
	: >"$marks"
	: >"$deaths"

	start_relay
	KYUD_LOG=$T_DIR/a-$case.log
	: >"$KYUD_LOG"
	start_kyud database.socket= database.host=127.0.0.1 database.port="$RELAY_PORT" \
		kyud.workers=1 kyud.slots=6 kyud.lease="$lease" kyud.fence_margin="$margin"

	# Each start appends "ID ATTEMPT HOST_TIME PID"; attempt 1 becomes a long
	# sleep (exec: same pid), attempt 2 succeeds at once.
	sql "INSERT INTO kyu_jobs (id, command)
	     SELECT CONCAT('$pfx', seq),
	            'echo \"\$KYU_JOB_ID \$KYU_ATTEMPT \$(date +%s.%N) \$\$\" >> $marks
	             [ \$KYU_ATTEMPT -ge 2 ] && exit 0
	             exec sleep 600'
	     FROM seq_1_to_$N"
	for i in $(seq "$N"); do ids+=("$pfx$i"); done
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE '$pfx%' AND status = 'running'" "$N" 20
	for _ in $(seq 300); do [ "$(wc -l <"$marks")" -ge "$N" ] && break; sleep 0.1; done
	assert_eq "$N" "$(awk '$2 == 1' "$marks" | wc -l)" "attempt-1 starts in $marks"
	say "$N jobs running under A (through relay port $RELAY_PORT)"

	# All of them run under A's one worker.
	local a_worker
	a_worker=$(pgrep -P "$KYUD_PID" | tr '\n' ' ')
	a_worker=${a_worker% }
	[[ $a_worker =~ ^[0-9]+$ ]] || fail "expected one worker under kyud A (pid $KYUD_PID), found '$a_worker'"
	for i in "${!ids[@]}"; do
		id=${ids[$i]}
		p=$(awk -v id="$id" '$1 == id && $2 == 1 { print $4 }' "$marks")
		[ -n "$p" ] || fail "no attempt-1 start of $id in $marks"
		is_descendant "$p" "$a_worker" || fail "$id attempt 1 (pid $p) does not run under A's worker (pid $a_worker)"
		pid1[i]=$p
	done
	gt "$(grep -c accepted "$T_DIR/relay-$case.log")" 1 ||
		fail "kyud A did not connect through the relay (see $T_DIR/relay-$case.log)"

	# B (direct) is up before the freeze; it has nothing to claim yet.
	start_b
	say "B ready"

	# At least one heartbeat: every lease moved past the claim's, and the
	# job's pid is reported.
	for i in "${!ids[@]}"; do
		lease0[i]=$(sql "SELECT UNIX_TIMESTAMP(lease_until) FROM kyu_jobs WHERE id = '${ids[$i]}'")
	done
	deadline=$(($(date +%s) + ${hb%.*} * 2 + 10))
	for i in "${!ids[@]}"; do
		until row=$(sql "SELECT UNIX_TIMESTAMP(lease_until) > ${lease0[$i]} AND pid = ${pid1[$i]}
		                 FROM kyu_jobs WHERE id = '${ids[$i]}'") && [ "$row" = 1 ]; do
			[ "$(date +%s)" -lt "$deadline" ] || fail "no heartbeat renewed ${ids[$i]} (lease_until still ${lease0[$i]})"
			sleep 0.2
		done
	done

	# Watch A's jobs from now on, then freeze the relay and make sure it
	# stopped before reading the leases.
	watch_deaths "$deaths" "${pid1[@]}" &
	WATCH_PID=$!
	kill -STOP "$RELAY_PID"
	for _ in $(seq 100); do [ "$(proc_state "$RELAY_PID")" = T ] && break; sleep 0.05; done
	assert_eq T "$(proc_state "$RELAY_PID")" "state of the frozen relay"
	stop_at=$(now)
	max_l=0
	# One statement for all: read one by one on a loaded machine, the last
	# lease was once read after B had already run its job (NULL).
	local all
	all=$(sql "SELECT GROUP_CONCAT(IFNULL(UNIX_TIMESTAMP(lease_until), 'NULL') ORDER BY FIELD(id, '$(IFS=,; echo "${ids[*]}" | sed "s/,/','/g")') SEPARATOR ' ')
		FROM kyu_jobs WHERE id IN ('$(IFS=,; echo "${ids[*]}" | sed "s/,/','/g")')")
	read -r -a lease_at <<<"$all"
	for i in "${!ids[@]}"; do
		[ "${lease_at[$i]:-NULL}" != NULL ] || fail "${ids[$i]}: no lease right after the freeze (status $(sql "SELECT status FROM kyu_jobs WHERE id = '${ids[$i]}'"))"
		gt "${lease_at[$i]}" "$max_l" && max_l=${lease_at[$i]}
	done
	say "relay frozen at $stop_at (after a heartbeat); leases until $(printf '%s ' "${lease_at[@]}")"

	# Frozen until every attempt 1 is gone and B started every attempt 2, at
	# least 2 s past the last lease, at most 15 s past it.
	while :; do
		local done_=1 t
		t=$(now)
		[ "$(wc -l <"$deaths")" -ge "$N" ] || done_=0
		[ "$(awk '$2 >= 2' "$marks" | wc -l)" -ge "$N" ] || done_=0
		gt "$t" "$max_l" 2 || done_=0
		[ "$done_" = 0 ] || break
		gt "$t" "$max_l" 15 && break
		sleep 0.2
	done

	# The verdict, job by job (times relative to the freeze).
	local report problems=0 a2 s2 d
	report=$(
		for i in "${!ids[@]}"; do
			id=${ids[$i]}
			d=$(awk -v p="${pid1[$i]}" '$1 == p { print $2 }' "$deaths")
			a2=$(awk -v id="$id" '$1 == id && $2 >= 2 { print $2, $3; exit }' "$marks")
			s2=$(sql "SELECT UNIX_TIMESTAMP(started_at) FROM kyu_jobs WHERE id = '$id' AND attempts >= 2")
			echo "$id ${pid1[$i]} ${lease_at[$i]} ${d:--} ${a2:-- -} ${s2:--} $(awk -v id="$id" '$1 == id' "$marks" | wc -l)"
		done | awk -v t0="$stop_at" -v now="$(now)" -v m="$margin" -v hb="$hb" '
			function rel(x) { return sprintf("%+.2f s", x - t0) }
			{
				id = $1; pid = $2; l = $3; d = $4; att2 = $5; m2 = $6; s2 = $7; nstarts = $8
				printf "  %s: attempt 1 pid %d, lease until %s, died %s, attempt 2 started %s (B claimed %s)\n",
					id, pid, rel(l), d == "-" ? "NOT YET" : rel(d), m2 == "-" ? "NOT YET" : rel(m2),
					s2 == "-" ? "NOT YET" : rel(s2)
				if (d == "-")
					printf "PROBLEM %s: attempt 1 (pid %d) still running at %s, %.1f s after its lease expired (%s): A did not fence it\n",
						id, pid, rel(now), now - l, rel(l)
				else if (d >= l)
					printf "PROBLEM %s: attempt 1 (pid %d) killed at %s, %.2f s AFTER its lease expired (%s)\n",
						id, pid, rel(d), d - l, rel(l)
				else if (d < l - m - hb - 2)
					printf "PROBLEM %s: attempt 1 (pid %d) killed at %s, %.1f s before its lease expired (%s): earlier than lease - fence_margin - heartbeat - 2 s\n",
						id, pid, rel(d), l - d, rel(l)
				if (m2 == "-" || s2 == "-")
					printf "PROBLEM %s: B did not start attempt 2 by %s (lease expired at %s)\n", id, rel(now), rel(l)
				else {
					if (att2 != 2)
						printf "PROBLEM %s: the second start was attempt %s, not 2\n", id, att2
					if (s2 < l || m2 < l)
						printf "PROBLEM %s: B claimed it at %s (started %s), before its lease expired at %s\n",
							id, rel(s2), rel(m2), rel(l)
					if (d == "-" || s2 <= d)
						printf "PROBLEM %s: attempt 2 claimed by B at %s (started %s) while attempt 1 (pid %d) was still running%s: the job ran twice at once\n",
							id, rel(s2), rel(m2), pid, d == "-" ? "" : " (it died at " rel(d) ")"
				}
				if (nstarts > 2)
					printf "PROBLEM %s: started %d times\n", id, nstarts
			}'
	)
	say "verdict, relay still frozen:"
	echo "$report" | grep -v '^PROBLEM' || true
	problems=$(echo "$report" | grep -c '^PROBLEM' || true)
	if [ "$problems" -gt 0 ]; then
		fail "lease=$lease fence_margin=$margin, relay frozen at $stop_at:
$(echo "$report" | sed -n 's/^PROBLEM /  /p')"
	fi
	kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud A (pid $KYUD_PID) died while the relay was frozen"
	pid_alive "$a_worker" || fail "kyud A's worker (pid $a_worker) died while the relay was frozen"
	assert_eq "$a_worker" "$(pgrep -P "$KYUD_PID" | tr '\n' ' ' | sed 's/ $//')" "kyud A's workers (not restarted)"
	for id in "${ids[@]}"; do
		grep -Eq "job $id: lease not renewed for [0-9.]+ s \(lease $lease s, fence_margin $margin s\); killing it" "$KYUD_LOG" ||
			fail "A's log does not say it fenced $id (job $id: lease not renewed for ... killing it)"
		grep -q "job $id attempt 2 started" "$B_LOG" || fail "B's log does not show $id attempt 2 started"
	done
	assert_log_lacks "job ${pfx}[0-9]+ attempt 2 started"

	# Thaw: A reconnects; its writes for the fenced attempts must change nothing.
	kill -CONT "$RELAY_PID"
	say "relay thawed"
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE '$pfx%' AND status = 'succeeded' AND attempts = 2" "$N" 30
	stop_kyud 60
	say "A stopped"
	kill "$WATCH_PID" 2>/dev/null || true
	wait "$WATCH_PID" 2>/dev/null || true
	WATCH_PID=
	assert_eq "$N" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE '$pfx%' AND status = 'succeeded' AND attempts = 2")" \
		"rows succeeded at attempt 2 after A stopped"
	stop_b
	say "B stopped"
	kill -TERM "$RELAY_PID"
	wait "$RELAY_PID" 2>/dev/null || true
	RELAY_PID=
	for id in "${ids[@]}"; do
		assert_eq "1 2" "$(awk -v id="$id" '$1 == id { print $2 }' "$marks" | tr '\n' ' ' | sed 's/ $//')" "attempts started of $id"
	done
	say "case lease=$lease fence_margin=$margin passed"
}

for c in ${RELAY_FREEZE_CASES:-10:3 60:10}; do
	run_case "${c%%:*}" "${c#*:}"
done
