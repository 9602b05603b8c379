#!/usr/bin/env python3
"""The verdict of a chaos test (tests/integration/chaos/*.sh,
lease/chaos_orphan_jobs.sh, lease/stopped_worker.sh).

    check.py --marks FILE --table FILE [--deaths FILE] [--locks DIR]
             [--ids FILE | --expect N] [--log FILE]... [--exits FILE]
             [--worker-kills N] [--allow-failed] [--quiet]

Reads what the jobs wrote (tests/chaos/job.sh: "S|O|E ID ATTEMPT EPOCH PID
PPID" lines), what the liveness watcher wrote (tests/chaos/watch.py: "D ID
ATTEMPT PID LAST_ALIVE GONE" and "A ID ATTEMPT PID LAST_ALIVE"), a dump of
kyu_jobs (tab-separated with a header line, as `mariadb -B` prints it; needs
the columns id, status, attempts), and the daemons' logs, and prints:

  jobs      rows, and how many were expected (--ids: one id a line; --expect)
  starts    attempts started (S marks), ends (E marks), unfinished attempts
            (started and never ended: killed, fenced, interrupted)
  lost      expected jobs with no row; rows gone from the marks' ids; rows
            succeeded without a finished run of their attempt (no E mark
            with the row's attempt number)
  stuck     rows still waiting or running
  failed    rows failed or cancelled (a violation unless --allow-failed)
  overlap   jobs started again while an earlier attempt still ran: an O mark
            (the attempt's lock was held: the kernel says another attempt's
            processes were alive), or a start before an earlier attempt's
            end mark or before the last moment the watcher saw it alive
  running   attempts still alive now (their lock is held, or the watcher
            left them alive): nothing may run once every row is finished
  crashes   sanitizer reports in the logs; workers killed by a signal other
            than SIGKILL or exited with a non-zero status; more SIGKILLed
            workers in the logs than --worker-kills; lines of --exits
            ("NAME STATUS EXPECTED": a daemon's exit status and what the
            test expected) that differ

with the ids when a count is not zero, and exits 1 when lost, stuck,
overlap, running, crashes (or failed without --allow-failed) is not zero.
The last line is machine-readable: "CHAOS key=value ...".
Python 3 standard library only.
"""

import argparse
import fcntl
import os
import re
import sys

SHOW = 12  # ids shown per violation


def read_marks(path):
    starts, ends, overlaps = [], {}, []
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) < 5 or w[0] not in ("S", "E", "O"):
                continue
            rec = {"id": w[1], "attempt": int(w[2]), "t": float(w[3]), "pid": int(w[4]),
                   "ppid": int(w[5]) if len(w) > 5 else 0}
            if w[0] == "S":
                starts.append(rec)
            elif w[0] == "E":
                ends[(rec["id"], rec["attempt"], rec["pid"])] = rec
            else:
                overlaps.append(rec)
    return starts, ends, overlaps


def read_deaths(path):
    dead, alive = {}, {}
    if not path or not os.path.exists(path):
        return dead, alive
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[0] == "D":
                dead[(w[1], int(w[2]), int(w[3]))] = (float(w[4]), float(w[5]))
            elif len(w) >= 5 and w[0] == "A":
                alive[(w[1], int(w[2]), int(w[3]))] = float(w[4])
    return dead, alive


def read_table(path):
    rows = {}
    with open(path, errors="replace") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            if len(v) != len(header):
                continue
            r = dict(zip(header, v))
            rows[r["id"]] = r
    return rows


SANITIZER = re.compile(r"ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:|Sanitizer:DEADLYSIGNAL")
WORKER_SIG = re.compile(r"kyud\[sup\]: worker \d+ \(pid \d+\) killed by signal (\d+)")
WORKER_EXIT = re.compile(r"kyud\[sup\]: worker \d+ \(pid \d+\) exited with status ([1-9]\d*)")
SUMMARY = re.compile(r"exiting: (\d+) job\(s\) started, (\d+) result\(s\) recorded, (\d+) given back "
                     r"unstarted, (\d+) deadlock\(s\) retried, (\d+) late write\(s\) rejected")


def scan_logs(paths):
    s = {"sanitizer": [], "bad_deaths": [], "sigkills": 0, "deadlock_lines": 0,
         "gave_up": 0, "dropped": 0, "deadlocks_retried": 0, "late_rejected": 0, "given_back": 0,
         "exit_summaries": 0}
    for p in paths:
        try:
            f = open(p, errors="replace")
        except OSError:
            continue
        with f:
            for line in f:
                if SANITIZER.search(line):
                    s["sanitizer"].append(f"{os.path.basename(p)}: {line.strip()}")
                m = WORKER_SIG.search(line)
                if m:
                    if m.group(1) == "9":
                        s["sigkills"] += 1
                    else:
                        s["bad_deaths"].append(f"{os.path.basename(p)}: {line.strip()}")
                m = WORKER_EXIT.search(line)
                if m:
                    s["bad_deaths"].append(f"{os.path.basename(p)}: {line.strip()}")
                m = SUMMARY.search(line)
                if m:
                    s["exit_summaries"] += 1
                    s["given_back"] += int(m.group(3))
                    s["deadlocks_retried"] += int(m.group(4))
                    s["late_rejected"] += int(m.group(5))
                    continue
                low = line.lower()
                if ("deadlock" in low or "lock wait" in low) and "last " not in low:
                    s["deadlock_lines"] += 1
                if "gave up after repeated deadlocks" in line:
                    s["gave_up"] += 1
                if "dropping" in line and "result" in line:
                    s["dropped"] += 1
    return s


def held_locks(lockdir):
    held = []
    if not lockdir or not os.path.isdir(lockdir):
        return held
    for name in sorted(os.listdir(lockdir)):
        try:
            fd = os.open(os.path.join(lockdir, name), os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held.append(name)
        finally:
            os.close(fd)
    return held


def show(ids):
    ids = sorted(set(ids))
    more = f" (+{len(ids) - SHOW} more)" if len(ids) > SHOW else ""
    return " ".join(ids[:SHOW]) + more


def main():
    ap = argparse.ArgumentParser(description="chaos test verdict")
    ap.add_argument("--marks", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--deaths")
    ap.add_argument("--locks")
    ap.add_argument("--ids")
    ap.add_argument("--expect", type=int)
    ap.add_argument("--log", action="append", default=[])
    ap.add_argument("--exits")
    ap.add_argument("--worker-kills", type=int)
    ap.add_argument("--allow-failed", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="only the summary lines")
    a = ap.parse_args()

    starts, ends, omarks = read_marks(a.marks)
    dead, alive = read_deaths(a.deaths)
    rows = read_table(a.table)
    expected = None
    if a.ids:
        with open(a.ids) as f:
            expected = {x.strip() for x in f if x.strip()}
    problems = []

    # Per job: its attempts in the order they started.
    by_job = {}
    for s in starts:
        by_job.setdefault(s["id"], []).append(s)
    for lst in by_job.values():
        lst.sort(key=lambda r: r["t"])

    unfinished = [s for s in starts if (s["id"], s["attempt"], s["pid"]) not in ends]
    rerun = [j for j, lst in by_job.items() if len(lst) > 1]

    # lost
    lost = []
    if expected is not None:
        lost += [i for i in expected if i not in rows]
    lost += [i for i in by_job if i not in rows]
    ended_attempts = {}
    for (i, att, _pid) in ends:
        ended_attempts.setdefault(i, set()).add(att)
    phantom = []
    for i, r in rows.items():
        if r["status"] == "succeeded":
            try:
                att = int(r["attempts"])
            except ValueError:
                att = -1
            if att not in ended_attempts.get(i, ()):
                phantom.append(i)
    lost += phantom
    stuck = [i for i, r in rows.items() if r["status"] in ("waiting", "running")]
    failed = [i for i, r in rows.items() if r["status"] in ("failed", "cancelled")]

    # overlap
    overlap = {}

    def add_overlap(i, why):
        overlap.setdefault(i, why)

    for o in omarks:
        add_overlap(o["id"], f"attempt {o['attempt']} (pid {o['pid']}) found the job's lock held at {o['t']:.3f}")
    for i, lst in by_job.items():
        for x in range(len(lst)):
            A = lst[x]
            key = (i, A["attempt"], A["pid"])
            alive_until = None
            if key in ends:
                alive_until = ends[key]["t"]
            if key in dead:
                alive_until = max(alive_until or 0, dead[key][0])
            if key in alive:
                alive_until = float("inf")
            if alive_until is None:
                continue
            for B in lst[x + 1:]:
                if B["t"] < alive_until:
                    add_overlap(i, f"attempt {B['attempt']} (pid {B['pid']}) started at {B['t']:.3f}, "
                                   f"attempt {A['attempt']} (pid {A['pid']}, started {A['t']:.3f}) "
                                   f"alive until {alive_until:.3f}")

    # still running
    running = held_locks(a.locks) + [k[0] for k in alive]

    # crashes
    logs = scan_logs(a.log)
    crashes = logs["sanitizer"] + logs["bad_deaths"]
    if a.worker_kills is not None and logs["sigkills"] > a.worker_kills:
        crashes.append(f"{logs['sigkills']} workers killed by SIGKILL in the logs, the test sent {a.worker_kills}")
    if a.exits and os.path.exists(a.exits):
        with open(a.exits) as f:
            for line in f:
                w = line.split()
                if len(w) >= 3 and w[1] != w[2]:
                    crashes.append(f"daemon {w[0]} exited with status {w[1]}, expected {w[2]}")

    n_jobs = len(rows)
    exp = len(expected) if expected is not None else a.expect
    if exp is not None and expected is None and n_jobs < exp:
        lost += [f"<{exp - n_jobs} rows missing>"]
    print(f"check: jobs {n_jobs}" + (f" (expected {exp})" if exp is not None else "")
          + f", starts {len(starts)}, ends {len(ends)}, unfinished attempts {len(unfinished)}, "
          f"jobs started more than once {len(rerun)}, "
          f"succeeded {sum(1 for r in rows.values() if r['status'] == 'succeeded')}, failed {len(failed)}")
    print(f"check: lost {len(set(lost))}, stuck {len(stuck)}, overlapping {len(overlap)}, "
          f"still running {len(set(running))}, crashes {len(crashes)}")
    print(f"check: logs: {logs['sigkills']} worker(s) killed by SIGKILL; "
          f"{logs['exit_summaries']} worker exit summaries: {logs['deadlocks_retried']} deadlock(s) retried, "
          f"{logs['late_rejected']} late write(s) rejected, {logs['given_back']} given back unstarted; "
          f"{logs['deadlock_lines']} other line(s) naming a deadlock or lock wait, "
          f"{logs['gave_up']} gave up after deadlocks, {logs['dropped']} result(s) dropped")
    if lost:
        problems.append(f"LOST ({len(set(lost))}): {show(lost)}"
                        + (f"; succeeded without a finished run of that attempt: {show(phantom)}" if phantom else ""))
    if stuck:
        problems.append(f"STUCK ({len(stuck)}): " + show(f"{i}:{rows[i]['status']}/{rows[i]['attempts']}" for i in stuck))
    if failed and not a.allow_failed:
        problems.append(f"FAILED ({len(failed)}): " + show(f"{i}:{rows[i]['status']}/{rows[i]['attempts']}" for i in failed))
    if overlap:
        problems.append(f"OVERLAP ({len(overlap)}): {show(overlap)}")
        for i in sorted(overlap)[:SHOW]:
            problems.append(f"  {i}: {overlap[i]}")
    if running:
        problems.append(f"STILL RUNNING ({len(set(running))}): {show(running)}")
    if crashes:
        problems.append(f"CRASHES ({len(crashes)}):")
        problems += [f"  {c}" for c in crashes[:SHOW]]
    if not a.quiet and unfinished:
        print("check: unfinished attempts (killed, fenced or interrupted): "
              + show(f"{s['id']}#{s['attempt']}" for s in unfinished))
    for p in problems:
        print(f"check: {p}")
    violations = len(set(lost)) + len(stuck) + len(overlap) + len(set(running)) + len(crashes) \
        + (0 if a.allow_failed else len(failed))
    print(f"CHAOS jobs={n_jobs} starts={len(starts)} ends={len(ends)} unfinished={len(unfinished)} "
          f"rerun={len(rerun)} lost={len(set(lost))} stuck={len(stuck)} failed={len(failed)} "
          f"overlap={len(overlap)} running={len(set(running))} crashes={len(crashes)} "
          f"sigkilled_workers={logs['sigkills']} deadlocks_retried={logs['deadlocks_retried']} "
          f"late_rejected={logs['late_rejected']}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
