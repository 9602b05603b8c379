# shellcheck shell=bash
# Ports and HTTP: a free UDP or TCP port on 127.0.0.1 (the kernel's choice,
# so that parallel tests never collide) and a plain HTTP request (no curl
# in CI).

# free_udp_port: print a UDP port on 127.0.0.1 that nothing is bound to
# right now (the kernel's choice, so parallel tests do not collide).
free_udp_port() {
	python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# free_tcp_port: print a TCP port on 127.0.0.1 that nothing listens on
# right now (the kernel's choice).
free_tcp_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# http_get URL [METHOD]: print "STATUS" on the first line, then the body;
# status 000 when nothing answers. No curl in CI: python's client.
http_get() {
	python3 - "$1" "${2:-GET}" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=b"x" if sys.argv[2] == "POST" else None)
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        body, status = r.read(), r.status
except urllib.error.HTTPError as e:
    body, status = e.read(), e.code
except OSError:
    body, status = b"", 0
print("%03d" % status)
sys.stdout.write(body.decode("utf-8", "replace"))
PY
}
