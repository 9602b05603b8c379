#!/usr/bin/env python3
"""Check a Prometheus text exposition (format 0.0.4) strictly, as written
by kyud's metrics process, and print its samples as NAME{LABELS} VALUE
lines (label values unescaped, sorted) for the test to grep.

    python3 tests/exposition.py < scrape.txt > samples.txt

Exits 1 naming the first line that breaks a rule: a sample before its
family's # TYPE, a family announced twice, a counter not named *_total, a
histogram whose buckets are not cumulative, lack +Inf, or disagree with
_count, a malformed label or value, a duplicate series.
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r"^(" + NAME + r")(\{.*\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def fail(lineno, line, why):
    sys.stderr.write("exposition line %d: %s: %r\n" % (lineno, why, line))
    sys.exit(1)


def parse_labels(text, lineno, line):
    labels = []
    body = text[1:-1]
    pos = 0
    while pos < len(body):
        m = LABEL.match(body, pos)
        if not m:
            fail(lineno, line, "malformed labels")
        value = re.sub(r"\\(.)", lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), m.group(2))
        labels.append((m.group(1), value))
        pos = m.end()
    return labels


def main():
    text = sys.stdin.read()
    if not text.endswith("\n"):
        fail(0, "", "the exposition does not end with a newline")
    types, helps, series = {}, set(), set()
    hist = {}  # (family, other labels) -> {"buckets": [(le, v)], "count": v}
    out = []
    current = None
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            if name in helps:
                fail(lineno, line, "second HELP for the family")
            helps.add(name)
            continue
        if line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[3] not in ("counter", "gauge", "histogram"):
                fail(lineno, line, "malformed TYPE")
            name = parts[2]
            if name in types:
                fail(lineno, line, "second TYPE for the family")
            if parts[3] == "counter" and not name.endswith("_total"):
                fail(lineno, line, "a counter's name must end in _total")
            types[name] = parts[3]
            current = name
            continue
        if line.startswith("#") or not line:
            fail(lineno, line, "unexpected comment or empty line")
        m = SAMPLE.match(line)
        if not m:
            fail(lineno, line, "not NAME{LABELS} VALUE")
        name, labels_text, value = m.group(1), m.group(2) or "", m.group(3)
        try:
            v = float(value)
        except ValueError:
            fail(lineno, line, "value is not a number")
        if math.isnan(v) or v < 0:
            fail(lineno, line, "negative or NaN value")
        labels = parse_labels(labels_text, lineno, line) if labels_text else []
        family = current
        if family is None:
            fail(lineno, line, "sample before any TYPE")
        kind = types[family]
        if kind == "histogram":
            if name not in (family + "_bucket", family + "_sum", family + "_count"):
                fail(lineno, line, "sample of another family inside a histogram")
        elif name != family:
            fail(lineno, line, "sample name differs from its family's")
        key = (name, tuple(sorted(labels)))
        if key in series:
            fail(lineno, line, "duplicate series")
        series.add(key)
        if kind == "histogram":
            other = tuple(sorted(kv for kv in labels if kv[0] != "le"))
            h = hist.setdefault((family, other), {"buckets": [], "count": None})
            if name.endswith("_bucket"):
                le = dict(labels).get("le")
                if le is None:
                    fail(lineno, line, "bucket without le")
                h["buckets"].append((float(le), v))
            elif name.endswith("_count"):
                h["count"] = v
        shown = ",".join('%s="%s"' % kv for kv in sorted(labels))
        out.append("%s{%s} %s" % (name, shown, value) if shown else "%s %s" % (name, value))
    for (family, _), h in hist.items():
        b = h["buckets"]
        if not b or b[-1][0] != math.inf:
            fail(0, family, "histogram without a +Inf bucket last")
        if any(b[i][0] >= b[i + 1][0] or b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            fail(0, family, "buckets not increasing and cumulative")
        if h["count"] != b[-1][1]:
            fail(0, family, "_count differs from the +Inf bucket")
    for name in types:
        if name not in helps:
            fail(0, name, "family without HELP")
    sys.stdout.write("\n".join(sorted(out)) + "\n")


main()
