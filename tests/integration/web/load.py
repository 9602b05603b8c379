#!/usr/bin/env python3
"""Bounded local load on kyu web, for the web/*.sh tests (python's own
sockets: CI has no curl). Every mode is bounded in count and in time.

  load.py viewers TARGET N REQUESTS PATHS [USER:PASS]
      N viewers at once, each making REQUESTS requests one after another
      (a new connection each, as many browsers do), cycling through PATHS
      (comma-separated). Prints "ok=.. refused=.. reset=.. timeout=..
      other=.." then, per path, "PATH n=.. p50=..ms p99=..ms max=..ms".
  load.py silent TARGET N SECONDS USER:PASS
      Opens N connections that send nothing (or half a request line), then
      asks once with the credentials; prints the answer's status (000: no
      answer) and the seconds it took, then how many of the N the server
      had closed by SECONDS.
  load.py storm TARGET N USER:PASS [ROTATE [SECONDS]]
      N wrong passwords (PASS with a number added), one connection each;
      ROTATE = yes: each from another source address of 127.0.0.0/8;
      SECONDS: spread over that long (else as fast as answered).
      Prints the count of each status: "401=.. 429=..".
  load.py ask TARGET USER:PASS
      One GET /api/overview; prints the status (000: no answer).

TARGET: http://127.0.0.1:PORT or a Unix socket's path (from '/').
"""
import base64
import socket
import sys
import threading
import time

TIMEOUT = 20.0


def connect(target, source=None):
    if target.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT)
        s.connect(target)
        return s
    host, port = target.split("//", 1)[1].rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    if source:
        s.bind((source, 0))
    s.connect((host, int(port)))
    return s


def request_bytes(path, cred):
    head = "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % path
    if cred:
        head += "Authorization: Basic %s\r\n" % base64.b64encode(cred.encode()).decode()
    return (head + "\r\n").encode()


def ask(target, path, cred, source=None):
    """(outcome, status): outcome ok, refused, reset, timeout or other."""
    try:
        s = connect(target, source)
    except socket.timeout:
        return "timeout", 0
    except (ConnectionRefusedError, BlockingIOError, FileNotFoundError):
        return "refused", 0
    except OSError:
        return "refused", 0
    try:
        s.sendall(request_bytes(path, cred))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        return "timeout", 0
    except ConnectionResetError:
        return "reset", 0
    except OSError:
        return "reset", 0
    finally:
        s.close()
    if not data.startswith(b"HTTP/"):
        return "reset", 0
    status = int(data.split(b" ", 2)[1])
    return ("ok" if status == 200 else "other"), status


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else 0.0


def viewers(target, n, count, paths, cred=None):
    paths = paths.split(",")
    counts = {"ok": 0, "refused": 0, "reset": 0, "timeout": 0, "other": 0}
    times = {p: [] for p in paths}
    lock = threading.Lock()
    start = threading.Barrier(n)

    def viewer(i):
        start.wait()
        for j in range(count):
            path = paths[(i + j) % len(paths)]
            t0 = time.monotonic()
            outcome, _ = ask(target, path, cred)
            took = time.monotonic() - t0
            with lock:
                counts[outcome] += 1
                if outcome == "ok":
                    times[path].append(took)

    threads = [threading.Thread(target=viewer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(" ".join("%s=%d" % kv for kv in counts.items()))
    for p in paths:
        v = times[p]
        print("%s n=%d p50=%.0fms p99=%.0fms max=%.0fms" %
              (p, len(v), pct(v, 50) * 1000, pct(v, 99) * 1000, max(v or [0]) * 1000))


def silent(target, n, seconds, cred):
    held = []
    for i in range(n):
        s = connect(target)
        # Half of them half a request line: slow, not silent.
        if i % 2:
            s.sendall(b"GET /api/overview HTTP/1.1\r\n")
        held.append(s)
    time.sleep(0.5)
    t0 = time.monotonic()
    _, status = ask(target, "/api/overview", cred)
    print("%03d %.1f" % (status, time.monotonic() - t0))
    # Which of the held ones the server closed (EOF or reset), by then.
    deadline = time.monotonic() + seconds
    closed = set()
    while len(closed) < n and time.monotonic() < deadline:
        for i, s in enumerate(held):
            if i in closed:
                continue
            s.settimeout(0.01)
            try:
                if s.recv(4096) == b"":
                    closed.add(i)
            except socket.timeout:
                pass
            except OSError:
                closed.add(i)
        time.sleep(0.2)
    for s in held:
        s.close()
    print(len(closed))


def storm(target, n, cred, rotate=False, seconds=0.0):
    user, password = cred.split(":", 1)
    counts = {}
    t0 = time.monotonic()
    for i in range(n):
        pause = t0 + seconds * i / n - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        source = "127.0.%d.%d" % (1 + i // 250, 1 + i % 250) if rotate else None
        _, status = ask(target, "/api/overview", "%s:%s%d" % (user, password, i), source)
        counts[status] = counts.get(status, 0) + 1
    print(" ".join("%03d=%d" % kv for kv in sorted(counts.items())))


def main():
    mode, target = sys.argv[1], sys.argv[2]
    if mode == "viewers":
        viewers(target, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
                sys.argv[6] if len(sys.argv) > 6 else None)
    elif mode == "silent":
        silent(target, int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    elif mode == "storm":
        storm(target, int(sys.argv[3]), sys.argv[4], len(sys.argv) > 5 and sys.argv[5] == "yes",
              float(sys.argv[6]) if len(sys.argv) > 6 else 0.0)
    elif mode == "ask":
        print("%03d" % ask(target, "/api/overview", sys.argv[3])[1])
    else:
        sys.exit("load.py: unknown mode " + mode)


if __name__ == "__main__":
    main()
