#!/usr/bin/env bash
# A result larger than the server's max_allowed_packet: kyud reads the limit
# at connect and cuts the output to fit (with a marker) instead of sending a
# statement the server refuses by dropping the connection. The job is
# recorded once, the connection is never lost, and later jobs run.
. "$KYU_SRC/tests/lib.sh"

private_db_start
# New connections see the new limit; kyud connects after this.
root_sql -e "SET GLOBAL max_allowed_packet = 1048576"
start_kyud kyud.workers=1 job.output_limit=4194304 job.max_attempts=1
# 100 MB of output, random so that escaping cannot shrink it.
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('big', 'echo \$KYU_ATTEMPT >> $T_DIR/starts; head -c 100000000 /dev/urandom')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'big'" succeeded 60
row=$(sql "SELECT exit_code, LENGTH(output) <= 1048576, LENGTH(output) > 100000,
                  output LIKE '%[kyu: output cut to fit the server''s max_allowed_packet]%'
           FROM kyu_jobs WHERE id = 'big'")
assert_eq "0	1	1	1" "$row" "exit_code, output within the packet, output kept, cut marker"
assert_eq 1 "$(wc -l <"$T_DIR/starts")" "starts of the big job"

sql "INSERT INTO kyu_jobs (id, command) VALUES ('after', 'echo after')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'after'" succeeded 20
assert_log_lacks 'database connection lost'
assert_log_lacks 'max_allowed_packet \('
stop_kyud
