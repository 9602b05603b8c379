#!/usr/bin/env python3
"""One HTTP request to kyu web, for the web_*.sh tests (python's own
client: CI has no curl).

  webq.py [-X METHOD] [-H 'Name: value']... [-u USER:PASS] [--csrf]
          [--header NAME]... [--insecure] [--unix PATH] URL [EXPR]

Prints one line: the status (000 when nothing answers), then the value of
each --header NAME ('-' when absent), then EXPR evaluated over the reply
(d: the parsed JSON body, body: the text, q(NAME): the overview's entry
of queue NAME, ids(): the ids of d['rows']) -- or, without EXPR, nothing
more. --csrf first reads /api/session and sends its token as X-Kyu-CSRF.
--unix: connect to the Unix socket PATH (the URL gives the path and Host).
"""
import argparse
import base64
import http.client
import socket
import json
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request


UNIX = None


class UnixConnection(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(20)
        self.sock.connect(UNIX)


def unix_request(url, method, headers):
    u = urllib.parse.urlsplit(url)
    try:
        c = UnixConnection(u.netloc or "localhost", timeout=20)
        c.request(method, u.path + ("?" + u.query if u.query else ""),
                  body=b"" if method == "POST" else None, headers=headers)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    except OSError:
        return 0, {}, b""


def request(url, method, headers, ctx):
    if UNIX:
        return unix_request(url, method, headers)
    data = b"" if method == "POST" else None
    req = urllib.request.Request(url, method=method, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20, context=ctx) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except OSError:
        return 0, {}, b""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-X", dest="method", default="GET")
    p.add_argument("-H", dest="headers", action="append", default=[])
    p.add_argument("-u", dest="auth")
    p.add_argument("--csrf", action="store_true")
    p.add_argument("--header", dest="show", action="append", default=[])
    p.add_argument("--insecure", action="store_true")
    p.add_argument("--unix")
    p.add_argument("url")
    p.add_argument("expr", nargs="?")
    a = p.parse_args()
    global UNIX
    UNIX = a.unix
    ctx = None
    if a.insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    headers = {}
    for h in a.headers:
        k, v = h.split(":", 1)
        headers[k.strip()] = v.strip()
    if a.auth:
        headers["Authorization"] = "Basic " + base64.b64encode(a.auth.encode()).decode()
    if a.csrf:
        u = urllib.parse.urlsplit(a.url)
        st, _, b = request(f"{u.scheme}://{u.netloc}/api/session", "GET", dict(headers), ctx)
        if st != 200:
            print(f"session-{st:03d}")
            return
        headers["X-Kyu-CSRF"] = json.loads(b)["csrf"]
    status, rh, body = request(a.url, a.method, headers, ctx)
    low = {k.lower(): v for k, v in rh.items()}
    out = ["%03d" % status] + [low.get(n.lower(), "-") for n in a.show]
    if a.expr:
        text = body.decode("utf-8", "replace")
        try:
            d = json.loads(text)
        except ValueError:
            d = None

        def q(name):
            return next((x for x in d["queues"] if x["queue"] == name), None)

        def ids():
            return " ".join(r["id"] for r in d["rows"])

        v = eval(a.expr, {"d": d, "body": text, "q": q, "ids": ids, "json": json})
        out.append(v if isinstance(v, str) else json.dumps(v))
    print(" ".join(out))


main()
