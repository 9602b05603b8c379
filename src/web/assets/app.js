// kyu web: the dashboard's page. It reads the JSON endpoints under /api/
// and builds every element with createElement and textContent: job output,
// errors, commands and queue names are untrusted text and never reach an
// HTML parser (no innerHTML anywhere), and the page's Content-Security-Policy
// allows no inline script besides.
"use strict";

const REFRESH_MS = 5000;
// A page that shows running jobs' output refreshes faster: kyud writes a
// running job's tail every few seconds ([kyud] live_output).
const LIVE_MS = 2000;
const session = { csrf: "", readOnly: true };
let timer = null;
let liveView = false; // the page shown has running jobs' output
let busy = false;
let again = false; // a render was asked for while one ran

// ---- DOM helpers -----------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// main's new content: what a page leaves out (null, undefined) is skipped,
// where replaceChildren would show it as the text "null".
function show(main, ...children) {
  main.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

// Output boxes open at their end, where the last lines (usually the cause)
// are, as a terminal would show them.
function scrollToEnd(root) {
  for (const p of root.querySelectorAll("pre.tail, pre.output")) p.scrollTop = p.scrollHeight;
}

function text(v) {
  return v === null || v === undefined ? "–" : String(v);
}

function dur(s) {
  if (s === null || s === undefined || s === "") return "–";
  s = Number(s);
  const neg = s < 0;
  s = Math.abs(s);
  let out;
  // Under a second in ms: a 4.6 ms job took "4.6 ms", not "0.0 s".
  if (s > 0 && s < 1) out = (s * 1000).toFixed(s < 0.01 ? 1 : 0) + " ms";
  else if (s < 60) out = s.toFixed(s < 10 ? 1 : 0) + " s";
  else if (s < 3600) out = Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
  else if (s < 86400) out = Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  else out = Math.floor(s / 86400) + " d " + Math.floor((s % 86400) / 3600) + " h";
  return neg ? "−" + out : out;
}

// A size in bytes, in binary units.
function bytes(n) {
  if (n === null || n === undefined || n === "") return "–";
  n = Number(n);
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(n < 10 ? 1 : 0) : String(n)) + " " + u[i];
}

// How long before now a database time was ("3 min ago", "in 2 h"): both
// are the server's, read in its zone, so they subtract as they are.
function ago(t, now) {
  if (!t || !now) return "";
  const ms = (s) => Date.parse(s.replace(" ", "T").replace(/(\.\d{3})\d*$/, "$1") + "Z");
  const d = (ms(now) - ms(t)) / 1000;
  if (Number.isNaN(d)) return "";
  if (Math.abs(d) < 1) return "now";
  return d >= 0 ? dur(d).split(" ").slice(0, 2).join(" ") + " ago"
    : "in " + dur(-d).split(" ").slice(0, 2).join(" ");
}

// A database time with its zone and how long ago.
function when(t, now, zone) {
  if (t === null || t === undefined) return "–";
  const a = ago(t, now);
  return String(t).replace(/\.\d+$/, "") + (zone ? " " + zone : "") + (a ? " (" + a + ")" : "");
}

// The schedule a job came from: cron:NAME:INSTANT or cron:NAME:now:TIME
// (kyu_jobs(7), "Schedules").
function scheduleOf(id) {
  const m = /^cron:(.*):(?:now:.*|\d{4}-\d\d-\d\dT[\d:]+Z)$/.exec(id);
  return m ? m[1] : null;
}

function jobLink(id) {
  return el("a", { href: "#/job/" + encodeURIComponent(id), class: "mono" }, id);
}

function batchLink(label, attrs) {
  return el("a", Object.assign({ href: "#/batch/" + encodeURIComponent(label), class: "mono batch-link" }, attrs || {}), label);
}

function graphHref(id) {
  return "#/graph/" + encodeURIComponent(id);
}

// A status as a small badge, coloured as on a job's page.
function badge(status) {
  return el("span", { class: "badge s-" + status }, status);
}

// Each cell says its column's name in data-label, which the narrow
// layout (style.css, below 600 px) shows before it when rows are cards.
function table(cls, head, rows) {
  for (const tr of [].concat(rows).flat(Infinity))
    if (tr instanceof Element)
      [...tr.children].forEach((td, i) => { if (head[i] && !td.hasAttribute("data-label")) td.setAttribute("data-label", head[i]); });
  return el("div", { class: "scroll" },
    el("table", { class: cls },
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
}

function flash(msg, bad) {
  const f = document.getElementById("flash");
  f.textContent = msg;
  f.className = bad ? "bad" : "good";
  f.hidden = false;
  clearTimeout(flash.t);
  flash.t = setTimeout(() => { f.hidden = true; }, 6000);
}

// ---- the endpoints ------------------------------------------------------------

// The database's clock as the last answer that had it said ("now",
// "zone"), for the "updated" line: the page's other times are the
// database's, in its zone, 24-hour; so is this one.
const dbClock = { now: null, zone: null, at: 0 };

async function getJSON(path) {
  const r = await fetch(path, { credentials: "same-origin", cache: "no-store" });
  let body;
  try { body = await r.json(); } catch (e) { body = { error: "HTTP " + r.status }; }
  if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
  if (body && typeof body.now === "string") Object.assign(dbClock, { now: body.now, zone: body.zone, at: Date.now() });
  return body;
}

// "01:02:03 UTC": the database's time now, from its last known clock.
function dbNow() {
  const pad = (n) => String(n).padStart(2, "0");
  if (dbClock.now) {
    const t = Date.parse(dbClock.now.replace(" ", "T").replace(/(\.\d{3})\d*$/, "$1") + "Z");
    if (!Number.isNaN(t)) {
      const d = new Date(t + Date.now() - dbClock.at);
      return pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds()) +
        (dbClock.zone ? " " + dbClock.zone : "");
    }
  }
  const d = new Date();
  return pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + " (this browser's time)";
}

async function act(kind, action, target) {
  const key = kind === "queue" ? "queue" : kind === "schedule" ? "name" : "id";
  const url = "/api/" + kind + "/" + action + "?" + key + "=" + encodeURIComponent(target);
  try {
    const r = await fetch(url, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: { "X-Kyu-CSRF": session.csrf },
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
    flash(kind + " " + target + ": " + body.done + (body.job ? " as job " + body.job : ""), false);
  } catch (e) {
    flash(e.message, true);
  }
  render();
}

function button(label, kind, action, target, confirmText) {
  if (session.readOnly) return null;
  return el("button", {
    type: "button", class: "act act-" + action, "data-action": action, "data-target": target,
    onclick: (ev) => {
      ev.preventDefault();
      if (confirmText && !window.confirm(confirmText)) return;
      act(kind, action, target);
    },
  }, label);
}

// Buttons for what a job's status allows (the statements check it again).
function jobButtons(j) {
  const b = [];
  if (j.status === "waiting" || j.status === "running" || j.status === "blocked")
    b.push(button("cancel", "job", "cancel", j.id, "Cancel job " + j.id + "?" +
      (j.status === "running" ? " Its process is ended." : "") +
      (j.has_downstream ? " The jobs that wait for it to succeed are cancelled too." : "")));
  if (j.status === "waiting") b.push(button("run now", "job", "run-now", j.id));
  if (j.status === "failed" || j.status === "cancelled") b.push(button("retry", "job", "retry", j.id));
  if (["succeeded", "failed", "cancelled"].includes(j.status))
    b.push(button("delete", "job", "delete", j.id, "Delete job " + j.id + "?"));
  return el("span", { class: "buttons" }, b);
}

function more(next, base) {
  if (!next) return null;
  return el("p", {}, el("a", { href: base + "?before=" + encodeURIComponent(next), class: "more" }, "older →"));
}

// ---- pages -------------------------------------------------------------------

function sparkline(counts) {
  const ns = "http://www.w3.org/2000/svg";
  const max = Math.max(1, ...counts);
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 120 24");
  svg.setAttribute("class", "spark");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "jobs ended per minute, last hour: " + counts.reduce((a, b) => a + b, 0));
  const base = document.createElementNS(ns, "rect");
  base.setAttribute("x", "0");
  base.setAttribute("y", "23.5");
  base.setAttribute("width", "120");
  base.setAttribute("height", "0.5");
  base.setAttribute("class", "base");
  svg.append(base);
  counts.forEach((n, i) => {
    if (!n) return;
    const h = Math.max(1, Math.round((n / max) * 24));
    const r = document.createElementNS(ns, "rect");
    r.setAttribute("x", String(i * 2));
    r.setAttribute("y", String(24 - h));
    r.setAttribute("width", "1.6");
    r.setAttribute("height", String(h));
    svg.append(r);
  });
  return svg;
}

// Throughput of the last hour, a bar per minute: succeeded and failed
// stacked, with the scale on the left and the minutes below; each bar's
// title tells its minute's figures.
function chart(label, total, failed) {
  const ns = "http://www.w3.org/2000/svg";
  const W = 360, H = 90, L = 34, B = 16, T = 6;
  const max = Math.max(1, ...total);
  const svg = document.createElementNS(ns, "svg");
  const add = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const sumF = failed ? failed.reduce((a, b) => a + b, 0) : 0;
  const sumT = total.reduce((a, b) => a + b, 0);
  svg.setAttribute("aria-label", label + ": " + (sumT - sumF) + " succeeded, " + sumF + " failed in the last hour");
  const y = (v) => H - B - ((H - B - T) * v) / max;
  add("line", { x1: L, x2: W, y1: y(0), y2: y(0), class: "axis" });
  add("line", { x1: L, x2: W, y1: y(max), y2: y(max), class: "grid" });
  add("text", { x: L - 4, y: y(max) + 4, "text-anchor": "end", class: "tick" }, max);
  add("text", { x: L - 4, y: y(0), "text-anchor": "end", class: "tick" }, 0);
  const bw = (W - L) / 60;
  for (const [m, txt] of [[0, "−60 min"], [30, "−30"], [59, "now"]])
    add("text", { x: L + m * bw + (m === 59 ? bw : 0), y: H - 3, "text-anchor": m === 0 ? "start" : m === 59 ? "end" : "middle", class: "tick" }, txt);
  total.forEach((n, i) => {
    if (!n) return;
    const f = failed ? failed[i] || 0 : 0;
    const x = L + i * bw + 0.5;
    const g = add("g", {});
    const tip = document.createElementNS(ns, "title");
    tip.textContent = (59 - i) + " min ago: " + (n - f) + " succeeded, " + f + " failed";
    g.append(tip);
    const r1 = document.createElementNS(ns, "rect");
    for (const [k, v] of Object.entries({ x, y: y(n - f), width: bw - 1, height: y(0) - y(n - f), class: "ok" }))
      r1.setAttribute(k, String(v));
    g.append(r1);
    if (f) {
      const r2 = document.createElementNS(ns, "rect");
      for (const [k, v] of Object.entries({ x, y: y(n), width: bw - 1, height: y(n - f) - y(n), class: "fail" }))
        r2.setAttribute(k, String(v));
      g.append(r2);
    }
  });
  return el("figure", { class: "chart" },
    el("figcaption", {}, el("span", { class: "mono" }, label), " · ",
      el("span", { class: "k-ok" }, (sumT - sumF) + " succeeded"), " · ",
      el("span", { class: "k-fail" }, sumF + " failed"), " per minute, last hour"), svg);
}

// Why a queue with due jobs starts none (webstuck.c): the reasons, each
// with what the tables say.
// A blocked queue's reason names its oldest blocked job: the detail links
// to that job's page.
function whyCell(q) {
  if (!q.why || !q.why.length) {
    if (!q.due) return "–";
    return el("span", { class: "muted" }, q.running ? "starting (" + q.running + " running)" : "due, not yet claimed");
  }
  return q.why.map((w, i) => el("span", { class: "why", title: w.detail, "data-reason": w.reason }, i ? ", " : "",
    el("strong", {}, w.reason),
    w.job ? el("a", { class: "why-detail", href: "#/job/" + encodeURIComponent(w.job) }, ": " + w.detail)
      : el("span", { class: "why-detail" }, ": " + w.detail)));
}

// The banner of an overview with no live kyud (kyu_daemons): said once, at
// the top, instead of "no daemon" on every queue.
function kyudBanner(k, now, zone) {
  if (!k || k.live > 0) return null;
  const who = (x) => x.host + ", pid " + x.pid + ", " + when(x.last_seen, now, zone);
  let msg;
  if (k.last) msg = "No kyud seen for " + dur(k.last.ago) + "; the last one: " + who(k.last) + ".";
  else if (k.last_attempt) msg = "No kyud is registered (kyu_daemons is empty: the last one stopped); " +
    "the last attempt ended on " + who(k.last_attempt) + ".";
  else msg = "No kyud has ever registered (kyu_daemons is empty).";
  return el("p", { class: "banner", id: "no-kyud", role: "alert" }, msg, " No job starts until one runs.");
}

// The overview's parameters as a query string (null: left out).
function pageQuery(o) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined && v !== "") p.set(k, v);
  const s = p.toString();
  return s ? "?" + s : "";
}

// The page's links: the neighbouring pages, and the other order.
function overviewPager(p, q) {
  const link = (extra, label, cls) => el("a", { href: "#/" + pageQuery(Object.assign({}, q, extra)), class: cls }, label);
  const parts = [el("span", {}, p.total ? "queues " + (p.offset + 1) + "–" + Math.min(p.total, p.offset + p.limit) +
    " of " + p.total : "no queues")];
  if (p.offset > 0) parts.push(link({ offset: p.offset > p.limit ? p.offset - p.limit : null }, "← previous", "prev"));
  if (p.offset + p.limit < p.total) parts.push(link({ offset: p.offset + p.limit }, "next →", "next"));
  parts.push(p.sort === "name" ? link({ sort: null, offset: null }, "sort by attention", "sort")
    : link({ sort: "name", offset: null }, "sort by name", "sort"));
  return el("p", { class: "pager", id: "overview-pager" }, parts);
}

async function pageOverview(main, q) {
  q = q || {};
  const args = pageQuery({ offset: q.offset, sort: q.sort, limit: q.limit });
  const d = await getJSON("/api/overview" + args);
  const tot = { waiting: 0, due: 0, running: 0, blocked: 0 };
  const flows = d.workflows;
  const paged = d.page && d.page.total > d.queues.length;
  const capped = (n) => (n > d.count_cap ? "> " + d.count_cap : n);
  const rows = d.queues.map((q) => {
    for (const k of ["waiting", "due", "running", "blocked"]) tot[k] += Math.min(Number(q[k]) || 0, d.count_cap);
    if (q.waiting > d.count_cap) tot.capped = true;
    if (q.blocked > d.count_cap) tot.bcapped = true;
    const limits = [];
    if (q.max_running !== null) limits.push("max " + q.max_running + " running");
    if (q.rate_limit !== null) limits.push(q.rate_limit + "/" + q.rate_period + " s");
    if (q.max_waiting !== null) limits.push("≤ " + q.max_waiting + " waiting");
    if (q.weight !== 1) limits.push("weight " + q.weight);
    const fa = q.failed_attempts_1h;
    return el("tr", { "data-queue": q.queue, "data-attention": q.attention,
      class: [q.paused ? "paused" : null, q.failing ? "failing" : null].filter(Boolean).join(" ") || null },
      el("td", { class: "c-queue" }, queueLink(q.queue, "failed"),
        q.failing ? el("span", { class: "failing-mark", title: fa + " of the attempts that ended in the last hour " +
          "failed, no fewer than succeeded" }, " failing") : null),
      el("td", { class: "c-waiting num" }, capped(q.waiting)),
      el("td", { class: "c-due num" }, capped(q.due)),
      flows ? el("td", { class: "c-blocked num" }, q.blocked ?
        el("a", { href: "#/jobs/blocked" + filterQuery({ queue: q.queue }) }, capped(q.blocked)) : 0) : null,
      el("td", { class: "c-running num" }, q.running),
      el("td", { class: "c-retrying num" + (q.retrying ? " warn" : "") }, q.retrying ?
        el("a", { href: "#/retrying" + filterQuery({ queue: q.queue }) }, (q.retrying_capped ? "≥ " : "") + q.retrying) : 0),
      el("td", { class: "c-attempts-failed num" + (fa ? " warn" : "") }, text(fa)),
      el("td", { class: "c-failed num" + (q.failed_1h ? " warn" : "") },
        q.failed_1h ? el("a", { href: "#/jobs/failed" + filterQuery({ queue: q.queue }) }, q.failed_1h) : 0),
      el("td", { class: "c-succeeded num" }, text(q.succeeded_1h)),
      el("td", { class: "c-age num" }, q.due ? dur(q.oldest_due_age) : "–"),
      el("td", { class: "c-why" }, whyCell(q)),
      el("td", { class: "c-spark" }, q.per_minute ? sparkline(q.per_minute) : ""),
      el("td", { class: "c-state" }, q.paused ? el("strong", {}, limits.length ? "paused · " : "paused") : "",
        limits.join(", ")),
      el("td", {}, q.paused ? button("resume", "queue", "resume", q.queue)
                            : button("pause", "queue", "pause", q.queue),
        q.settings ? button("reset", "queue", "reset", q.queue, "Remove the settings of queue " + q.queue +
          " (paused, limits, weight, intake bound: back to the defaults)?") : null));
  });
  // Over several pages, the waiting and due of other pages are not read:
  // only what is counted for every queue is summed.
  rows.push(el("tr", { id: "totals", class: "totals" },
    el("td", {}, paged ? "all " + d.page.total + " queues" : "all queues"),
    el("td", { class: "c-waiting num" }, paged ? "–" : tot.capped ? "> " + tot.waiting : tot.waiting),
    el("td", { class: "c-due num" }, paged ? "–" : tot.capped ? "> " + tot.due : tot.due),
    flows ? el("td", { class: "c-blocked num" }, paged ? "–" : tot.bcapped ? "> " + tot.blocked : tot.blocked) : null,
    el("td", { class: "c-running num" }, d.all.running !== undefined ? d.all.running : tot.running),
    el("td", { class: "c-retrying num" }, paged ? "–" : d.queues.reduce((a, q) => a + (q.retrying || 0), 0)),
    el("td", { class: "c-attempts-failed num" }, d.all.retried_1h === null ? "–" : d.all.failed_1h + d.all.retried_1h),
    el("td", { class: "c-failed num" }, d.all.failed_1h),
    el("td", { class: "c-succeeded num" }, d.all.succeeded_1h),
    el("td", {}), el("td", {}), el("td", { class: "c-spark" }, sparkline(d.all.per_minute)), el("td", {}), el("td", {})));
  const charts = [chart("all queues", d.all.per_minute, d.all.failed_per_minute)];
  for (const q of d.queues)
    if (q.per_minute && q.per_minute.some((n) => n)) charts.push(chart(q.queue, q.per_minute, q.failed_per_minute));
  show(main,
    kyudBanner(d.kyud, d.now, d.zone),
    el("h1", {}, "Queues"),
    d.page ? overviewPager(d.page, q) : null,
    table("overview", ["queue", "waiting", "due"].concat(flows ? ["blocked"] : [], ["running", "retrying",
      "attempts failed 1 h", "failed 1 h", "succeeded 1 h", "oldest due", "why not moving", "ended per minute, 1 h",
      "settings", ""]), rows),
    unsettledNote(d.unsettled),
    el("p", { class: "muted" }, "Database time " + text(d.now).replace(/\.\d+$/, "") + (d.zone ? " " + d.zone : "") +
      ". Waiting" + (flows ? ", due and blocked (waiting for other jobs to end)" : " and due") + " are counted up to " +
      d.count_cap + " per queue; retrying: waiting jobs whose last attempt failed (among the " + d.count_cap +
      " due last when more wait); failed and succeeded are the jobs " +
      "that ended in the last hour (failed: for good), attempts failed also counts the attempts that failed and will retry" +
      (d.hour_age === null ? ", as kyud counts them."
        : " (read " + Math.round(d.hour_age) + " s ago; at most every 30 s; without kyu_minutes, retries are not counted).") +
      (d.page && d.page.sort !== "name" ? " Queues that need attention come first: failing (at least " + d.failing_min +
        " attempts failed in the last hour, no fewer than succeeded), then stuck (due for " + d.stuck_age +
        " s or more), then with failed attempts, then busy (running or due), then the rest." : "") +
      (d.per_queue_hour ? "" : " Per queue, succeeded counts and the per-minute bars need the index " +
        "(status, updated_at, queue) on kyu_jobs; the last row counts all queues.")),
    el("h2", {}, "Throughput"),
    el("div", { class: "charts" }, charts));
}

// Workflow changes that nobody settles: no kyud of schema version 5 runs
// (webstuck.c, "unsettled").
function unsettledNote(u) {
  if (!u || !u.items || u.oldest_age < 60) return null;
  return el("p", { class: "warn", id: "unsettled" }, (u.capped ? "More than " : "") + u.items +
    " workflow change" + (u.items === 1 ? "" : "s") + " in kyu_after_todo, the oldest " + dur(u.oldest_age) +
    " old: no kyud of schema version 5 settles them, and the jobs that wait for others stay blocked " +
    "(CALL kyu_settle(1000) does it once).");
}

async function pageRunning(main, q) {
  const d = await getJSON("/api/running" + (q.before ? "?before=" + encodeURIComponent(q.before) : ""));
  const rows = d.rows.map((j) => el("tr", { "data-id": j.id },
    el("td", {}, jobLink(j.id)),
    el("td", {}, queueLink(j.queue, "running")),
    el("td", {}, text(j.host)),
    el("td", { class: "num" }, text(j.pid)),
    el("td", { class: "num" }, j.attempts + (j.max_attempts ? " / " + j.max_attempts : "")),
    el("td", { class: "num" }, dur(j.running_for)),
    el("td", { class: "num" + (j.lease_left < 0 ? " warn" : "") }, dur(j.lease_left)),
    el("td", { class: "mono cmd" }, text(j.what)),
    el("td", {}, progressBar(j) || "–"),
    el("td", {}, j.output_tail !== null ? el("pre", { class: "tail live" }, j.output_tail) : "–"),
    el("td", {}, button("cancel", "job", "cancel", j.id, "Cancel job " + j.id + "? Its process is ended."))));
  liveView = d.rows.length > 0;
  show(main,
    el("h1", {}, "Running jobs"),
    d.rows.length ? table("running", ["id", "queue", "host", "pid", "attempt", "running for",
      "lease left", "command", "progress", "output (live tail)", ""], rows) : el("p", { class: "muted" }, "Nothing is running."),
    more(d.next, "#/running"),
    el("p", { class: "muted" }, "kyud writes the tail of a running job's output into its row every few " +
      "seconds once the job has run that long ([kyud] live_output); the whole output is stored when the " +
      "attempt ends. This page refreshes every " + LIVE_MS / 1000 + " s while jobs run."));
  scrollToEnd(main);
}

// The filters a job list keeps in its URL (#/jobs/failed?queue=mail&q=...),
// so that a filtered list can be shared; the cursors come on top.
const FILTERS = ["queue", "q", "since", "until"];

function filterQuery(q, extra) {
  const p = new URLSearchParams();
  for (const k of FILTERS) if (q[k]) p.set(k, q[k]);
  for (const [k, v] of Object.entries(extra || {})) if (v) p.set(k, v);
  const s = p.toString();
  return s ? "?" + s : "";
}

function queueLink(queue, status) {
  const base = status === "retrying" ? "#/retrying" : "#/jobs/" + (status || "failed");
  return el("a", { href: base + filterQuery({ queue }), class: "mono queue-link" }, queue);
}

// How a job or attempt ended, in the words kyud's errors use ("exit code
// 1: ...", "killed by signal 9 (SIGKILL)"), on every page alike.
function endedWith(r) {
  return r.signal !== null && r.signal !== undefined ? "killed by signal " + r.signal
    : r.exit_code !== null && r.exit_code !== undefined ? "exit code " + r.exit_code : null;
}

function jobRows(d, status) {
  return d.rows.map((j) => el("tr", { "data-id": j.id, "data-status": j.status },
    el("td", {}, jobLink(j.id)),
    el("td", {}, queueLink(j.queue, status)),
    el("td", { class: "num" }, j.attempts + (j.max_attempts ? " / " + j.max_attempts : "")),
    el("td", { class: "c-exit" }, text(endedWith(j))),
    el("td", { class: "err" }, text(j.error)),
    el("td", { class: "c-when" }, when(j.status === "waiting" ? j.run_at : j.status === "blocked" ? j.updated_at
      : j.finished_at, d.now, d.zone)),
    el("td", {}, j.output_tail ? el("pre", { class: "tail" }, j.output_tail) : "–"),
    el("td", {}, jobButtons(j))));
}

// The filter form: applying it starts the list again from its first page.
function filterForm(q, base, zone) {
  const field = (name, label, attrs) => el("label", {}, label + " ",
    el("input", Object.assign({ name, value: q[name] || "" }, attrs)));
  // Times as the page shows every other: the database's, in its zone,
  // 24-hour (a datetime-local field shows the browser's locale instead).
  const time = { type: "text", size: 16, maxlength: 19, placeholder: "YYYY-MM-DD hh:mm", inputmode: "numeric",
    pattern: "\\d{4}-\\d{2}-\\d{2}([ T]\\d{2}:\\d{2}(:\\d{2})?)?", title: "YYYY-MM-DD [hh:mm[:ss]], 24-hour" +
      (zone ? ", " + zone : "") };
  const z = zone ? " (" + zone + ")" : "";
  const form = el("form", { class: "filter", id: "filter" },
    field("queue", "queue", { type: "text", size: 10, maxlength: 64 }),
    field("q", "search", { type: "search", size: 16, maxlength: 200,
      placeholder: "id, command, error, output" }),
    field("since", "changed since" + z, time),
    field("until", "before" + z, time),
    el("button", { type: "submit" }, "filter"),
    FILTERS.some((k) => q[k]) ? el("a", { href: base, class: "clear" }, "clear") : null);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = {};
    for (const k of FILTERS) {
      const v = form.elements[k].value.trim();
      if (v) f[k] = k === "since" || k === "until" ? v.replace("T", " ") : v;
    }
    location.hash = base + filterQuery(f);
  });
  return form;
}

function pager(d, q, base) {
  const links = [];
  if (d.newer) {
    links.push(el("a", { href: base + filterQuery(q), class: "first" }, "« first"));
    links.push(el("a", { href: base + filterQuery(q, { after: d.newer }), class: "newer" }, "← newer"));
  }
  if (d.next) links.push(el("a", { href: base + filterQuery(q, { before: d.next }), class: "more" }, "older →"));
  return links.length ? el("p", { class: "pager" }, links) : null;
}

// The bulk actions of a list (POST /api/jobs/ACTION with the list's filter,
// not ids): what the list's status allows, as for one job.
const BULK = { waiting: ["cancel"], blocked: ["cancel"], running: ["cancel"], retrying: ["cancel"],
  failed: ["retry", "delete"], cancelled: ["retry", "delete"], succeeded: ["delete"] };

function bulkQuery(q, status, extra) {
  const p = new URLSearchParams();
  p.set("status", status);
  for (const k of FILTERS) if (q[k]) p.set(k, q[k]);
  if (q.cause !== undefined) p.set("cause", q.cause);
  for (const [k, v] of Object.entries(extra || {})) if (v !== null && v !== undefined) p.set(k, v);
  return p.toString();
}

// Counts the jobs, asks with the count, then POSTs slice after slice (each
// a few seconds of batches of 1000 rows on the server) until done.
async function bulk(action, q, status) {
  const what = [status + " jobs"].concat(q.queue ? ["of queue " + q.queue] : [], q.q ? ["matching “" + q.q + "”"] : [],
    q.since ? ["changed since " + q.since] : [], q.until ? ["changed before " + q.until] : [],
    q.cause !== undefined ? ["with the cause “" + q.cause + "”"] : []).join(" ");
  let total = 0;
  try {
    const c = await getJSON("/api/bulk?" + bulkQuery(q, status, { action }));
    if (!c.count) { flash("No " + what + " to " + action + ".", false); render(); return; }
    if (!window.confirm(action[0].toUpperCase() + action.slice(1) + " all " + c.count.toLocaleString("en") + " " + what + "?"))
      return;
    let pos = { upto: c.upto };
    for (;;) {
      const r = await fetch("/api/jobs/" + action + "?" + bulkQuery(q, status, pos), {
        method: "POST", credentials: "same-origin", cache: "no-store",
        headers: { "X-Kyu-CSRF": session.csrf },
      });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
      total += body.count;
      if (body.error) throw new Error(body.error);
      if (!body.more) break;
      flash(body.done + " " + total.toLocaleString("en") + " of " + c.count.toLocaleString("en") + "…", false);
      pos = { upto: c.upto, at_queue: body.at_queue, after_seq: body.after_seq };
    }
    flash({ cancel: "cancelled ", retry: "retrying ", delete: "deleted " }[action] + total.toLocaleString("en") +
      (total === 1 ? " job" : " jobs"), false);
  } catch (e) {
    flash(action + ": " + e.message + (total ? " (after " + total + " jobs)" : ""), true);
  }
  render();
}

function bulkButtons(d, q, status) {
  if (session.readOnly || !d.rows.length || !BULK[status]) return null;
  const n = d.total !== null && d.total !== undefined && !d.total_capped ? d.total + " " : "";
  return el("p", { class: "bulk", id: "bulk" }, BULK[status].map((action) =>
    el("button", { type: "button", class: "act act-" + action, "data-bulk": action,
      onclick: (ev) => { ev.preventDefault(); bulk(action, q, status); } }, action + " all " + n + "matching")));
}

// ---- failures by cause (GET /api/causes): how many distinct problems ----

// A cause's actions: retry its failed jobs, cancel its retrying ones (the
// bulk actions with the cause as filter), show them.
function causeButtons(c, queue) {
  const q = { queue, cause: c.text };
  const b = [];
  if (!session.readOnly && c.failed)
    b.push(el("button", { type: "button", class: "act act-retry", "data-bulk": "retry",
      onclick: (ev) => { ev.preventDefault(); bulk("retry", q, "failed"); } }, "retry these " + c.failed));
  if (!session.readOnly && c.retrying)
    b.push(el("button", { type: "button", class: "act act-cancel", "data-bulk": "cancel",
      onclick: (ev) => { ev.preventDefault(); bulk("cancel", q, "retrying"); } }, "cancel these " + c.retrying));
  b.push(el("a", { class: "show-cause", href: "#/cause/" + c.id + filterQuery({ queue }) }, "show them"));
  return el("span", { class: "buttons" }, b);
}

function causeCounts(c) {
  return [c.failed ? el("span", { class: "k-fail" }, c.failed + " failed") : null,
    c.failed && c.retrying ? ", " : null,
    c.retrying ? el("span", { class: "warn" }, c.retrying + " retrying") : null];
}

async function causesSection(q) {
  const d = await getJSON("/api/causes" + filterQuery({ queue: q.queue }));
  if (!d.causes.length) return null;
  const rows = d.causes.map((c) => el("tr", { "data-cause": c.id },
    el("td", { class: "c-cause err" }, c.text === "" ? "(no error)" : c.text),
    el("td", { class: "c-count num" }, causeCounts(c)),
    el("td", { class: "c-queues" }, c.queues.map((n, i) => [i ? ", " : "", queueLink(n, "failed")]),
      c.more_queues ? " +" + c.more_queues + " more" : ""),
    el("td", { class: "c-when" }, when(c.first, d.now, d.zone)),
    el("td", { class: "c-when" }, when(c.last, d.now, d.zone)),
    el("td", { class: "c-act" }, causeButtons(c, q.queue))));
  return [el("h2", { id: "causes" }, d.causes.length + (d.causes.length === 1 ? " cause" : " causes") +
      (q.queue ? " in queue " + q.queue : "")),
    table("causes", ["cause", "jobs", "queues", "first seen", "last seen", ""], rows),
    el("p", { class: "muted" }, "Failed and retrying jobs grouped by the first line of their error, numbers, " +
      "ids, quoted text and paths folded" + (d.window_full ? "; of the latest " + d.scan +
      " failed and " + d.scan + " waiting jobs only" : "") + ". Retry these: the failed ones; cancel these: " +
      "the retrying ones (kyu causes, kyu retry --cause ID).")];
}

// "show them": the jobs of one cause, the latest first.
async function pageCause(main, id, q) {
  const d = await getJSON("/api/causes?cause=" + encodeURIComponent(id) + (q.queue ? "&queue=" + encodeURIComponent(q.queue) : ""));
  const back = el("p", {}, el("a", { href: "#/jobs/failed" + filterQuery({ queue: q.queue }) }, "← all causes"));
  if (!d.cause)
    return show(main, el("h1", {}, "Cause " + id), el("p", { class: "muted", id: "cause-gone" },
      "No failed or retrying job has this cause now" + (q.queue ? " in queue " + q.queue : "") + "."), back);
  const failed = d.jobs.filter((j) => j.status === "failed").length;
  const rows = d.jobs.map((j) => el("tr", { "data-id": j.id, "data-status": j.status },
    el("td", {}, jobLink(j.id)), el("td", {}, queueLink(j.queue, j.status)), el("td", {}, badge(j.status)),
    el("td", { class: "c-when" }, when(j.updated, d.now, d.zone)), el("td", { class: "err" }, j.error)));
  show(main,
    el("h1", {}, "Cause " + d.cause.id + (q.queue ? " in queue " + q.queue : "")),
    el("pre", { class: "cause", id: "cause-text" }, d.cause.text === "" ? "(no error)" : d.cause.text),
    el("p", {}, causeButtons({ id: d.cause.id, text: d.cause.text, failed, retrying: d.jobs.length - failed }, q.queue)),
    el("p", { class: "muted" }, d.jobs.length + (d.jobs.length === 1 ? " job" : " jobs") +
      (d.jobs.length >= d.limit ? " (the latest " + d.limit + ")" : "") + "; each error as its first line says it." +
      " The buttons act on every job of the cause, shown or not."),
    d.jobs.length ? table("jobs cause-jobs", ["id", "queue", "status", "last changed", "error"], rows)
      : el("p", { class: "muted" }, "None."),
    back);
}

async function pageJobs(main, q, status) {
  const path = status === "retrying" ? "/api/retrying" : "/api/jobs?status=" + encodeURIComponent(status);
  const extra = filterQuery(q, { before: q.before, after: q.after });
  const d = await getJSON(path + (extra ? (path.includes("?") ? "&" : "?") + extra.slice(1) : ""));
  const base = status === "retrying" ? "#/retrying" : "#/jobs/" + status;
  const tabs = ["failed", "waiting", "blocked", "running", "succeeded", "cancelled"].map((s) =>
    el("a", { href: "#/jobs/" + s + filterQuery(q), class: s === status ? "tab on" : "tab" }, s));
  const filtered = FILTERS.some((k) => q[k]);
  const what = [];
  if (d.total !== null && d.total !== undefined)
    what.push((d.total_capped ? "more than " : "") + d.total + (d.total === 1 ? " job" : " jobs"));
  if (q.queue) what.push("of queue " + q.queue);
  what.push(d.order === "submitted" ? "newest submitted first" : "last changed first");
  if (d.scanned) what.push("each page reads at most " + d.scanned + " jobs of the list" +
    (q.q ? " to search" : "") + (d.window_ended ? "; this one read them all and found " + d.rows.length +
      (d.next ? ": older →" : "") : ""));
  show(main,
    el("h1", {}, status === "retrying" ? "Retrying jobs" : "Jobs: " + status),
    status === "retrying" ? el("p", { class: "muted" }, "Waiting for another attempt after a failed one.")
                          : el("p", { class: "tabs" }, tabs),
    status === "blocked" ? el("p", { class: "muted" }, "Waiting for other jobs to end (after, after_batch); " +
      "a job's page says which.") : null,
    status === "failed" ? await causesSection(q) : null,
    status === "failed" ? el("h2", {}, "Failed jobs") : null,
    filterForm(q, base, d.zone),
    el("p", { class: "muted", id: "list-summary" }, what.join(" · ") + "."),
    bulkButtons(d, q, status),
    d.rows.length ? table("jobs", ["id", "queue", "attempts", "ended with", "error",
      status === "retrying" ? "next attempt" : status === "blocked" ? "since" : "when", "output (end)", ""], jobRows(d, status))
      : el("p", { class: "muted" }, filtered ? "None matches." : "None."),
    pager(d, q, base));
  scrollToEnd(main);
}

const JOB_ORDER = ["id", "status", "queue", "priority", "command", "argv", "env", "cwd", "run_at", "due",
  "attempts", "max_attempts", "tempfails", "time_limit", "exit_code", "signal", "error", "started_at",
  "finished_at", "duration", "cpu_user", "cpu_sys", "max_rss", "host", "pid", "owner", "lease_until",
  "concurrency_key", "created_at", "updated_at", "seq", "after", "after_policy", "batch", "after_batch",
  "after_left", "after_bad", "cancelled_by", "has_downstream", "progress", "progress_note", "result",
  "unique_key", "traceparent", "key_slot"];
// The workflow columns (schema version 5) and those of version 6 (the
// status channel, unique keys, trace context, per-key slots): shown when
// the page has them.
const JOB_FLOW = ["after", "after_policy", "batch", "after_batch", "after_left", "after_bad", "cancelled_by",
  "has_downstream", "progress", "progress_note", "result", "unique_key", "traceparent", "key_slot"];

// What a job said on its status channel (kyu_jobs(7), "The status
// channel"): its progress as a bar with its note; null when it said none.
function progressBar(j, id) {
  if (j.progress === null || j.progress === undefined) return null;
  return el("span", { class: "progress", id, "data-progress": j.progress },
    el("progress", { max: 100, value: j.progress }), " " + j.progress + "%",
    j.progress_note !== null && j.progress_note !== undefined ? el("span", { class: "note" }, " " + j.progress_note) : null);
}

// Its result, indented; as stored if it does not parse (never: the server
// checked it).
function prettyJSON(s) {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch (e) { return s; }
}
const JOB_TIMES = ["run_at", "due", "started_at", "finished_at", "lease_until", "created_at", "updated_at"];
const JOB_SECONDS = ["duration", "cpu_user", "cpu_sys", "time_limit"];

// A job's outcome in words: how its last attempt ended.
function outcome(j) {
  const att = j.attempts + (j.max_attempts ? " of " + j.max_attempts : "") + (j.attempts === 1 ? " attempt" : " attempts");
  if (j.status === "running") return "running, attempt " + j.attempts + (j.max_attempts ? " of " + j.max_attempts : "");
  if (j.status === "blocked")
    return j.after_left === null || j.after_left === undefined ? "blocked · its upstream jobs not counted yet"
      : "blocked · waiting for " + j.after_left + (j.after_left === 1 ? " upstream job" : " upstream jobs") + " to end";
  if (j.status === "waiting") return j.attempts ? "waiting to retry after " + att : "waiting for its first attempt";
  return [j.status, endedWith(j), att].filter((x) => x).join(" · ");
}

async function pageJob(main, id) {
  const d = await getJSON("/api/job?id=" + encodeURIComponent(id));
  const j = d.job;
  const dl = el("dl", { class: "job" });
  for (const k of JOB_ORDER) {
    if (JOB_FLOW.includes(k) && !(k in j)) continue;
    let v = text(j[k]);
    if (JOB_TIMES.includes(k)) v = when(j[k], d.now, d.zone);
    else if (JOB_SECONDS.includes(k) && j[k] !== null) v = dur(j[k]) + (Number(j[k]) >= 60 ? " (" + j[k] + " s)" : "");
    else if (k === "max_rss" && j[k] !== null) v = bytes(j[k]);
    dl.append(el("dt", {}, k), el("dd", { class: "mono", "data-col": k }, v));
  }
  const running = j.status === "running";
  // While it runs, output is this attempt's live tail (d.live), or until
  // kyud first writes one, what an earlier attempt left.
  let head = "Output (the end; scroll up for the rest)", out = null, note = null;
  if (running && d.live) {
    head = "Output (live tail)";
    out = el("pre", { class: "output live", id: "output", "data-live": "1" }, j.output);
    note = el("p", { class: "muted" }, "Written by kyud every few seconds while the job runs; refreshed every " +
      LIVE_MS / 1000 + " s. The whole output is stored when the attempt ends.");
  } else if (running) {
    note = el("p", { class: "muted", id: "output-none" }, "Nothing from this attempt yet: kyud writes a " +
      "running job's output once it has run a few seconds ([kyud] live_output), and all of it when the attempt ends.");
    if (j.output !== null) {
      head = "Output of an earlier attempt";
      out = el("pre", { class: "output", id: "output" }, j.output);
    }
  } else if (j.output !== null) {
    out = el("pre", { class: "output", id: "output" }, j.output);
  } else {
    head = "Output";
    note = el("p", { class: "muted" }, j.status === "waiting" || j.status === "blocked" ? "Recorded when an attempt runs." : "None.");
  }
  // A refresh of the same job keeps the reader's place in its output, and
  // one who was at its end (or arrives) sees the end: the newest lines of a
  // running job, the last (usually the cause) of a finished one.
  const old = document.getElementById("output");
  const same = old && main.dataset.job === j.id;
  const follow = !same || old.scrollTop + old.clientHeight >= old.scrollHeight - 4;
  const top = same ? old.scrollTop : 0;
  liveView = running;
  main.dataset.job = j.id;
  const sched = scheduleOf(j.id);
  const ended = j.finished_at !== null && j.status !== "waiting" && j.status !== "running";
  const facts = [
    el("span", {}, "queue ", queueLink(j.queue, j.status === "waiting" && j.attempts ? "retrying" : j.status)),
    sched ? el("span", {}, "schedule ", el("a", { href: "#/schedules" + filterQuery({}, { from: sched }), class: "mono", id: "job-schedule" }, sched)) : null,
    j.batch ? el("span", {}, "batch ", batchLink(j.batch, { id: "job-batch" })) : null,
    j.unique_key ? el("span", {}, "unique key ", el("span", { class: "mono", id: "job-unique-key" }, j.unique_key)) : null,
    j.concurrency_key ? el("span", {}, "key ", el("span", { class: "mono", id: "job-key" }, j.concurrency_key),
      running && j.key_slot ? " (slot " + j.key_slot + ")" : "") : null,
    j.traceparent ? el("span", {}, "trace ", el("span", { class: "mono", id: "job-trace", title: j.traceparent },
      j.traceparent.substring(3, 35))) : null,
    j.cancelled_by ? el("span", {}, "cancelled by ", el("a", { href: "#/job/" + encodeURIComponent(j.cancelled_by), class: "mono", id: "job-cancelled-by" }, j.cancelled_by)) : null,
    ended ? el("span", {}, "ended " + when(j.finished_at, d.now, d.zone)) : null,
    j.status === "waiting" ? el("span", {}, "due " + when(j.run_at, d.now, d.zone)) : null,
    running ? el("span", {}, "started " + when(j.started_at, d.now, d.zone)) : null,
    j.duration !== null && !running ? el("span", {}, "took " + dur(j.duration)) : null,
    j.max_rss !== null ? el("span", {}, "peak memory " + bytes(j.max_rss)) : null,
  ];
  show(main,
    el("h1", {}, "Job ", el("span", { class: "mono" }, j.id), " ",
      el("span", { class: "status s-" + j.status, id: "job-status" }, j.status)),
    el("p", { class: "outcome", id: "job-outcome" }, outcome(j)),
    progressBar(j, "job-progress"),
    j.error !== null ? el("pre", { class: "cause", id: "job-error" }, j.error) : null,
    whyJob(d.why),
    el("p", { class: "facts" }, facts.filter((f) => f).map((f, i) => i ? [" · ", f] : f)),
    jobButtons(j),
    workflowSection(d, j),
    j.result !== null && j.result !== undefined ? [el("h2", {}, "Result"),
      el("pre", { class: "output result", id: "job-result" }, prettyJSON(j.result))] : null,
    el("h2", {}, head),
    note, out,
    attemptsSection(d),
    el("h2", {}, "Every column"),
    dl);
  if (out) out.scrollTop = follow ? out.scrollHeight : top;
}

// A job's attempts (kyu_jobs(7), "Attempts"), oldest first: how each
// ended, when, where, at what cost, and the end of its output. Nothing on
// a schema without kyu_attempts.
function attemptsSection(d) {
  const a = d.attempts;
  if (!a) return null;
  const head = el("h2", { id: "attempts" }, "Attempts");
  if (!a.rows.length) return [head, el("p", { class: "muted", id: "attempts-none" }, "None recorded.")];
  const cpu = (r) => r.cpu_user === null ? "–" : dur(Number(r.cpu_user) + Number(r.cpu_sys || 0));
  const rows = a.rows.map((r) => el("tr", { "data-attempt": r.attempt, "data-outcome": r.outcome },
    el("td", {}, text(r.attempt)),
    el("td", {}, badge(r.outcome)),
    el("td", {}, when(r.started_at, d.now, d.zone)),
    el("td", {}, dur(r.duration)),
    el("td", {}, text(endedWith(r))),
    el("td", { class: "mono" }, text(r.host), r.pid !== null ? " · " + r.pid : ""),
    el("td", {}, cpu(r)),
    el("td", {}, bytes(r.max_rss)),
    el("td", {},
      r.error !== null ? el("span", { class: "attempt-error" }, r.error) : null,
      r.output_tail !== null ? el("details", {}, el("summary", {}, "end of its output"),
        el("pre", { class: "tail" }, r.output_tail)) : null)));
  return [head,
    a.more ? el("p", { class: "muted", id: "attempts-more" }, "The newest " + a.rows.length + " are shown.") : null,
    table("attempts", ["#", "outcome", "started", "took", "ended with", "host · pid", "CPU", "peak memory", "error, output"], rows)];
}

// Why a blocked job does not start (webstuck.c): the upstream jobs it
// waits for, linked.
function whyJob(why) {
  if (!why || !why.length) return null;
  // The server's phrase ends " and N more" when it names only some.
  const more = (w) => (/ and (\d+ )?more$/.exec(w.detail) || [""])[0];
  return el("p", { class: "why-job", id: "job-why" }, why.map((w, i) => [i ? " · " : "", el("strong", {}, w.reason), ": ",
    w.waits_for ? ["waits for ", w.waits_for.map((u, k) => [k ? ", " : "", jobLink(u.id), " ", badge(u.status)]), more(w)]
      : w.detail]));
}

// A job of an upstream or downstream list: its link and status, or what
// is left of one deleted since its edge was made.
function flowJob(r) {
  if (r.id === null) return el("span", { class: "mono deleted" }, "#" + r.seq + " (deleted)");
  return [jobLink(r.id), " ", badge(r.status)];
}

function flowList(side, id, what) {
  if (!side || !side.rows.length) return el("p", { class: "muted", id: id + "-none" }, "None.");
  return [el("ul", { class: "flow", id },
    side.rows.map((r) => el("li", { "data-seq": r.seq, "data-id": r.id, "data-status": r.status }, flowJob(r)))),
    side.more ? el("p", { class: "muted", id: id + "-more" }, "and " + (side.total_capped ? "more than " : "") +
      side.more + " more " + what + " (the first " + side.rows.length + " are shown)") : null];
}

// The ids of a job's after (a JSON array), linked; the first 20.
function afterLinks(after) {
  let ids;
  try { ids = JSON.parse(after); } catch (e) { return el("span", { class: "mono" }, after); }
  if (!Array.isArray(ids)) return el("span", { class: "mono" }, after);
  return el("span", { id: "job-after" }, ids.slice(0, 20).map((x, i) => [i ? ", " : "", jobLink(String(x))]),
    ids.length > 20 ? " and " + (ids.length - 20) + " more" : "");
}

// A job's place in a workflow (kyu_jobs(7), "Workflows"): what it waits
// for and what waits for it, a page of each, and links to its graph and
// batches. Nothing on a schema without workflows, nor for a job outside
// any.
function workflowSection(d, j) {
  if (!("after_policy" in j) || !d.upstream) return null;
  const up = d.upstream, down = d.downstream;
  if (j.after === null && j.batch === null && j.after_batch === null && !up.total && !down.total &&
      j.cancelled_by === null) return null;
  const facts = [
    j.after !== null ? el("span", {}, "after ", afterLinks(j.after)) : null,
    j.after_batch !== null ? el("span", {}, "after batch ", batchLink(j.after_batch, { id: "job-after-batch" })) : null,
    j.after !== null || j.after_batch !== null ? el("span", {}, "policy " + j.after_policy +
      (j.after_policy === "succeeded" ? " (runs once they all succeeded)" : " (runs once they all ended)")) : null,
    j.batch !== null ? el("span", {}, "in batch ", batchLink(j.batch)) : null,
  ].filter((f) => f);
  return [
    el("h2", { id: "workflow" }, "Workflow"),
    facts.length ? el("p", { class: "facts" }, facts.map((f, i) => i ? [" · ", f] : f)) : null,
    el("p", {}, el("a", { href: graphHref(j.id), id: "job-graph" }, "graph of this job →")),
    el("h3", {}, "Upstream: runs after " + (up.total_capped ? "more than " : "") + up.total +
      (up.total === 1 ? " job" : " jobs")),
    flowList(up, "upstream", "upstream jobs"),
    el("h3", {}, "Downstream: " + (down.total_capped ? "more than " : "") + down.total +
      (down.total === 1 ? " job waits" : " jobs wait") + " for it"),
    flowList(down, "downstream", "downstream jobs"),
  ];
}

// ---- the graph around a job -------------------------------------------------------

// Columns for the graph: each job one level right of every job it waits
// for among those shown (the longest way from the root, where the server
// gave the shortest), upstream jobs left of the root, downstream right.
function layers(d) {
  const lv = new Map(d.nodes.map((n) => [n.seq, n.level]));
  for (let pass = 0; pass < d.nodes.length; pass++) {
    let moved = false;
    for (const e of d.edges) {
      const u = lv.get(e.up), w = lv.get(e.down);
      if (u === undefined || w === undefined) continue;
      if (w >= 0 && u >= 0 && w < u + 1 && e.down !== d.root.seq) { lv.set(e.down, u + 1); moved = true; }
      if (u <= 0 && w <= 0 && u > w - 1 && e.up !== d.root.seq) { lv.set(e.up, w - 1); moved = true; }
    }
    if (!moved) break;
  }
  return lv;
}

function cmpSeq(a, b) {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

function graphSvg(d) {
  const ns = "http://www.w3.org/2000/svg";
  const W = 180, H = 38, GX = 56, GY = 10, P = 4;
  const lv = layers(d);
  const cols = [...new Set(lv.values())].sort((a, b) => a - b);
  const pos = new Map();
  let rows = 0;
  cols.forEach((c, x) => {
    const col = d.nodes.filter((n) => lv.get(n.seq) === c).sort((a, b) => cmpSeq(a.seq, b.seq));
    col.forEach((n, y) => pos.set(n.seq, { x: P + x * (W + GX), y: P + y * (H + GY) }));
    rows = Math.max(rows, col.length);
  });
  const width = 2 * P + cols.length * W + (cols.length - 1) * GX, height = 2 * P + rows * H + (rows - 1) * GY;
  const mk = (tag, attrs, ...kids) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    for (const c of kids) e.append(c);
    return e;
  };
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const svg = mk("svg", { viewBox: "0 0 " + width + " " + height, width, height, class: "graph", role: "img",
    "aria-label": "the jobs upstream and downstream of " + d.root.id });
  svg.append(mk("defs", {}, mk("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 7,
    markerHeight: 7, orient: "auto" }, mk("path", { d: "M0,0 L8,4 L0,8 z", class: "arrow" }))));
  const states = ["open", "ok", "bad"];
  for (const e of d.edges) {
    const a = pos.get(e.up), b = pos.get(e.down);
    if (!a || !b) continue;
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
    svg.append(mk("path", { d: "M" + x1 + "," + y1 + " C" + mx + "," + y1 + " " + mx + "," + y2 + " " + x2 + "," + y2,
      class: "edge e-" + (states[e.state] || "open"), "marker-end": "url(#arrow)", "data-up": e.up, "data-down": e.down }));
  }
  for (const n of d.nodes) {
    const p = pos.get(n.seq);
    const label = n.id === null ? "#" + n.seq + " (deleted)" : n.id;
    const g = mk("g", { class: "node s-" + (n.status || "deleted") + (n.seq === d.root.seq ? " root" : ""),
      transform: "translate(" + p.x + "," + p.y + ")" },
      mk("title", {}, label + (n.status ? " · " + n.status : "") + (n.queue ? " · queue " + n.queue : "") +
        (n.batch ? " · batch " + n.batch : "")),
      mk("rect", { width: W, height: H, rx: 5 }),
      mk("text", { x: 8, y: 15, class: "id" }, clip(label, 24)),
      mk("text", { x: 8, y: 30, class: "st" }, clip((n.status || "") + (n.queue ? " · " + n.queue : ""), 30)));
    svg.append(n.id === null ? g : mk("a", { href: "#/job/" + encodeURIComponent(n.id), "data-id": n.id,
      "data-status": n.status }, g));
  }
  return svg;
}

async function pageGraph(main, id, q) {
  const d = await getJSON("/api/graph?id=" + encodeURIComponent(id) + (q.depth ? "&depth=" + encodeURIComponent(q.depth) : ""));
  const lv = layers(d);
  const up = d.nodes.filter((n) => n.level < 0).length, down = d.nodes.filter((n) => n.level > 0).length;
  const depths = [1, 2, 3, 4, 5, 6].map((n) => el("a", { href: graphHref(id) + (n === 3 ? "" : "?depth=" + n),
    class: n === d.depth ? "tab on" : "tab" }, String(n)));
  const rows = d.nodes.slice().sort((a, b) => lv.get(a.seq) - lv.get(b.seq) || cmpSeq(a.seq, b.seq)).map((n) =>
    el("tr", { "data-seq": n.seq, "data-id": n.id, class: n.seq === d.root.seq ? "picked" : null },
      el("td", { class: "num" }, n.level),
      el("td", {}, n.id === null ? el("span", { class: "mono deleted" }, "#" + n.seq + " (deleted)") : jobLink(n.id)),
      el("td", {}, n.status ? badge(n.status) : "–"),
      el("td", {}, n.queue !== null ? queueLink(n.queue, n.status === "blocked" ? "blocked" : "failed") : "–"),
      el("td", {}, n.batch !== null ? batchLink(n.batch) : "–"),
      el("td", {}, n.id !== null && n.seq !== d.root.seq ? el("a", { href: graphHref(n.id) }, "its graph") : "")));
  // A refresh keeps the reader's place in a graph larger than its box.
  const old = main.querySelector(".graph-box");
  const place = old && main.dataset.graph === id + "?" + d.depth ? [old.scrollLeft, old.scrollTop] : [0, 0];
  main.dataset.graph = id + "?" + d.depth;
  show(main,
    el("h1", {}, "Graph of job ", el("a", { href: "#/job/" + encodeURIComponent(id), class: "mono", id: "graph-job" }, id)),
    el("p", { class: "muted", id: "graph-summary" }, up + (up === 1 ? " job" : " jobs") + " upstream, " + down +
      (down === 1 ? " job" : " jobs") + " downstream, up to " + d.depth + (d.depth === 1 ? " level" : " levels") +
      " each way" + (d.truncated ? "; more than the " + d.max_nodes + " jobs a graph shows: some are left out " +
        "(each job's page lists all it waits for and all that wait for it)" : "") +
      ". Upstream on the left; an arrow goes from a job to one that waits for it: green once it succeeded, " +
      "red if it failed, was cancelled or deleted."),
    el("p", { class: "tabs" }, "levels: ", depths),
    el("div", { class: "scroll graph-box" }, graphSvg(d)),
    el("h2", {}, "Jobs"),
    table("graph", ["level", "job", "status", "queue", "batch", ""], rows));
  const box = main.querySelector(".graph-box");
  [box.scrollLeft, box.scrollTop] = place;
}

// ---- a batch -------------------------------------------------------------------

const STATUSES = ["blocked", "waiting", "running", "succeeded", "failed", "cancelled"];

async function pageBatch(main, label, q) {
  const d = await getJSON("/api/batch?label=" + encodeURIComponent(label) + (q.after ? "&after=" + encodeURIComponent(q.after) : ""));
  const base = "#/batch/" + encodeURIComponent(label);
  const open = d.counts.blocked + d.counts.waiting + d.counts.running;
  const counts = table("batch-counts", STATUSES.concat(["all"]), [el("tr", {},
    STATUSES.map((s) => el("td", { class: "num c-" + s, "data-status": s }, d.counts[s])),
    el("td", { class: "num c-all" }, (d.total_capped ? "> " : "") + d.total))]);
  const rows = d.rows.map((j) => el("tr", { "data-id": j.id, "data-status": j.status },
    el("td", {}, jobLink(j.id)),
    el("td", {}, badge(j.status)),
    el("td", {}, queueLink(j.queue, j.status)),
    el("td", { class: "num" }, j.attempts + (j.max_attempts ? " / " + j.max_attempts : "")),
    el("td", { class: "c-exit" }, text(endedWith(j))),
    el("td", { class: "err" }, text(j.error)),
    el("td", { class: "c-when" }, when(j.status === "waiting" ? j.run_at : j.finished_at !== null ? j.finished_at : j.updated_at, d.now, d.zone)),
    el("td", {}, el("a", { href: graphHref(j.id) }, "graph"))));
  const waiters = d.waiters.rows.map((j) => el("li", { "data-id": j.id, "data-status": j.status }, jobLink(j.id), " ",
    badge(j.status), " ", el("a", { href: graphHref(j.id), class: "muted" }, "graph")));
  show(main,
    el("h1", {}, "Batch ", el("span", { class: "mono", id: "batch-label" }, d.batch)),
    el("p", { class: "outcome", id: "batch-outcome" }, d.total === 0 ? "no job of this batch exists"
      : open ? open + " of " + (d.total_capped ? "more than " : "") + d.total + " jobs not ended"
        : "every job ended: " + d.counts.succeeded + " succeeded" +
          (d.counts.failed + d.counts.cancelled ? ", " + (d.counts.failed + d.counts.cancelled) + " failed or cancelled" : "")),
    counts,
    d.total_capped ? el("p", { class: "muted" }, "Counted over its first " + d.total + " jobs.") : null,
    el("h2", {}, "Jobs that wait for it (after_batch)"),
    waiters.length ? el("ul", { class: "flow", id: "batch-waiters" }, waiters) : el("p", { class: "muted", id: "batch-waiters-none" }, "None found."),
    d.waiters.more ? el("p", { class: "muted" }, "and more (the first " + waiters.length + " are shown)") : null,
    el("p", { class: "muted" }, "Found through the edges of the batch's first job: a job of after_batch " +
      "inserted before any job of the batch existed waits for none of them, and is not listed."),
    el("h2", {}, "Its jobs"),
    d.rows.length ? table("jobs batch", ["id", "status", "queue", "attempts", "ended with", "error", "when", ""], rows)
      : el("p", { class: "muted" }, "None."),
    q.after || d.next ? el("p", { class: "pager" }, q.after ? el("a", { href: base, class: "first" }, "« first") : null,
      d.next ? el("a", { href: base + "?after=" + encodeURIComponent(d.next), class: "more" }, "more →") : null) : null);
}

// A cron expression in words for its common shapes ("every day at 02:30
// Europe/Berlin", "every 5 minutes", "Monday to Friday at 08:00"); null
// for any other, which the page shows as written only.
const DOW = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const DOW_NAMES = { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 };
const MACROS = { "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *" };

function cronWords(expr, zone) {
  const f = (MACROS[String(expr).trim().toLowerCase()] || String(expr)).trim().split(/\s+/);
  if (f.length !== 5) return null;
  const [min, hour, dom, mon, dow] = f;
  const num = (v, hi) => /^\d{1,2}$/.test(v) && Number(v) <= hi;
  const day = (v) => { const u = v.toUpperCase(); return u in DOW_NAMES ? DOW_NAMES[u] : num(v, 7) ? Number(v) : null; };
  const pad = (n) => String(n).padStart(2, "0");
  const z = zone ? " " + zone : "";
  if (mon !== "*") return null;
  let days;
  if (dom === "*" && dow === "*") days = "every day";
  else if (dom === "*" && day(dow) !== null) days = "every " + DOW[day(dow)];
  else if (dom === "*" && /^[A-Za-z0-9]+-[A-Za-z0-9]+$/.test(dow) && day(dow.split("-")[0]) !== null &&
    day(dow.split("-")[1]) !== null) days = DOW[day(dow.split("-")[0])] + " to " + DOW[day(dow.split("-")[1])];
  else if (dow === "*" && num(dom, 31) && Number(dom) >= 1) days = "on day " + Number(dom) + " of every month";
  else return null;
  if (num(min, 59) && num(hour, 23)) return days + " at " + pad(hour) + ":" + pad(min) + z;
  if (days !== "every day") return null;
  if (num(min, 59) && hour === "*") return "every hour at minute " + Number(min);
  const step = /^\*\/(\d{1,2})$/.exec(min);
  if (step && hour === "*") return Number(step[1]) === 1 ? "every minute" : "every " + Number(step[1]) + " minutes";
  if (min === "*" && hour === "*") return "every minute";
  return null;
}

async function pageSchedules(main, q) {
  const arg = q.after ? "?after=" + encodeURIComponent(q.after) : q.from ? "?from=" + encodeURIComponent(q.from) : "";
  const d = await getJSON("/api/schedules" + arg);
  if (!d.exists) return show(main, el("h1", {}, "Schedules"), el("p", { class: "muted" }, "No kyu_schedules table."));
  const rows = d.rows.map((s) => el("tr", { "data-schedule": s.name, class: s.name === q.from ? "picked" : null },
    el("td", { class: "mono" }, s.name),
    el("td", { class: "c-cron" }, el("span", { class: "mono" }, s.cron),
      cronWords(s.cron, s.timezone) ? el("span", { class: "cron-words muted" }, " · " + cronWords(s.cron, s.timezone)) : null),
    el("td", {}, s.timezone),
    el("td", {}, queueLink(s.queue, "waiting")), el("td", { class: "c-enabled" }, s.enabled ? "yes" : "no"),
    el("td", { class: "c-next" }, s.enabled ? text(s.next_run) : el("span", { class: "muted" }, "– (disabled)")),
    el("td", {}, text(s.last_run)),
    el("td", {}, s.last_job ? jobLink(s.last_job) : "–"), el("td", { class: "err" }, text(s.error)),
    el("td", { class: "mono cmd" }, text(s.what)),
    el("td", {}, el("span", { class: "buttons" },
      s.enabled ? button("disable", "schedule", "disable", s.name, "Disable schedule " + s.name + "? It enqueues nothing until enabled.")
                : button("enable", "schedule", "enable", s.name),
      button("run now", "schedule", "run-now", s.name, "Enqueue a job of schedule " + s.name + " now?")))));
  show(main, el("h1", {}, "Schedules"),
    d.rows.length ? table("schedules", ["name", "cron", "zone", "queue", "enabled", "next run (UTC)",
      "last run (UTC)", "last job", "error", "command", ""], rows) : el("p", { class: "muted" }, "None."),
    d.next ? el("p", {}, el("a", { href: "#/schedules?after=" + encodeURIComponent(d.next) }, "more →")) : null);
}

async function pageLocks(main) {
  const d = await getJSON("/api/locks");
  if (!d.exists) return show(main, el("h1", {}, "Locks"), el("p", { class: "muted" }, "No kyu_locks table."));
  const rows = d.rows.map((l) => el("tr", {},
    el("td", { class: "mono" }, l.name), el("td", { class: "num" }, l.slot), el("td", {}, text(l.host)),
    el("td", { class: "num" }, text(l.pid)), el("td", {}, text(l.acquired_at)), el("td", {}, text(l.lease_left))));
  show(main, el("h1", {}, "Locks"),
    d.rows.length ? table("locks", ["name", "slot", "host", "pid", "acquired", "lease left (s)"], rows)
      : el("p", { class: "muted" }, "None."));
}

async function pageDaemons(main) {
  const d = await getJSON("/api/daemons");
  let t;
  if (d.source === "kyu_daemons") {
    // Slots, running and drain come with schema version 9 (undefined
    // before): a busy daemon is told from a wedged one by its running
    // jobs and its last refresh; a live one can be drained from here.
    const slots = d.rows.some((r) => r.slots !== undefined);
    t = table("daemons", ["host", "pid", "version", "queues"].concat(slots ? ["slots", "running", "free", "drain"] : [],
      ["wake address", "started", "last seen", "live", ""]),
      d.rows.map((r) => el("tr", {}, el("td", {}, text(r.host)), el("td", { class: "num" }, text(r.pid)),
        el("td", {}, text(r.version)), el("td", { class: "mono" }, text(r.queues === "" ? "(every queue)" : r.queues)),
        slots ? [el("td", { class: "num" }, r.slots ? r.slots : "–"), el("td", { class: "num" }, r.running),
          el("td", { class: "num" }, r.slots ? Math.max(0, r.slots - r.running) : "–"),
          el("td", {}, r.drain ? "since " + text(r.drain) + " by " + text(r.drain_by) : "no")] : [],
        el("td", {}, text(r.wake_addr)), el("td", {}, text(r.started)), el("td", {}, dur(r.seen_ago) + " ago"),
        el("td", {}, r.live ? "yes" : "no"),
        el("td", { class: "c-act" }, slots && r.live && !r.drain ? button("drain", "daemon", "drain", r.id,
          "Drain kyud " + r.host + " pid " + r.pid + "? It stops claiming, lets its running jobs finish, " +
          "then exits.") : null))));
  } else {
    t = table("daemons", ["host", "running jobs", "oldest start", "latest lease"],
      d.rows.map((r) => el("tr", {}, el("td", {}, text(r.host)), el("td", { class: "num" }, r.running),
        el("td", {}, text(r.oldest_start)), el("td", {}, text(r.last_lease)))));
  }
  show(main, el("h1", {}, "Daemons"),
    el("p", { class: "muted" }, d.source === "kyu_daemons" ? "From their registry rows (kyu_daemons), written at each " +
      "daemon's refresh; a stopped daemon removes its own. Drain: the daemon stops claiming, lets its running jobs " +
      "finish and exits 0 (as kyu drain HOST:PID)."
      : "Hosts of the running jobs (this schema has no kyu_daemons table: an idle daemon is not seen)."),
    d.rows.length ? t : el("p", { class: "muted" }, "None seen."));
}

// ---- routing -------------------------------------------------------------------

function parseHash() {
  const h = location.hash.replace(/^#\/?/, "");
  const [path, qs] = h.split("?");
  const parts = path.split("/").map(decodeURIComponent);
  const q = Object.fromEntries(new URLSearchParams(qs || ""));
  return { page: parts[0] || "overview", arg: parts.slice(1).join("/"), q };
}

async function render() {
  if (busy) { again = true; return; }
  busy = true;
  const hash = location.hash;
  const { page, arg, q } = parseHash();
  const main = document.getElementById("main");
  liveView = false;
  if (page !== "job") delete main.dataset.job;
  if (page !== "graph") delete main.dataset.graph;
  for (const a of document.querySelectorAll("#nav a"))
    a.classList.toggle("on", a.dataset.page === page ||
      (["job", "graph", "batch", "cause"].includes(page) && a.dataset.page === "jobs"));
  try {
    if (page === "overview") await pageOverview(main, q);
    else if (page === "running") await pageRunning(main, q);
    else if (page === "jobs") await pageJobs(main, q, arg || "failed");
    else if (page === "retrying") await pageJobs(main, q, "retrying");
    else if (page === "job") await pageJob(main, arg);
    else if (page === "cause") await pageCause(main, arg, q);
    else if (page === "graph") await pageGraph(main, arg, q);
    else if (page === "batch") await pageBatch(main, arg, q);
    else if (page === "schedules") await pageSchedules(main, q);
    else if (page === "locks") await pageLocks(main);
    else if (page === "daemons") await pageDaemons(main);
    else show(main, el("p", {}, "No such page."));
    document.getElementById("updated").textContent = "updated " + dbNow();
    document.body.dataset.loaded = page;
    document.body.dataset.shown = hash; // which page is on screen, for the browser test
  } catch (e) {
    show(main, el("p", { class: "bad" }, "Cannot load this page: " + e.message));
  } finally {
    busy = false;
    if (again) { again = false; render(); }
    schedule();
  }
}

function schedule() {
  clearTimeout(timer);
  // Not while the tab is hidden: a dashboard left open must not poll the
  // database all night for nobody.
  // Nor while someone types into the filter form, which a render would
  // build again under their fingers.
  timer = setTimeout(() => {
    const typing = document.activeElement && document.activeElement.closest && document.activeElement.closest("form");
    if (document.hidden || typing) schedule(); else render();
  }, liveView ? LIVE_MS : REFRESH_MS);
}

async function start() {
  try {
    const s = await getJSON("/api/session");
    session.csrf = s.csrf;
    session.readOnly = s.read_only;
    document.getElementById("who").textContent =
      s.database + (s.read_only ? " · read-only" : "") + (s.user ? " · " + s.user : "");
  } catch (e) {
    flash("Cannot start: " + e.message, true);
  }
  window.addEventListener("hashchange", render);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) render(); });
  await render();
  schedule();
}

start();
