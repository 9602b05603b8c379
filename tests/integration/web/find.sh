#!/usr/bin/env bash
# kyu web's job lists filtered (/api/jobs and /api/retrying with queue,
# since, until and q): every filter's pages, walked older to the end and
# then newer back to the first, hold exactly the rows the same filter
# finds in SQL, in the list's order, each once -- also where a search
# reads more rows than one window (WEBFIND_SCAN) and pages end at the
# window rather than at 50 rows; totals are counted up to the cap; a
# search's % and _ are literal; bad values are refused with 400.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL

# 12000 failed jobs over three queues, one second apart, and 40 more at one
# instant (equal updated_at: the keyset's seq decides); a needle in the
# output of one in a thousand, "50%" in the error of a few.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, exit_code, error, output, finished_at, updated_at)
     SELECT CONCAT('f-', seq), ELT(1 + seq % 3, 'q1', 'q2', 'q3'), CONCAT('run ', seq), 'failed', 1, 1,
            IF(seq % 2500 = 0, 'disk 50% full', CONCAT('exited ', seq)),
            IF(seq % 1000 = 7, 'x\nneedle here', 'plain'), NOW(6),
            '2026-01-01 00:00:00' + INTERVAL seq SECOND FROM seq_1_to_12000"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at, updated_at)
     SELECT CONCAT('g-', seq), 'q1', 'true', 'failed', 1, 'exited 500 full', NOW(6), '2026-01-01 01:00:00'
     FROM seq_1_to_40"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at)
     SELECT CONCAT('r-', seq), ELT(1 + seq % 2, 'q1', 'q2'), 'true', 'waiting', IF(seq % 3 = 0, 0, 1),
            'exited 1', NOW(6) + INTERVAL 1 HOUR FROM seq_1_to_30"

cat >"$T_DIR/walk.py" <<'PY'
import json, sys, urllib.parse, urllib.request
base, path = sys.argv[1], sys.argv[2]
def get(extra):
    with urllib.request.urlopen(base + path + extra) as r:
        return json.load(r)
pages, d, extra = [], None, ""
while True:
    d = get(extra)
    pages.append([r["id"] for r in d["rows"]])
    assert len(pages) < 1000, "more than 1000 pages"
    if not d["next"]:
        break
    extra = "&before=" + urllib.parse.quote(d["next"])
older = [i for p in pages for i in p]
# Back from the last page to the first by "newer": the same pages.
back = []
while d["newer"]:
    d = get("&after=" + urllib.parse.quote(d["newer"]))
    back = [r["id"] for r in d["rows"]] + back
    assert len(back) <= len(older), "newer pages past the first"
tail = [i for p in pages[-1:] for i in p]
print(json.dumps({"ids": older, "pages": len(pages), "back_ok": back + tail == older,
                  "total": get("").get("total")}))
PY
# check NAME PATH SQL_WHERE ORDER: the pages of PATH against the rows SQL finds.
check() {
	local name=$1 path=$2 where=$3 order=$4 got want
	got=$(python3 "$T_DIR/walk.py" "$u" "$path") || fail "$name: walking the pages failed"
	want=$(sql "SELECT id FROM kyu_jobs WHERE $where ORDER BY $order" | tr '\n' ' ' | sed 's/ $//')
	assert_eq "$want" "$(python3 -c 'import json, sys; print(" ".join(json.loads(sys.argv[1])["ids"]))' "$got")" "$name: the rows"
	assert_eq True "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["back_ok"])' "$got")" "$name: newer pages back to the first"
	echo "$got" >"$T_DIR/last"
}
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T_DIR/last" "$1"; }

check "failed" "/api/jobs?status=failed" "status = 'failed'" "updated_at DESC, seq DESC"
assert_eq "10000" "$(field total)" "the total, capped"
check "queue q2" "/api/jobs?status=failed&queue=q2" "status = 'failed' AND queue = 'q2'" "seq DESC"
assert_eq "4000" "$(field total)" "queue q2's total"
check "a time range" "/api/jobs?status=failed&since=2026-01-01T00:10&until=2026-01-01%2001:00:00" \
	"status = 'failed' AND updated_at >= '2026-01-01 00:10' AND updated_at < '2026-01-01 01:00:00'" "updated_at DESC, seq DESC"
assert_eq "3000" "$(field total)" "the time range's total"
check "queue and time" "/api/jobs?status=failed&queue=q1&since=2026-01-01%2001:00" \
	"status = 'failed' AND queue = 'q1' AND updated_at >= '2026-01-01 01:00'" "seq DESC"
check "search the output" "/api/jobs?status=failed&q=needle" "status = 'failed' AND output LIKE '%needle%'" "updated_at DESC, seq DESC"
assert_eq "12" "$(python3 -c 'import json; print(len(json.load(open("'"$T_DIR/last"'"))["ids"]))')" "needles found"
[ "$(field pages)" -ge 3 ] || fail "a search over 12040 rows took $(field pages) pages, not one per window"
check "search, LIKE's signs literal" "/api/jobs?status=failed&q=50%25" "status = 'failed' AND error LIKE '%50\\%%'" "updated_at DESC, seq DESC"
check "search an id" "/api/jobs?status=failed&q=f-1199" "status = 'failed' AND (id LIKE '%f-1199%' OR command LIKE '%f-1199%')" "updated_at DESC, seq DESC"
check "retrying" "/api/retrying?queue=q1" "status = 'waiting' AND attempts > 0 AND queue = 'q1'" "seq DESC"
check "retrying, searched" "/api/retrying?q=exited" "status = 'waiting' AND attempts > 0" "updated_at DESC, seq DESC"

assert_eq "400" "$(webq "$u/api/jobs?status=failed&since=yesterday")" "a since that is not a time"
assert_eq "400" "$(webq "$u/api/jobs?status=failed&until=2026-01-01';DROP")" "an until that is not a time"
assert_eq "400" "$(webq "$u/api/jobs?status=failed&queue=")" "an empty queue"
assert_eq "400" "$(webq "$u/api/jobs?status=failed&queue=q1&before=2026-01-01,5")" "a time cursor on a queue's list"
assert_eq "400" "$(webq "$u/api/jobs?status=failed&before=5&after=6")" "two cursors"
assert_eq "200 0" "$(webq "$u/api/jobs?status=failed&queue=nobody" "len(d['rows'])")" "a queue without jobs"
stop_web
