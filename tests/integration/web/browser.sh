#!/usr/bin/env bash
# kyu web in a real browser: headless Chromium (Debian's chromium and
# chromium-driver, driven over WebDriver by tests/webdriver.py) loads the
# overview while kyud runs jobs; the rendered table shows the counts the
# table holds; a cancel clicked on the running page cancels that job (the
# row in kyu_jobs, and kyud ends its process); a job's hostile output is
# shown as text (no element made of it, no script run), and so are an
# attempt's error and output tail; a running job's
# live output shows on the running page and on its own, which follows it;
# every page, with jobs of every outcome, shows no "null", "undefined" or
# "NaN" and logs no error to the console, a 64-bit owner exactly, and
# output boxes that open at their end, at 1280 px and at a phone's 390 px
# without a broken layout (a page wider than the screen, an element across
# its edge); a queue's reset button removes its settings after a
# confirmation, and cancel asks first too; a filter typed into the Jobs form
# lands in the URL and filters; the overview says why a queue is not moving
# and draws its throughput; a failed job's page shows its outcome and cause
# first, then its output's end, links to its queue and schedule, and its
# attempts in order; a schedule's expression reads in words, and it is
# disabled (no next run shown then) and enabled from its page; at 390 px
# table rows are cards that keep a queue's counts, why and buttons, a
# failed job's error and a cause's actions on screen; the failed page
# groups failures by cause, "show them" lists a cause's jobs and "retry
# these" retries them; durations under a second in ms, the date filters
# and the "updated" clock in the database's zone. The screenshots of the
# overview, a failed job and a filtered list, and of the overview and the
# failed list and the no-kyud banner at 390 px, land in $T_DIR, or in
# $KYU_WEB_SCREENSHOT_DIR when set (KYU_WEB_SCREENSHOT_DIR=docs: how
# docs/web-*.png are made); the early overview's at $KYU_WEB_SCREENSHOT.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"
command -v chromium >/dev/null && command -v chromedriver >/dev/null ||
	{ echo "SKIP: chromium and chromium-driver are not installed"; exit 77; }

start_kyud kyud.workers=2 job.backoff_base=0
# Known work: 4 running (they sleep), 3 due in a paused queue, 2 failed,
# 6 succeeded, and an hour of history in kyu_minutes (300 more, for the
# sparklines).
sql "INSERT INTO kyu_queues (name, paused, max_running) VALUES ('reports', 1, 5)"
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('mail-', seq), 'mail', 'sleep 300' FROM seq_1_to_4"
sql "INSERT INTO kyu_jobs (id, queue, command, run_at) SELECT CONCAT('report-', seq), 'reports', 'true',
     NOW(6) - INTERVAL 90 SECOND FROM seq_1_to_3"
sql "INSERT INTO kyu_jobs (id, queue, command, max_attempts) SELECT CONCAT('bad-', seq), 'billing',
     'echo cannot reach the payment service; exit 3', 1 FROM seq_1_to_2"
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('thumb-', seq), 'thumbnails', 'true' FROM seq_1_to_6"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'mail' AND status = 'running'" 4 60
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'failed'" 2 60
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 6 60
# What a job may print: written as kyud would have recorded it.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at, output, progress, progress_note,
     result, unique_key, traceparent) VALUES ('hostile', 'thumbnails', 'cat page.html', 'succeeded', 1, NOW(6),
     '<script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">', 100,
     '<img src=x onerror=\"window.pwned = 3\">', '{\"html\": \"<script>window.pwned = 4</script>\", \"n\": [1]}',
     '<b id=\"ukey\">u</b>', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')"
sql "INSERT INTO kyu_attempts (job_seq, job_id, attempt, queue, host, pid, started_at, finished_at, outcome, exit_code,
     error, output_tail) SELECT seq, id, 1, queue, 'h', 1, NOW(6), NOW(6), 'succeeded', 0,
     '<b id=\"bold\">err</b>', '<script>window.pwned = 3</script>' FROM kyu_jobs WHERE id = 'hostile'"
# A running job's progress, as its status channel would have it written
# (kyud writes none for these jobs, which say nothing).
sql "UPDATE kyu_jobs SET progress = 30, progress_note = 'a <b>third</b>' WHERE id = 'mail-4'"
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried)
     SELECT UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND
            - INTERVAL 1 + FLOOR(58 * POW(seq * 7919 % 1000 / 1000, 1.6)) MINUTE, 'thumbnails', 'history', seq, 1, 0, 0
     FROM seq_1_to_300"

port=$(free_tcp_port)
start_web "$port"
shot=${KYU_WEB_SCREENSHOT:-$T_DIR/overview.png}

python3 - "$WEB_URL" "$T_DIR" "$shot" "$KYU_SRC/tests" >"$T_DIR/browser.out" 2>&1 <<'PY' || fail "browser: $(cat "$T_DIR/browser.out")"
import json, sys
url, tdir, shot, lib = sys.argv[1:5]
sys.path.insert(0, lib)
from webdriver import Browser

b = Browser(tdir + "/chrome-profile", tdir + "/chromedriver.log", 1200, 620)
try:
    b.get(url + "/")
    b.wait("return document.body.dataset.loaded === 'overview'", "the overview")
    cells = b.js("""
        const out = {};
        for (const tr of document.querySelectorAll('tr[data-queue]')) {
          const c = {};
          for (const k of ['waiting', 'due', 'running', 'failed', 'succeeded'])
            c[k] = tr.querySelector('.c-' + k).textContent;
          c.paused = tr.classList.contains('paused');
          out[tr.dataset.queue] = c;
        }
        const t = document.getElementById('totals');
        out.all = {running: t.querySelector('.c-running').textContent,
                   waiting: t.querySelector('.c-waiting').textContent};
        return out;""")
    want = {
        "billing": {"waiting": "0", "due": "0", "running": "0", "failed": "2", "succeeded": "0", "paused": False},
        "mail": {"waiting": "0", "due": "0", "running": "4", "failed": "0", "succeeded": "0", "paused": False},
        "reports": {"waiting": "3", "due": "3", "running": "0", "failed": "0", "succeeded": "0", "paused": True},
        "thumbnails": {"waiting": "0", "due": "0", "running": "0", "failed": "0", "succeeded": "306", "paused": False},
        "all": {"running": "4", "waiting": "3"},
    }
    if cells != want:
        raise SystemExit("overview shows %s, expected %s" % (json.dumps(cells), json.dumps(want)))
    b.screenshot(shot)

    # The running page: a real click on one job's cancel button.
    b.get(url + "/#/running")
    b.wait("return document.querySelectorAll('table.running tbody tr').length === 4", "4 running rows")
    got = b.js("""const p = document.querySelector("tr[data-id='mail-4'] span.progress");
        return p && {value: p.querySelector('progress').value, text: p.textContent,
                     bold: p.querySelectorAll('b').length};""")
    if got != {"value": 30, "text": " 30% a <b>third</b>", "bold": 0}:
        raise SystemExit("the running page's progress: %s" % json.dumps(got))
    victim = b.js("return document.querySelector('table.running tbody tr').dataset.id")
    # Cancel asks first, like delete: refused, nothing happens.
    b.js("window.confirm = (m) => { window.asked = m; return false; }")
    b.click("tr[data-id='%s'] button.act-cancel" % victim)
    if b.js("return window.asked") != "Cancel job %s? Its process is ended." % victim:
        raise SystemExit("cancel asked %r" % b.js("return window.asked"))
    b.js("window.confirm = (m) => true")
    b.click("tr[data-id='%s'] button.act-cancel" % victim)
    b.wait("return document.querySelectorAll('table.running tbody tr').length === 3 && "
           "!document.querySelector(\"tr[data-id='%s']\")" % victim, "the cancelled row to leave the page")
    flash = b.js("return document.getElementById('flash').textContent")
    if flash != "job %s: cancelled" % victim:
        raise SystemExit("flash message after cancel: %r" % flash)

    # Hostile output, shown as text.
    b.get(url + "/#/job/hostile")
    b.wait("return document.body.dataset.loaded === 'job'", "the job page")
    got = b.js("""const o = document.getElementById('output');
        const a = document.querySelector("table.attempts tr[data-attempt='1']");
        return {text: o.textContent, children: o.children.length,
                pwned: window.pwned === undefined ? null : window.pwned,
                scripts: document.scripts.length,
                attempt: a.querySelector('.attempt-error').textContent + a.querySelector('pre.tail').textContent,
                bold: !!document.getElementById('bold')};""")
    want = {"text": '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">',
            "children": 0, "pwned": None, "scripts": 1,
            "attempt": '<b id="bold">err</b><script>window.pwned = 3</script>', "bold": False}
    if got != want:
        raise SystemExit("hostile output: %s, expected %s" % (json.dumps(got), json.dumps(want)))
    # Its progress note and result, as text too; the result indented.
    got = b.js("""const p = document.getElementById('job-progress'), r = document.getElementById('job-result');
        return {progress: p.dataset.progress, note: p.querySelector('.note').textContent,
                result: r.textContent, children: r.children.length + p.querySelectorAll('img').length,
                pwned: window.pwned === undefined ? null : window.pwned};""")
    want = {"progress": "100", "note": ' <img src=x onerror="window.pwned = 3">',
            "result": '{\n  "html": "<script>window.pwned = 4</script>",\n  "n": [\n    1\n  ]\n}',
            "children": 0, "pwned": None}
    if got != want:
        raise SystemExit("hostile progress and result: %s, expected %s" % (json.dumps(got), json.dumps(want)))
    # Its unique key (as text) and trace id among the facts.
    got = b.js("""const u = document.getElementById('job-unique-key'), t = document.getElementById('job-trace');
        return {key: u.textContent, bold: !!document.getElementById('ukey'), trace: t.textContent, title: t.title};""")
    want = {"key": '<b id="ukey">u</b>', "bold": False, "trace": "0af7651916cd43dd8448eb211c80319c",
            "title": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
    if got != want:
        raise SystemExit("unique key and trace: %s, expected %s" % (json.dumps(got), json.dumps(want)))
    print(victim)
finally:
    b.close()
PY
victim=$(tail -n 1 "$T_DIR/browser.out")
case $victim in mail-[1-4]) ;; *) fail "browser: no cancelled job named: $(cat "$T_DIR/browser.out")" ;; esac
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = '$victim'")" "the job cancelled in the page"
assert_eq 3 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'mail' AND status = 'running'")" "the other mail jobs"
[ -s "$shot" ] || fail "no screenshot at $shot"
assert_eq "89504e47" "$(od -An -tx1 -N4 "$shot" | tr -d ' \n')" "the screenshot is a PNG"
# kyud ends the cancelled job's process at its next heartbeat.
wait_for_log "job $victim cancelled" 30

# Every page, with data of every outcome: no visible "null", "undefined"
# or "NaN", no error in the console; a 64-bit owner shown exactly; the
# output boxes open at their end (the last lines, usually the cause).
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at)
     VALUES ('retry-1', 'later', 'exit 1', 'waiting', 1, 'exited with status 1', NOW(6) + INTERVAL 1 HOUR)"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, max_attempts, \`signal\`, error, started_at, finished_at, output)
     VALUES ('killed-1', 'later', 'sleep 1000', 'failed', 1, 1, 9, 'killed by signal 9', NOW(6) - INTERVAL 1 MINUTE, NOW(6), 'started\n')"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, owner, started_at, finished_at, output)
     SELECT 'long-1', 'later', 'seq 200', 'succeeded', 1, 5169991159545666686, NOW(6) - INTERVAL 2 SECOND, NOW(6),
            GROUP_CONCAT(CONCAT('line ', seq) ORDER BY seq SEPARATOR '\n') FROM seq_1_to_200"
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('nightly', '0 3 * * *', 'true')"
# A schedule's job that failed with a cause in its output and error, and a
# queue held back for each reason the overview gives.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, max_attempts, exit_code, error, started_at,
     finished_at, duration, cpu_user, cpu_sys, max_rss, host, pid, output)
     SELECT 'cron:nightly:2026-11-26T03:00:00Z', 'backups', 'pg_dump -Fc app > /srv/backup/app.dump', 'failed', 3, 3, 1,
            'pg_dump: error: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed: FATAL:  password authentication failed for user "backup"',
            NOW(6) - INTERVAL 200 SECOND, NOW(6) - INTERVAL 187 SECOND, 12.6, 0.4, 0.1, 50331648, 'db-2', 31337,
            CONCAT(GROUP_CONCAT(CONCAT('pg_dump: reading table ', seq) ORDER BY seq SEPARATOR '\n'),
                   '\npg_dump: error: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed: FATAL:  password authentication failed for user "backup"\n')
     FROM seq_1_to_60"
sql "INSERT INTO kyu_attempts (job_seq, job_id, attempt, queue, host, pid, started_at, finished_at, outcome, exit_code,
     \`signal\`, error, cpu_user, cpu_sys, max_rss, output_tail)
     SELECT j.seq, j.id, a.seq, j.queue, 'db-2', 31335 + a.seq, NOW(6) - INTERVAL (1800 - 300 * a.seq) SECOND,
            NOW(6) - INTERVAL (1790 - 300 * a.seq) SECOND, ELT(a.seq, 'retried', 'timeout', 'failed'),
            IF(a.seq = 2, NULL, 1), IF(a.seq = 2, 15, NULL), IF(a.seq = 2, 'timed out after 600 s', j.error),
            0.4, 0.1, 50331648, IF(a.seq = 2, NULL, 'pg_dump: error: connection to server failed\n')
     FROM kyu_jobs AS j, seq_1_to_3 AS a WHERE j.id = 'cron:nightly:2026-11-26T03:00:00Z'"
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('exports', 1)"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, owner, lease_until, host, pid, started_at, concurrency_key)
     VALUES ('export-run', 'exports', 'sleep 600', 'running', 1, 99, NOW(6) + INTERVAL 1 HOUR, 'elsewhere', 1, NOW(6), 'acct-1')"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES ('export-2', 'exports', 'true', 'acct-1'),
     ('invoice-1', 'invoices', 'true', 'acct-1')"
sql "INSERT INTO kyu_locks (name, slot) VALUES ('deploy', 0)"
# Failures of one cause (numbers aside), for the failed page's causes;
# their command succeeds once retried. A job that took 4.6 ms.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, max_attempts, exit_code, error, finished_at)
     SELECT CONCAT('feed-', seq), 'feeds', 'true', 'failed', 1, 1, 4,
            CONCAT('exit code 4: feed ', seq * 17, ' unreachable after ', seq, ' s'), NOW(6) FROM seq_1_to_3"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, exit_code, started_at, finished_at, duration)
     VALUES ('quick-1', 'later', 'true', 'succeeded', 1, 0, NOW(6), NOW(6), 0.0046)"
# The screenshots of docs/ (KYU_WEB_SCREENSHOT_DIR=docs): the overview, a
# failed job, a filtered list.
shots=${KYU_WEB_SCREENSHOT_DIR:-$T_DIR}
python3 - "$WEB_URL" "$T_DIR" "$KYU_SRC/tests" "$victim" "$shots" >"$T_DIR/browser-pages.out" 2>&1 <<'PY' || fail "browser, every page: $(cat "$T_DIR/browser-pages.out")"
import os, sys
url, tdir, lib, victim, shots = sys.argv[1:6]
sys.path.insert(0, lib)
from webdriver import Browser
b = Browser(tdir + "/chrome-profile", tdir + "/chromedriver.log", 1280, 720)
cron = "#/job/cron%3Anightly%3A2026-11-26T03%3A00%3A00Z"
filtered = "#/jobs/failed?queue=billing&q=payment"
pages = ["#/overview", "#/running", "#/retrying", "#/jobs/failed", "#/jobs/waiting", "#/jobs/running",
         "#/jobs/succeeded", "#/jobs/cancelled", filtered, "#/jobs/succeeded?since=2000-01-01%2000:00",
         "#/retrying?queue=later", "#/schedules", "#/schedules?from=nightly", "#/locks", "#/daemons",
         "#/job/bad-1", "#/job/killed-1", "#/job/long-1", "#/job/hostile", "#/job/report-1", "#/job/retry-1",
         "#/job/" + victim, cron, "#/job/mail-", "#/job/quick-1", "#/cause/" ]
problems = []
try:
    # Every page at a desktop's width and at a phone's: what it shows, its
    # console, and its layout.
    for width, height, mobile in ((1280, 720, False), (390, 844, True)):
        b.viewport(width, height, mobile)
        for h in pages:
            if h == "#/job/mail-":
                b.show(url, "#/running")
                h = "#/job/" + b.js("return document.querySelector('table.running tbody tr').dataset.id")
            if h == "#/cause/":
                b.show(url, "#/jobs/failed")
                h = "#/cause/" + b.js("return document.querySelector('tr[data-cause]').dataset.cause")
            b.show(url, h)
            problems += ["%s at %d px: %s" % (h, width, p) for p in b.page_problems() + b.layout_problems()]
            # The overview's table fits a desktop's width: no column
            # (the sparkline, the settings, the actions) behind a scroll.
            if h == "#/overview" and not mobile:
                w = b.js("const s = document.querySelector('.scroll'); return [s.scrollWidth, s.clientWidth]")
                if w[0] > w[1] + 4:  # rounding of fractional widths
                    problems.append("#/overview at %d px: its table is %d px wide in %d" % (width, w[0], w[1]))
    # The live daemon can be drained from its row (not clicked here:
    # daemon.drain and web.api drain).
    b.viewport(1280, 800)
    b.show(url, "#/daemons")
    got = b.js("return [...document.querySelectorAll('table.daemons tr')].map((tr) => tr.innerText)")
    if not any("drain" in r for r in got[1:]):
        problems.append("#/daemons: no drain button for the live daemon: %r" % got)
    for h, name in (("#/overview", "web-overview.png"), (cron, "web-job-failed.png"),
                    ("#/jobs/failed?since=2026-01-01%2000:00", "web-jobs-filtered.png")):
        b.show(url, h)
        b.screenshot(os.path.join(shots, name))
    # A phone's width: rows are cards that keep what matters on screen.
    b.viewport(390, 844, True)
    def visible(css):
        """Whether the element is drawn inside the screen's width."""
        return b.js("""const e = document.querySelector(arguments[0]); if (!e) return false;
            const w = document.documentElement.clientWidth, r = e.getBoundingClientRect();
            return r.width > 0 && r.left >= -1 && r.right <= w + 1;""", css)
    def card_text(css):
        """A row's text as drawn: each shown cell's label (its ::before)
        and text."""
        return b.js("""return [...document.querySelector(arguments[0]).children].filter((td) =>
            getComputedStyle(td).display !== 'none').map((td) => {
              const c = getComputedStyle(td, '::before');
              const label = c.display !== 'none' && c.content !== 'none' && td.dataset.label ? td.dataset.label + ': ' : '';
              return label + td.innerText; }).join(' ').replace(/\\s+/g, ' ')""", css)
    b.show(url, "#/overview")
    for q, fields in (("billing", ["billing", "failed 1 h: 2", "pause"]),
                      ("exports", ["exports", "running: 1", "max_running", "key-blocked", "pause", "reset"]),
                      ("reports", ["reports", "waiting: 3", "paused: no job of it starts", "resume"])):
        row = "tr[data-queue='%s']" % q
        text = card_text(row)
        missing = [f for f in fields if f not in text]
        if missing or "paused: paused" in text:
            problems.append("overview at 390 px, %s: %r lacks %r" % (q, text, missing))
        for cell in (".c-queue", ".c-failed", ".c-why", "button.act"):
            if not visible(row + " " + cell):
                problems.append("overview at 390 px, %s: %s is off screen" % (q, cell))
    b.screenshot(os.path.join(shots, "web-overview-390.png"))
    b.show(url, "#/jobs/failed")
    got = b.js("""const e = document.querySelector("tr[data-id='bad-1'] td.err"), r = e.getBoundingClientRect();
        return {width: r.width >= 200, text: e.innerText}""")
    if got != {"width": True, "text": "exit code 3: cannot reach the payment service"}:
        problems.append("the failed list's error at 390 px: %r" % got)
    row = "tr[data-cause]:has(a[href*='feeds'])"
    text = card_text(row)
    for f in ("exit code 4: feed <n> unreachable after <n> s", "3 failed", "feeds", "retry these 3", "show them"):
        if f not in text:
            problems.append("the feeds cause at 390 px: %r lacks %r" % (text, f))
    for cell in ("td.c-cause", "td.c-count", "button.act-retry", "a.show-cause"):
        if not visible(row + " " + cell):
            problems.append("the feeds cause at 390 px: %s is off screen" % cell)
    b.screenshot(os.path.join(shots, "web-failed-390.png"))
    b.viewport(1280, 800)
    # Failures by cause: two causes for the billing and feeds failures,
    # with their counts; "show them" lists a cause's jobs; "retry these"
    # retries them.
    b.show(url, "#/jobs/failed")
    got = b.js("""return [...document.querySelectorAll('tr[data-cause]')].map((r) =>
        r.querySelector('.c-cause').textContent + ' | ' + r.querySelector('.c-count').textContent)""")
    for want in ("exit code 3: cannot reach the payment service | 2 failed",
                 "exit code 4: feed <n> unreachable after <n> s | 3 failed"):
        if want not in got:
            problems.append("the causes: %r lack %r" % (got, want))
    b.click(row + " a.show-cause")
    b.wait("return document.body.dataset.loaded === 'cause'", "the cause's page")
    got = b.js("return [...document.querySelectorAll('table.cause-jobs tbody tr')].map((r) => r.dataset.id).sort()")
    if got != ["feed-1", "feed-2", "feed-3"]:
        problems.append("show them: %r" % got)
    b.js("window.confirm = (m) => { window.asked = m; return true; }")
    b.click("button.act-retry")
    b.wait("return document.getElementById('flash').textContent === 'retrying 3 jobs' && "
           "!!document.getElementById('cause-gone')", "the retry of the cause, and the cause gone")
    if not (b.js("return window.asked") or "").startswith("Retry all 3 failed jobs with the cause"):
        problems.append("retry these asked %r" % b.js("return window.asked"))
    # The date filters and the "updated" clock: the database's zone, 24-hour.
    b.show(url, "#/jobs/succeeded")
    got = b.js("""const i = document.querySelector('#filter input[name=since]');
        return {type: i.type, label: i.parentElement.textContent,
                updated: /^updated \\d\\d:\\d\\d:\\d\\d \\S+$/.test(document.getElementById('updated').textContent)}""")
    if got != {"type": "text", "label": "changed since (%s) " % b.js("return dbClock.zone"), "updated": True}:
        problems.append("the date filter and clock: %r" % got)
    # Under a second in ms.
    b.show(url, "#/job/quick-1")
    if "took 4.6 ms" not in b.js("return document.body.innerText"):
        problems.append("quick-1's page lacks 'took 4.6 ms'")
    # The overview says why a queue is not moving.
    b.show(url, "#/overview")
    got = b.js("""const r = (q) => [...document.querySelectorAll("tr[data-queue='" + q + "'] .why strong")].map((e) => e.textContent);
        return {exports: r('exports'), invoices: r('invoices')}""")
    if got != {"exports": ["max_running", "key-blocked"], "invoices": ["key-blocked"]}:
        problems.append("the overview's reasons: %r" % got)
    if not b.js("return document.querySelectorAll('figure.chart svg rect.ok').length > 0"):
        problems.append("no throughput chart with bars")
    # A failed job's page: outcome and cause first, the output's end in
    # view, links to its queue and schedule, times with their zone.
    b.show(url, cron)
    got = b.js("""const o = document.getElementById('output'), e = document.getElementById('job-error');
        const top = (x) => x.getBoundingClientRect().top;
        return {outcome: document.getElementById('job-outcome').textContent,
                cause_first: top(e) < top(o), output_in_view: top(o) < window.innerHeight - 60,
                at_end: o.scrollTop + o.clientHeight >= o.scrollHeight - 4,
                schedule: document.getElementById('job-schedule').getAttribute('href'),
                queue: document.querySelector('.facts a.queue-link').getAttribute('href'),
                rss: document.querySelector("dd[data-col='max_rss']").textContent,
                attempts: [...document.querySelectorAll('table.attempts tbody tr')].map((r) => r.dataset.attempt + ' ' + r.dataset.outcome),
                ago: / ago\)$/.test(document.querySelector("dd[data-col='finished_at']").textContent)}""")
    want = {"outcome": "failed · exit code 1 · 3 of 3 attempts", "cause_first": True, "output_in_view": True,
            "at_end": True, "schedule": "#/schedules?from=nightly", "queue": "#/jobs/failed?queue=backups",
            "rss": "48 MiB", "attempts": ["1 retried", "2 timeout", "3 failed"], "ago": True}
    if got != want:
        problems.append("the failed job's page: %r, expected %r" % (got, want))
    # A schedule disabled and enabled again from its page.
    b.show(url, "#/schedules")
    got = b.js("return document.querySelector(\"tr[data-schedule='nightly'] .cron-words\").textContent")
    if got != " · every day at 03:00 UTC":
        problems.append("nightly's expression in words: %r" % got)
    b.js("window.confirm = (m) => true")
    b.click("tr[data-schedule='nightly'] button.act-disable")
    b.wait("return document.getElementById('flash').textContent === 'schedule nightly: disabled' && "
           "document.querySelector(\"tr[data-schedule='nightly'] .c-enabled\").textContent === 'no' && "
           "document.querySelector(\"tr[data-schedule='nightly'] .c-next\").textContent === '– (disabled)'",
           "the disable, without a next run")
    b.click("tr[data-schedule='nightly'] button.act-enable")
    b.wait("return document.getElementById('flash').textContent === 'schedule nightly: enabled'", "the enable")
    # The failed and retrying lists show what each row is.
    b.show(url, "#/jobs/failed")
    got = b.js("return document.querySelector(\"tr[data-id='killed-1']\").children[3].textContent")
    if got != "killed by signal 9":
        problems.append("killed-1's exit cell: %r" % got)
    b.show(url, "#/retrying")
    if not b.js("return !!document.querySelector(\"tr[data-id='retry-1']\")"):
        problems.append("retry-1 is not on the retrying page")
    # A filter typed into the form lands in the URL (to share) and filters.
    b.show(url, "#/jobs/failed")
    b.js("""const f = document.getElementById('filter');
        f.elements.queue.value = 'billing'; f.elements.q.value = 'payment';
        f.requestSubmit();""")
    b.wait("return document.body.dataset.shown === '#/jobs/failed?queue=billing&q=payment'", "the filtered list")
    got = b.js("return [...document.querySelectorAll('table.jobs tbody tr')].map((r) => r.dataset.id).sort()")
    if got != ["bad-1", "bad-2"]:
        problems.append("failed jobs of billing with 'payment': %r" % got)
    problems += ["#/jobs/failed?queue=billing&q=payment: " + p for p in b.page_problems()]
    # The owner, above 2^53, exactly; the output box at its end.
    b.show(url, "#/job/long-1")
    got = b.js("""const o = document.getElementById('output');
        return {owner: document.querySelector("dd[data-col='owner']").textContent,
                overflows: o.scrollHeight > o.clientHeight + 20,
                at_end: o.scrollTop + o.clientHeight >= o.scrollHeight - 4,
                last: o.textContent.slice(-8)}""")
    want = {"owner": "5169991159545666686", "overflows": True, "at_end": True, "last": "line 200"}
    if got != want:
        problems.append("long-1's page: %r, expected %r" % (got, want))
    b.show(url, "#/jobs/succeeded")
    got = b.js("""const o = document.querySelector("tr[data-id='long-1'] pre.tail");
        return o && {overflows: o.scrollHeight > o.clientHeight + 20,
                     at_end: o.scrollTop + o.clientHeight >= o.scrollHeight - 4}""")
    if got != {"overflows": True, "at_end": True}:
        problems.append("long-1's output in the succeeded list: %r" % got)
    # A queue's settings removed from the overview (after a confirmation);
    # a queue without settings has no such button.
    b.show(url, "#/overview")
    if b.js("return !!document.querySelector(\"tr[data-queue='mail'] button.act-reset\")"):
        problems.append("a reset button for mail, which has no settings")
    b.js("window.confirm = (m) => { window.asked = m; return true; }")
    b.click("tr[data-queue='reports'] button.act-reset")
    b.wait("return document.getElementById('flash').textContent === 'queue reports: settings removed' && "
           "!document.querySelector(\"tr[data-queue='reports'] button.act-reset\")", "the reset of reports")
    if not (b.js("return window.asked") or "").startswith("Remove the settings of queue reports"):
        problems.append("no confirmation asked before the reset: %r" % b.js("return window.asked"))
    problems += ["#/overview after the reset: " + p for p in b.page_problems()]
finally:
    b.close()
if problems:
    raise SystemExit("\n".join(problems))
print("pages ok")
PY

assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues WHERE name = 'reports'")" "reports' settings after the reset in the page"
for f in web-overview.png web-job-failed.png web-jobs-filtered.png; do
	assert_eq "89504e47" "$(od -An -tx1 -N4 "$shots/$f" | tr -d ' \n')" "the screenshot $f is a PNG"
done

# A running job's live output: on the running page, and on its own page,
# which follows it as it grows without a reload and shows the whole output
# once it ends; as text. The job goes on when the browser says so.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('tail-1', 'live',
     \"echo '<b>first</b>'; while [ ! -e $T_DIR/live.go ]; do sleep 0.05; done; echo second;
       while [ ! -e $T_DIR/live.end ]; do sleep 0.05; done\")"
wait_for "SELECT output LIKE '[kyu: live output of attempt 1:%' FROM kyu_jobs WHERE id = 'tail-1'" 1 60
python3 - "$WEB_URL" "$T_DIR" "$KYU_SRC/tests" >"$T_DIR/browser-live.out" 2>&1 <<'PY' || fail "browser, live output: $(cat "$T_DIR/browser-live.out")"
import sys
url, tdir, lib = sys.argv[1:4]
sys.path.insert(0, lib)
from webdriver import Browser
b = Browser(tdir + "/chrome-profile", tdir + "/chromedriver.log", 1200, 620)
try:
    b.get(url + "/#/running")
    b.wait("""const p = document.querySelector("tr[data-id='tail-1'] pre.tail");
        return p && p.textContent === '<b>first</b>\\n' && p.children.length === 0""", "the running page's tail")
    b.get(url + "/#/job/tail-1")
    out = "document.getElementById('output')"
    b.wait(f"const o = {out}; return o && o.dataset.live === '1' && o.children.length === 0 && "
           "o.textContent.endsWith('\\n<b>first</b>\\n')", "the job page's live tail")
    open(tdir + "/live.go", "w").close()
    b.wait(f"const o = {out}; return o && o.dataset.live === '1' && o.textContent.endsWith('first</b>\\nsecond\\n')",
           "the job page to follow the output")
    open(tdir + "/live.end", "w").close()
    b.wait(f"const o = {out}; return document.getElementById('job-status').textContent === 'succeeded' && "
           "o && !o.dataset.live && o.textContent === '<b>first</b>\\nsecond\\n'", "the whole output at the end")
    print("live ok")
finally:
    b.close()
PY

# No kyud: one banner at the top of the overview, shown as text, and no
# queue says "no daemon" (kyud's clean stop deletes its kyu_daemons row:
# the banner names the last attempt's host instead).
stop_kyud
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('orphan-1', 'orphans', 'true')"
python3 - "$WEB_URL" "$T_DIR" "$KYU_SRC/tests" "$shots" >"$T_DIR/browser-banner.out" 2>&1 <<'PY' || fail "browser, no kyud: $(cat "$T_DIR/browser-banner.out")"
import os, sys
url, tdir, lib = sys.argv[1:4]
sys.path.insert(0, lib)
from webdriver import Browser
b = Browser(tdir + "/chrome-profile", tdir + "/chromedriver.log", 1200, 620)
try:
    b.show(url, "#/overview")
    got = b.js("""const n = document.getElementById('no-kyud'), main = document.getElementById('main');
        return n && {text: n.innerText, first: main.firstElementChild === n,
                     visible: n.getBoundingClientRect().height > 0 && n.getBoundingClientRect().top < window.innerHeight,
                     no_daemon: [...document.querySelectorAll('.why strong')].filter((e) => e.textContent === 'no daemon').length,
                     orphans: !!document.querySelector("tr[data-queue='orphans']")}""")
    if not got or not got["text"].startswith("No kyud is registered (kyu_daemons is empty: the last one stopped); "
                                             "the last attempt ended on ") \
            or not got["text"].endswith("No job starts until one runs.") or not got["first"] or not got["visible"] \
            or got["no_daemon"] != 0 or not got["orphans"]:
        raise SystemExit("the overview without kyud: %r" % got)
    # A phone: the banner is still first, whole on the screen's width,
    # and the page does not scroll sideways for it.
    b.viewport(390, 844, True)
    b.show(url, "#/overview")
    got = b.js("""const n = document.getElementById('no-kyud'), r = n && n.getBoundingClientRect();
        return n && {first: document.getElementById('main').firstElementChild === n,
                     left: r.left, right: r.right, top: r.top, height: r.height,
                     page: document.documentElement.scrollWidth, width: window.innerWidth}""")
    if not got or not got["first"] or got["height"] <= 0 or got["top"] >= 844 or got["left"] < 0 \
            or got["right"] > got["width"] or got["page"] > got["width"]:
        raise SystemExit("the no-kyud banner at 390 px: %r" % got)
    b.screenshot(os.path.join(sys.argv[4], "web-no-kyud-390.png"))
    print("banner ok")
finally:
    b.close()
PY
stop_web
echo ok
