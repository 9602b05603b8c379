#!/usr/bin/env python3
"""Liveness watcher for the chaos tests: when did each job attempt die?

    watch.py MARKS DEATHS [MAX_SECONDS]

Follows MARKS (the "S ID ATTEMPT EPOCH PID PPID" lines tests/chaos/job.sh
writes) and polls every started PID every 10 ms. When one is gone (no
/proc/PID, a zombie, or another process with a different start time), it
appends to DEATHS:

    D ID ATTEMPT PID LAST_ALIVE GONE

LAST_ALIVE is the last time it was seen running, GONE the first time it was
seen gone (host epoch seconds): the attempt ended between the two. A PID
already gone when its S line is read gets LAST_ALIVE = its start time.

On SIGTERM, or MAX_SECONDS (default 1800) after it started, or when its
parent dies, it writes "A ID ATTEMPT PID LAST_ALIVE" for each attempt still
alive and exits. Python 3 standard library only.
"""

import os
import signal
import sys
import time

stop = False


def on_term(*_):
    global stop
    stop = True


def proc_start(pid):
    """(state, starttime) of pid, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rfind(b")") + 2:].split()
    return rest[0], rest[19]  # state (field 3), starttime (field 22)


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    marks, deaths = sys.argv[1], sys.argv[2]
    deadline = time.time() + (float(sys.argv[3]) if len(sys.argv) == 4 else 1800.0)
    parent = os.getppid()
    signal.signal(signal.SIGTERM, on_term)
    out = open(deaths, "a", buffering=1)
    tracked = {}  # pid -> [id, attempt, starttime, last_alive]
    pos = 0
    partial = b""
    while not stop and time.time() < deadline and os.getppid() == parent:
        try:
            with open(marks, "rb") as f:
                f.seek(pos)
                chunk = f.read()
        except FileNotFoundError:
            chunk = b""
        pos += len(chunk)
        data = partial + chunk
        lines = data.split(b"\n")
        partial = lines.pop()
        now = time.time()
        for line in lines:
            w = line.decode(errors="replace").split()
            if len(w) < 5 or w[0] != "S":
                continue
            pid = int(w[4])
            st = proc_start(pid)
            if st is None or st[0] == b"Z":
                out.write(f"D {w[1]} {w[2]} {pid} {w[3]} {now:.6f}\n")
            else:
                tracked[pid] = [w[1], w[2], st[1], now]
        for pid, t in list(tracked.items()):
            st = proc_start(pid)
            now = time.time()
            if st is None or st[0] == b"Z" or st[1] != t[2]:
                out.write(f"D {t[0]} {t[1]} {pid} {t[3]:.6f} {now:.6f}\n")
                del tracked[pid]
            else:
                t[3] = now
        time.sleep(0.01)
    for pid, t in tracked.items():
        out.write(f"A {t[0]} {t[1]} {pid} {t[3]:.6f}\n")
    out.close()


if __name__ == "__main__":
    main()
