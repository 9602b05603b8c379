#!/usr/bin/env python3
"""A stand-in for systemd's notification socket, for tests.

    notify_listen.py SOCKET_PATH OUT_FILE [MAX_SECONDS]

Binds an AF_UNIX datagram socket at SOCKET_PATH (what a test puts in
NOTIFY_SOCKET) and appends one line to OUT_FILE per assignment received:

    SEQ MONOTONIC_SECONDS SENDER_PID KEY=VALUE

SEQ numbers the datagrams (assignments sent together share it), the time is
when the datagram was read, SENDER_PID comes from the kernel (SO_PASSCRED),
so a test can tell which process sent it. Each line is flushed as written.
A newline inside a value cannot occur: sd_notify separates assignments by
newlines. Writes OUT_FILE empty before it binds; the socket exists once
SOCKET_PATH does.

It dies with its parent (PR_SET_PDEATHSIG) and exits after MAX_SECONDS
(default 600) whatever happens. Python 3 standard library only.
"""

import ctypes
import os
import signal
import socket
import struct
import sys
import time


def die_with_parent(parent):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    path, out = sys.argv[1], sys.argv[2]
    limit = float(sys.argv[3]) if len(sys.argv) == 4 else 600.0
    die_with_parent(os.getppid())
    end = time.monotonic() + limit
    ucred = struct.Struct("iII")  # pid, uid, gid
    with open(out, "w", encoding="utf-8") as f:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        s.bind(path)
        seq = 0
        while time.monotonic() < end:
            s.settimeout(max(0.1, min(1.0, end - time.monotonic())))
            try:
                data, anc, _flags, _addr = s.recvmsg(4096, socket.CMSG_SPACE(ucred.size))
            except socket.timeout:
                continue
            now = time.monotonic()
            pid = -1
            for level, kind, cdata in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = ucred.unpack(cdata[: ucred.size])[0]
            seq += 1
            for line in data.decode("utf-8", "replace").split("\n"):
                if line:
                    f.write("%d %.3f %d %s\n" % (seq, now, pid, line))
            f.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
