"""An application of kyu's SQL contract through PyMySQL (Debian python3-pymysql),
as tests/integration/input/clients.sh runs it: each check prints "ok NAME" or
"not ok NAME: WHAT", and the last line is "checks N".

PyMySQL keeps an error's number (e.args[0]) and message and drops its
SQLSTATE: the application branches on the number alone, which is what the
error numbers of schema version 7 are for.

Environment: KYU_TEST_SOCKET, KYU_TEST_DB (user kyu, password kyu), KYU_TEST_OUT.
"""
import json
import os
import time

import pymysql

n = 0


def check(name, ok, what=""):
    global n
    n += 1
    print(f"ok {name}" if ok else f"not ok {name}: {what}", flush=True)


KINDS = {31001: "queue-full", 31002: "after", 31003: "traceparent",
         31004: "argv", 31005: "env", 31006: "status"}


def kind(e):
    """What the application makes of an error: the number, and for a
    duplicate the key's name in the message."""
    errno, msg = e.args[0], e.args[1]
    if errno in KINDS:
        return KINDS[errno]
    if errno == 1265 and "column 'status'" in msg:
        return "status"
    if errno == 1062:
        if "'kyu_jobs_unique_key'" in msg:
            return "unique-key-held"
        if "'kyu_jobs_id'" in msg:
            return "id-taken"
    return f"other {errno}"


# autocommit: PEP 249's default (off) would keep every INSERT from kyud.
conn = pymysql.connect(unix_socket=os.environ["KYU_TEST_SOCKET"], user="kyu", password="kyu",
                       database=os.environ["KYU_TEST_DB"], charset="utf8mb4", autocommit=True)
cur = conn.cursor()


def refusal(sql, *params):
    try:
        cur.execute(sql, params)
    except pymysql.MySQLError as e:
        return kind(e), e.args[1]
    return None


# A dict passed through str() is not JSON; one through json.dumps is, but
# with a number for a value.
env = {"N": 5}
r = refusal("INSERT INTO kyu_jobs (id, command, env) VALUES (%s, %s, %s)", "py-str", "true", str(env))
check("env-str", r is not None and r[0] == "env" and "(not valid JSON)" in r[1], repr(r))
r = refusal("INSERT INTO kyu_jobs (id, command, env) VALUES (%s, %s, %s)", "py-num", "true", json.dumps(env))
check("env-number", r is not None and r[0] == "env" and "value of N is not a string" in r[1], repr(r))
r = refusal("INSERT INTO kyu_jobs (id, argv) VALUES (%s, %s)", "py-argv", json.dumps(["/bin/echo", 1]))
check("argv-number", r is not None and r[0] == "argv" and "argv[1] is not a string" in r[1], repr(r))

cur.execute("SET SESSION sql_mode = ''")
r = refusal("INSERT INTO kyu_jobs (id, command, status) VALUES (%s, %s, %s)", "py-us", "true", "canceled")
check("status-lax", r is not None and r[0] == "status" and "status of job py-us" in r[1], repr(r))
cur.execute("SET SESSION sql_mode = DEFAULT")
r = refusal("INSERT INTO kyu_jobs (id, command, status) VALUES (%s, %s, %s)", "py-us", "true", "canceled")
check("status-strict", r is not None and r[0] == "status", repr(r))

r = refusal("INSERT INTO kyu_jobs (queue, command) VALUES (%s, %s)", "py-full", "true")
check("queue-full", r is not None and r[0] == "queue-full" and r[1].startswith("kyu: queue py-full is full"), repr(r))
r = refusal("INSERT INTO kyu_jobs (command, after) VALUES (%s, %s)", "true", json.dumps(["py-nope"]))
check("after", r is not None and r[0] == "after", repr(r))
r = refusal("INSERT INTO kyu_jobs (command, traceparent) VALUES (%s, %s)", "true", "00-nope")
check("traceparent", r is not None and r[0] == "traceparent", repr(r))

# RETURNING gives the id; lastrowid is seq. A good job with env and argv
# made by json.dumps, which clients.sh waits for.
cur.execute("INSERT INTO kyu_jobs (argv, env) VALUES (%s, %s) RETURNING id, seq",
            (json.dumps(["/bin/sh", "-c", 'test "$A" = "ü 1"']), json.dumps({"A": "ü 1"})))
job_id, seq = cur.fetchone()
cur.execute("SELECT seq FROM kyu_jobs WHERE id = %s", (job_id,))
check("returning", len(job_id) == 36 and cur.fetchone() == (seq,), f"{job_id} {seq}")
# lastrowid is seq, not the id.
cur.execute("INSERT INTO kyu_jobs (id, command, run_at) VALUES ('py-later', 'true', NOW(6) + INTERVAL 1 DAY)")
cur.execute("SELECT id FROM kyu_jobs WHERE seq = %s", (cur.lastrowid,))
check("lastrowid-is-seq", cur.fetchone() == ("py-later",), "")
with open(os.path.join(os.environ["KYU_TEST_OUT"], "py-id"), "w") as f:
    f.write(job_id)
r = refusal("INSERT INTO kyu_jobs (id, command) VALUES (%s, %s)", job_id, "true")
check("dup-id", r is not None and r[0] == "id-taken", repr(r))
# A unique key held by a job due tomorrow (which cannot end meanwhile).
cur.execute("INSERT INTO kyu_jobs (id, command, unique_key, run_at)"
            " VALUES ('py-hold', 'true', 'py-key', NOW(6) + INTERVAL 1 DAY)")
r = refusal("INSERT INTO kyu_jobs (command, unique_key) VALUES (%s, %s)", "true", "py-key")
check("dup-unique-key", r is not None and r[0] == "unique-key-held", repr(r))

# None for every field not given, as an ORM sends it: the defaults.
cur.execute("INSERT INTO kyu_jobs (id, queue, command, priority, run_at, max_attempts, status)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id, queue, priority, status, run_at <= NOW(6)",
            (None, None, "exit 0", None, None, None, None))
row = cur.fetchone()
check("nulls", row[1:] == ("default", 0, "waiting", 1) and len(row[0]) == 36, repr(row))
with open(os.path.join(os.environ["KYU_TEST_OUT"], "py-null-id"), "w") as f:
    f.write(row[0])

# A session of its own zone, as a framework or pool may set (schema version
# 8): the default run_at is now in the server's zone, FROM_UNIXTIME takes
# the epoch, and the documented CONVERT_TZ reads the instant back.
tz = pymysql.connect(unix_socket=os.environ["KYU_TEST_SOCKET"], user="kyu", password="kyu",
                     database=os.environ["KYU_TEST_DB"], charset="utf8mb4", autocommit=True,
                     init_command="SET time_zone = '+09:00'")
tc = tz.cursor()
t0 = time.time()
tc.execute("INSERT INTO kyu_jobs (command) VALUES ('true') RETURNING id")
tz_id = tc.fetchone()[0]
cur.execute("SELECT UNIX_TIMESTAMP(run_at) FROM kyu_jobs WHERE id = %s", (tz_id,))
at = float(cur.fetchone()[0])
check("tz-default", abs(at - t0) < 60, f"run_at is {at - t0:.0f} s from now")
with open(os.path.join(os.environ["KYU_TEST_OUT"], "py-tz-id"), "w") as f:
    f.write(tz_id)
tc.execute("INSERT INTO kyu_jobs (id, command, run_at) VALUES ('py-tz-epoch', 'true', FROM_UNIXTIME(%s))", (t0 + 2,))
tc.execute("SELECT UNIX_TIMESTAMP(CONVERT_TZ(run_at, @@global.time_zone, @@session.time_zone))"
           " FROM kyu_jobs WHERE id = 'py-tz-epoch'")
back = float(tc.fetchone()[0])
check("tz-epoch", abs(back - (t0 + 2)) < 0.001, f"{back} for {t0 + 2}")

# Waiting: PEP 249's default, autocommit off. The INSERT is not committed
# (no daemon sees it) and the CALL is refused with 31011; after the commit
# the wait works, autocommit still off, and then with it on.
ac = pymysql.connect(unix_socket=os.environ["KYU_TEST_SOCKET"], user="kyu", password="kyu",
                     database=os.environ["KYU_TEST_DB"], charset="utf8mb4")
a = ac.cursor()
w_id = "py-wait"
a.execute("INSERT INTO kyu_jobs (id, command) VALUES (%s, 'sleep 0.5')", (w_id,))
try:
    a.execute("CALL kyu_wait(%s, 30)", (w_id,))
    r = None
except pymysql.MySQLError as e:
    r = e.args
check("wait-autocommit-off", r is not None and r[0] == 31011 and "open transaction" in r[1], repr(r))
ac.commit()
a.execute("CALL kyu_wait(%s, 60)", (w_id,))
row = a.fetchone()
check("wait-after-commit", row is not None and row[:3] == (w_id, "succeeded", 0), repr(row))
ac.autocommit(True)
a.execute("INSERT INTO kyu_jobs (id, command) VALUES ('py-wait-on', 'true')")
a.execute("CALL kyu_wait('py-wait-on', 60)")
row = a.fetchone()
check("wait-autocommit-on", row is not None and row[:3] == ("py-wait-on", "succeeded", 0), repr(row))
try:
    a.execute("CALL kyu_wait(%s, 1)", ("py-no-such-job",))
    r = None
except pymysql.MySQLError as e:
    r = e.args
check("wait-unknown-id", r is not None and r[0] == 31012, repr(r))

print(f"checks {n}")
