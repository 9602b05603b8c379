#!/usr/bin/env bash
# Workflows in the dashboard's page, in a real browser (headless Chromium,
# as web/browser.sh), without kyud: a job's page links its upstream and
# downstream jobs, each with its status, its batch, the batch it runs
# after, the job that cancelled it and its graph, and says why a blocked
# one waits, naming the jobs; a deleted upstream shows as its seq; the
# graph page draws the jobs and edges around a job, each job a link to
# its page, and links back; the batch page counts its jobs by status, lists
# them and the jobs after it; the overview counts blocked jobs and links
# the oldest; the Jobs list has a blocked tab. A cancel clicked on a job's
# page cancels its dependents at once. Ids and labels that look like
# markup are shown as text. Every new page, at 1280 px and at a phone's
# 390 px, shows no "null", "undefined" or "NaN", logs no error and has no
# broken layout. Screenshots of a job's page, the graph and the batch land
# in $T_DIR, or in $KYU_WEB_SCREENSHOT_DIR when set.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"
command -v chromium >/dev/null && command -v chromedriver >/dev/null ||
	{ echo "SKIP: chromium and chromium-driver are not installed"; exit 77; }

hostile='<img src=x onerror="window.pwned = 1">'
hlabel='<b>night</b><script>window.pwned = 2</script>'
sql "INSERT INTO kyu_daemons (id, host, pid, queues, version, started, last_seen, live_until)
     VALUES ('h:1:a', 'h', 1, '', 'test', NOW(6), NOW(6), NOW(6) + INTERVAL 1 DAY)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a', 'flow', 'true');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('b', 'flow', 'true', '[\"a\"]');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('c', 'flow', 'true', '[\"b\"]');
     INSERT INTO kyu_jobs (id, queue, command, after, after_policy) VALUES ('d', 'flow', 'true', '[\"a\", \"c\"]', 'finished')"
sql "INSERT INTO kyu_jobs (id, queue, command, batch, status, attempts, finished_at) VALUES
     ('n1', 'nightly', 'true', 'night', 'waiting', 0, NULL),
     ('n2', 'nightly', 'true', 'night', 'succeeded', 1, NOW(6)),
     ('n3', 'nightly', 'exit 3', 'night', 'failed', 1, NOW(6));
     INSERT INTO kyu_jobs (id, queue, command, after_batch, after_policy) VALUES ('report', 'flow', 'true', 'night', 'finished')"
sql "INSERT INTO kyu_jobs (id, queue, command, batch) VALUES ('$hostile', 'flow', 'true', '$hlabel');
     INSERT INTO kyu_jobs (id, queue, command, after_batch) VALUES ('after-hostile', 'flow', 'true', '$hlabel')"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('gone', 'lost', 'true');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('orphan', 'lost', 'true', '[\"gone\"]')"
sql "CALL kyu_settle(1000)"
seq_gone=$(sql "SELECT seq FROM kyu_jobs WHERE id = 'gone'")
sql "DELETE FROM kyu_jobs WHERE id = 'gone'"

port=$(free_tcp_port)
start_web "$port"
shots=${KYU_WEB_SCREENSHOT_DIR:-$T_DIR}

python3 - "$WEB_URL" "$T_DIR" "$KYU_SRC/tests" "$shots" "$seq_gone" "$hostile" "$hlabel" >"$T_DIR/browser.out" 2>&1 <<'PY' || fail "browser: $(cat "$T_DIR/browser.out")"
import json, os, sys, urllib.parse
url, tdir, lib, shots, seq_gone, hostile, hlabel = sys.argv[1:8]
sys.path.insert(0, lib)
from webdriver import Browser

enc = lambda s: urllib.parse.quote(s, safe="")
b = Browser(tdir + "/chrome-profile", tdir + "/chromedriver.log", 1280, 800)
problems = []
def expect(what, got, want):
    if got != want:
        problems.append("%s: %s, expected %s" % (what, json.dumps(got), json.dumps(want)))
# The items of a list (ul#ID): each one's link and status badge, or text.
items = """return [...document.querySelectorAll(arguments[0] + ' > li')].map((li) => {
    const a = li.querySelector('a'), s = li.querySelector('.badge');
    return [a ? a.getAttribute('href') : li.textContent, s ? s.textContent : null]; });"""
try:
    # A job in the middle of a chain: both ways, with statuses; why it waits.
    b.show(url, "#/job/b")
    expect("b's upstream", b.js(items, "#upstream"), [["#/job/a", "waiting"]])
    expect("b's downstream", b.js(items, "#downstream"), [["#/job/c", "blocked"]])
    expect("b's page", b.js("""return {status: document.getElementById('job-status').textContent,
        outcome: document.getElementById('job-outcome').textContent,
        why: document.getElementById('job-why').textContent,
        why_link: document.querySelector('#job-why a').getAttribute('href'),
        after: [...document.querySelectorAll('#job-after a')].map((a) => a.getAttribute('href')),
        graph: document.getElementById('job-graph').getAttribute('href'),
        cancel: !!document.querySelector('button.act-cancel')}"""),
        {"status": "blocked", "outcome": "blocked · waiting for 1 upstream job to end",
         "why": "blocked: waits for a waiting", "why_link": "#/job/a", "after": ["#/job/a"],
         "graph": "#/graph/b", "cancel": True})
    b.screenshot(os.path.join(shots, "web-job-flow.png"))
    # A job after a batch, one in it, one whose upstream was deleted.
    b.show(url, "#/job/report")
    expect("report's upstream", b.js(items, "#upstream"),
           [["#/job/n1", "waiting"], ["#/job/n2", "succeeded"], ["#/job/n3", "failed"]])
    expect("report's batch link", b.js("return document.getElementById('job-after-batch').getAttribute('href')"),
           "#/batch/night")
    b.show(url, "#/job/n1")
    expect("n1's batch link", b.js("return document.getElementById('job-batch').getAttribute('href')"), "#/batch/night")
    expect("n1's downstream", b.js(items, "#downstream"), [["#/job/report", "blocked"]])
    b.show(url, "#/job/orphan")
    expect("a deleted upstream", b.js(items, "#upstream"), [["#%s (deleted)" % seq_gone, None]])

    # The graph of b: every job a link, the edges drawn, and back.
    b.show(url, "#/graph/b")
    expect("b's graph", b.js("""const s = document.querySelector('svg.graph');
        return {nodes: [...s.querySelectorAll('a')].map((a) => a.getAttribute('href')).sort(),
                edges: s.querySelectorAll('path.edge').length,
                root: s.querySelector('g.root title').textContent,
                rows: [...document.querySelectorAll('table.graph tbody tr')].map((r) => r.dataset.id),
                back: document.getElementById('graph-job').getAttribute('href')}"""),
        {"nodes": ["#/job/a", "#/job/b", "#/job/c", "#/job/d"], "edges": 3,
         "root": "b · blocked · queue flow", "rows": ["a", "b", "c", "d"], "back": "#/job/b"})
    # Columns: a left of b, c right of it, d right of c (it waits for c).
    expect("the graph's columns", b.js("""const x = (id) => {
          const a = document.querySelector('svg.graph a[data-id="' + id + '"] g').getAttribute('transform');
          return Number(/translate\\(([\\d.]+)/.exec(a)[1]); };
        return [x('a') < x('b'), x('b') < x('c'), x('c') < x('d')];"""), [True, True, True])
    b.screenshot(os.path.join(shots, "web-graph.png"))
    # The batch: counts by status, its jobs, the job after it, links on.
    b.show(url, "#/batch/night")
    expect("the batch", b.js("""const c = (s) => document.querySelector('table.batch-counts .c-' + s).textContent;
        return {counts: ['blocked', 'waiting', 'running', 'succeeded', 'failed', 'cancelled', 'all'].map(c),
                outcome: document.getElementById('batch-outcome').textContent,
                jobs: [...document.querySelectorAll('table.jobs tbody tr')].map((r) => r.dataset.id),
                graph: document.querySelector("table.jobs tr[data-id='n1'] a[href^='#/graph/']").getAttribute('href')}"""),
        {"counts": ["0", "1", "0", "1", "1", "0", "3"], "outcome": "1 of 3 jobs not ended",
         "jobs": ["n1", "n2", "n3"], "graph": "#/graph/n1"})
    expect("the jobs after the batch", b.js(items, "#batch-waiters"), [["#/job/report", "blocked"]])
    b.screenshot(os.path.join(shots, "web-batch.png"))
    # The overview and the list of blocked jobs.
    b.show(url, "#/overview")
    expect("the overview's blocked", b.js("""const r = document.querySelector("tr[data-queue='flow']");
        return [r.querySelector('.c-blocked').textContent, r.querySelector('.c-blocked a').getAttribute('href'),
                r.querySelector(".why[data-reason='blocked'] a").getAttribute('href')]"""),
        ["5", "#/jobs/blocked?queue=flow", "#/job/b"])
    b.show(url, "#/jobs/blocked")
    expect("the blocked list", b.js("return [...document.querySelectorAll('table.jobs tbody tr')].map((r) => r.dataset.id).sort()"),
           sorted(["b", "c", "d", "report", "after-hostile", "orphan"]))
    expect("the blocked tab", b.js("return document.querySelector('.tab.on').textContent"), "blocked")

    # Markup in an id and a label: text, on every page that shows them.
    for h in ("#/job/" + enc(hostile), "#/batch/" + enc(hlabel), "#/graph/after-hostile", "#/job/after-hostile"):
        b.show(url, h)
        got = b.js("""return {pwned: window.pwned === undefined ? null : window.pwned,
            imgs: document.querySelectorAll('img').length, scripts: document.scripts.length,
            text: document.getElementById('main').textContent}""")
        expect(h + ": markup run", [got["pwned"], got["imgs"], got["scripts"]], [None, 0, 1])
        if hostile not in got["text"] and hlabel not in got["text"]:
            problems.append("%s: neither the id nor the label shown as text" % h)

    # Every new page, at a desktop's width and at a phone's.
    pages = ["#/job/b", "#/job/a", "#/job/report", "#/job/orphan", "#/job/n1", "#/graph/b", "#/graph/a?depth=1",
             "#/graph/report", "#/batch/night", "#/batch/nothing", "#/jobs/blocked", "#/overview"]
    for width, height, mobile in ((1280, 720, False), (390, 844, True)):
        b.viewport(width, height, mobile)
        for h in pages:
            b.show(url, h)
            problems += ["%s at %d px: %s" % (h, width, p) for p in b.page_problems() + b.layout_problems()]
    b.viewport(1280, 800)

    # A cancel clicked on a's page: its dependents are cancelled at once
    # (policy succeeded: b, then c; d, policy finished, is due once a and c
# ended, however).
    b.show(url, "#/job/a")
    b.js("window.confirm = (m) => { window.asked = m; return true; }")
    b.click("button.act-cancel")
    b.wait("return document.getElementById('flash').textContent === 'job a: cancelled' && "
           "document.getElementById('job-status').textContent === 'cancelled'", "the cancel")
    expect("the confirmation", b.js("return window.asked"),
           "Cancel job a? The jobs that wait for it to succeed are cancelled too.")
    expect("a's downstream after the cancel", b.js(items, "#downstream"), [["#/job/b", "cancelled"], ["#/job/d", "waiting"]])
    b.show(url, "#/job/c")
    expect("c after the cancel", b.js("""return [document.getElementById('job-status').textContent,
        document.getElementById('job-cancelled-by').getAttribute('href'), document.getElementById('job-error').textContent]"""),
        ["cancelled", "#/job/b", "kyu: upstream job b ended cancelled"])
finally:
    b.close()
if problems:
    raise SystemExit("\n".join(problems))
print("ok")
PY
assert_eq "a cancelled
b cancelled
c cancelled
d waiting" "$(sql "SELECT id, status FROM kyu_jobs WHERE id IN ('a', 'b', 'c', 'd') ORDER BY id" | tr '\t' ' ')" \
	"the chain after the cancel in the page"
for f in web-job-flow.png web-graph.png web-batch.png; do
	assert_eq "89504e47" "$(od -An -tx1 -N4 "$shots/$f" | tr -d ' \n')" "the screenshot $f is a PNG"
done
stop_web
echo ok
