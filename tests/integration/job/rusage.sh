#!/usr/bin/env bash
# What each attempt cost, from wait4's rusage, in cpu_user, cpu_sys (seconds)
# and max_rss (bytes):
# - a job that spins 0.6 s of user CPU records at least 0.3 s (a lower bound
#   only: CPU time is what the kernel counted, however loaded the machine);
# - a shell line whose perl fills 64 MiB records max_rss >= 50 MiB: the
#   processes the job's own process waited for are counted;
# - both paths of the result: a plain success (the bulk UPDATE) and one with
#   output (its own UPDATE);
# - a job that cannot start has NULL in all three, and so has a running
#   attempt (its claim clears the last attempt's); a cancelled one records
#   what it cost;
# - kyu show prints them.
. "$KYU_SRC/tests/lib.sh"

cat >"$T_DIR/spin.pl" <<'EOF'
1 until (times)[0] >= 0.6;
EOF
cat >"$T_DIR/big.pl" <<'EOF'
my $x = "x" x (64 << 20);
print length($x), "\n";
EOF

# cost ID: "cpu_user cpu_sys max_rss" of job ID, NULL as "NULL".
cost() {
	sql "SELECT CONCAT_WS(' ', IFNULL(cpu_user, 'NULL'), IFNULL(cpu_sys, 'NULL'), IFNULL(max_rss, 'NULL'))
	     FROM kyu_jobs WHERE id = '$1'"
}

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, argv) VALUES
     ('spin', '[\"perl\", \"$T_DIR/spin.pl\"]'),
     ('nostart', '[\"/nonexistent/kyu-rusage-prog\"]')"
# Shell syntax (&&): sh runs perl as its child and waits for it.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('big', 'perl $T_DIR/big.pl && true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE finished_at IS NOT NULL" 3 60
echo "cpu_user cpu_sys max_rss: spin $(cost spin); big $(cost big)"

assert_eq "succeeded	" "$(sql "SELECT status, IFNULL(CAST(output AS CHAR), '') FROM kyu_jobs WHERE id = 'spin'")" \
	"spin: a plain success"
assert_eq "1	1	1" "$(sql "SELECT cpu_user >= 0.3, cpu_sys >= 0, max_rss > 0 FROM kyu_jobs WHERE id = 'spin'")" \
	"spin: cpu_user >= 0.3 s, cpu_sys and max_rss set (was $(cost spin))"

assert_eq "succeeded	67108864" "$(sql "SELECT status, TRIM(TRAILING '\n' FROM CAST(output AS CHAR)) FROM kyu_jobs WHERE id = 'big'")" \
	"big: succeeded with its output"
assert_eq "1	1	1" "$(sql "SELECT max_rss >= 50 * 1048576, cpu_user >= 0, cpu_sys >= 0 FROM kyu_jobs WHERE id = 'big'")" \
	"big: max_rss >= 50 MiB (was $(cost big))"

assert_eq "failed NULL NULL NULL" "$(sql "SELECT status FROM kyu_jobs WHERE id = 'nostart'") $(cost nostart)" \
	"nostart: failed unrun, no cost"

if [ -n "${KYU:-}" ]; then
	shown=$("$KYU" -c "$KYUD_INI" show spin) || fail "kyu show spin failed"
	grep -Eq '^ *cpu_user: [0-9]+(\.[0-9]+)?(e-?[0-9]+)?$' <<<"$shown" || fail "kyu show: no cpu_user line: $shown"
	grep -Eq '^ *cpu_sys: [0-9]' <<<"$shown" || fail "kyu show: no cpu_sys line: $shown"
	grep -Eq '^ *max_rss: [1-9][0-9]*$' <<<"$shown" || fail "kyu show: no max_rss line: $shown"
	shown=$("$KYU" -c "$KYUD_INI" show nostart) || fail "kyu show nostart failed"
	grep -Eq '^ *max_rss: NULL$' <<<"$shown" || fail "kyu show nostart: max_rss not NULL: $shown"
fi

# Run big again as a long job: while it runs, the last attempt's cost is
# gone; cancelled, it records this one's.
sql "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), command = 'sleep 60 && true' WHERE id = 'big'"
wait_for "SELECT CONCAT(status, ' ', attempts, ' ', pid IS NOT NULL) FROM kyu_jobs WHERE id = 'big'" "running 2 1" 30
assert_eq "NULL NULL NULL" "$(cost big)" "big, running again: no cost yet"
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'big'"
wait_for "SELECT finished_at IS NOT NULL FROM kyu_jobs WHERE id = 'big'" 1 30
assert_eq "1" "$(sql "SELECT cpu_user IS NOT NULL AND cpu_sys IS NOT NULL AND max_rss > 0 AND max_rss < 50 * 1048576
                      FROM kyu_jobs WHERE id = 'big'")" "big, cancelled: its own cost (was $(cost big))"
stop_kyud
assert_log_lacks 'wait4'
