#!/usr/bin/env python3
"""TCP relay for tests: a stand-in for a network path that can stop answering.

    relay.py LISTEN_PORT_FILE TARGET_HOST TARGET_PORT [MAX_SECONDS]

Listens on 127.0.0.1, on a port the kernel picks, writes that port (one line)
to LISTEN_PORT_FILE (atomically: a reader sees the whole number or no file),
and forwards bytes both ways between each accepted connection and a new
connection to TARGET_HOST:TARGET_PORT. When either side closes, both do.

The test freezes the path with `kill -STOP PID` and thaws it with
`kill -CONT PID`: a stopped relay keeps every connection open and forwards
nothing, so the peers see a database that stops answering, not one that
refuses (no RST, no FIN, connects queue in the backlog unanswered).

It never outlives its test: it dies with its parent (PR_SET_PDEATHSIG, which
works even while it is stopped, with a getppid poll as a fallback) and exits
after MAX_SECONDS (default 600) of wall time whatever happens.
Python 3 standard library only.
"""

import asyncio
import ctypes
import os
import signal
import socket
import sys
import time

BUF = 65536


def die_with_parent(parent):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the getppid poll below still covers it
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(0)


async def pump(reader, writer, other):
    try:
        while True:
            data = await reader.read(BUF)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        for w in (writer, other):
            try:
                w.close()
            except (ConnectionError, OSError, RuntimeError):
                pass


async def main():
    if len(sys.argv) not in (4, 5):
        print("usage: relay.py LISTEN_PORT_FILE TARGET_HOST TARGET_PORT [MAX_SECONDS]", file=sys.stderr)
        sys.exit(2)
    port_file, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    max_seconds = float(sys.argv[4]) if len(sys.argv) == 5 else 600.0
    parent = os.getppid()
    die_with_parent(parent)
    # Wall-clock deadline: time spent stopped counts too.
    deadline = time.time() + max_seconds

    async def handle(c_reader, c_writer):
        peer = c_writer.get_extra_info("peername")
        print(f"relay: accepted {peer[0]}:{peer[1]}", file=sys.stderr, flush=True)
        try:
            s_reader, s_writer = await asyncio.open_connection(host, port)
        except OSError as e:
            print(f"relay: cannot connect to {host}:{port}: {e}", file=sys.stderr)
            c_writer.close()
            return
        for w in (c_writer, s_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(pump(c_reader, s_writer, c_writer),
                             pump(s_reader, c_writer, s_writer))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    chosen = server.sockets[0].getsockname()[1]
    tmp = f"{port_file}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{chosen}\n")
    os.rename(tmp, port_file)

    while time.time() < deadline and os.getppid() == parent:
        await asyncio.sleep(0.5)
    os._exit(0)  # connections and tasks die with the process


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    asyncio.run(main())
