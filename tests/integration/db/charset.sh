#!/usr/bin/env bash
# A server that imposes its own character set on the session: with
# skip-character-set-client-handshake and a gbk default, or an init_connect
# that runs SET NAMES sjis for the (non-SUPER) kyu user. In such a charset a
# byte that begins a two-byte character swallows the backslash that escapes
# the quote after it, and the sessions run multi-statements: a job's last
# line, a search, or the dashboard's ?q= would be SQL. Every kyu session
# runs in utf8mb4 whatever the server says (kyu.ini(5), [database]), so:
# (a) a job whose output and error text hold such bytes and then SQL is
# recorded byte for byte and nothing else happens; (b) kyu list --search
# and GET /api/jobs?q= with them find what matches literally, not every
# job; (c) text outside the server's charset (an emoji) reaches the job and
# comes back from kyu and kyu web intact.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }

# The test's own statements in utf8mb4 too: root's session would be gbk
# on the first server (root has SUPER: init_connect skips it).
sql() { root_sql --init-command='SET NAMES utf8mb4' -N -B -D "$T_DB" -e "$1"; }
# The bytes in hex, as HEX() prints them.
hex() { od -An -v -tx1 | tr -d ' \n' | tr a-f A-F; }

# The database in utf8mb4, as an operator creates it (README, quick start):
# the server's default here is gbk. Loaded as utf8mb4 whatever the root
# client's session is (the schema's comments are UTF-8).
fresh_db() {
	root_sql -e "DROP DATABASE IF EXISTS $T_DB; CREATE DATABASE $T_DB CHARACTER SET utf8mb4"
	root_sql --init-command='SET NAMES utf8mb4' -D "$T_DB" <"$KYU_SRC/sql/schema.sql"
}

# ぃ (U+3043, E3 81 83): in gbk and sjis, E3 81 is one character and 83
# begins the next, whose second byte would be the escaping backslash. \277
# (0xBF, not UTF-8) does the same in gbk.
printf '\343\201\203' >"$T_DIR/kana"
kana=$(cat "$T_DIR/kana")
# The job's last line: the kana and quote, then a statement and a comment
# that would swallow the rest of the result statement.
cat >"$T_DIR/evil.sh" <<-'EOF'
	printf 'begin\n'
	printf '%s'"'"'; INSERT INTO kyu_jobs (id, command) VALUES (0x70776e6564, 0x74727565); #\n' "$1"
	exit 3
EOF
chmod 0644 "$T_DIR/evil.sh"
evil_line() { printf '%s'"'"'; INSERT INTO kyu_jobs (id, command) VALUES (0x70776e6564, 0x74727565); #' "$1"; }

# attack TAG: the three checks against the server as it is now configured.
attack() {
	local tag=$1 out err
	# A bystander not due for a day: no statement of ours may touch it.
	sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('$tag-bystander', 'true', NOW(6) + INTERVAL 1 DAY)"
	sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES
	     ('$tag-kana', CONCAT('sh $T_DIR/evil.sh ', CONVERT(X'$(hex <"$T_DIR/kana")' USING utf8mb4)), 1),
	     ('$tag-raw', 'sh $T_DIR/evil.sh \"\$(printf \"\\\\277\")\"', 1),
	     (CONVERT(X'$(printf '%s-\360\237\230\200' "$tag" | hex)' USING utf8mb4),
	      CONVERT(X'$(printf 'printf "%%s\\n" \360\237\230\200%s' "$kana" | hex)' USING utf8mb4), 1)"
	# (Not id LIKE 'tag-%': MariaDB's range on a utf8mb4_bin index ends
	# below the emoji, U+1F600.)
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE LOCATE('$tag-', id) = 1 AND status IN ('succeeded', 'failed')" 3 60

	# (a) Byte for byte: the output as written; the error as kyu_jobs(7)
	# says, the last line after the exit code (the raw byte, not UTF-8,
	# made '?').
	out=$(printf 'begin\n%s\n' "$(evil_line "$kana")" | hex)
	err=$(printf 'exit code 3: %s' "$(evil_line "$kana")" | hex)
	assert_eq "failed	3	$out	$err" \
		"$(sql "SELECT status, exit_code, HEX(output), HEX(error) FROM kyu_jobs WHERE id = '$tag-kana'")" \
		"$tag: the kana job's status, exit code, output and error"
	out=$(printf 'begin\n%s\n' "$(evil_line $'\277')" | hex)
	err=$(printf 'exit code 3: %s' "$(evil_line '?')" | hex)
	assert_eq "failed	3	$out	$err" \
		"$(sql "SELECT status, exit_code, HEX(output), HEX(error) FROM kyu_jobs WHERE id = '$tag-raw'")" \
		"$tag: the raw job's status, exit code, output and error"
	# (c) The emoji reached the job (its command) and came back.
	assert_eq "succeeded	$(printf '\360\237\230\200%s\n' "$kana" | hex)" \
		"$(sql "SELECT status, HEX(output) FROM kyu_jobs WHERE LOCATE('$tag-', id) = 1 AND id NOT IN ('$tag-kana', '$tag-raw', '$tag-bystander')")" \
		"$tag: the emoji job's status and output"
	# Nothing else happened: no job queued by the text, the bystander as
	# it was.
	assert_eq "0" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'pwned' OR command = 'true' AND id NOT LIKE '%-bystander'")" \
		"$tag: jobs queued by a job's text"
	assert_eq "waiting	0	NULL	NULL" \
		"$(sql "SELECT status, attempts, IFNULL(error, 'NULL'), IFNULL(exit_code, 'NULL') FROM kyu_jobs WHERE id = '$tag-bystander'")" \
		"$tag: the bystander"

	# (b) kyu list --search: what matches literally. The first would close
	# the LIKE and its parenthesis, then OR 1=1, had the quote escaped.
	assert_eq "" "$(kyu_ids --search "$kana' OR 1=1) #")" "$tag: kyu list --search with a kana and quote, OR 1=1"
	assert_eq "$tag-kana" "$(kyu_ids --search "$kana'; INSERT")" "$tag: kyu list --search of the kana job's line"
	assert_eq "$tag-raw" "$(kyu_ids --search $'\277\'; INSERT')" "$tag: kyu list --search of the raw job's line"
	assert_eq "$(printf '%s-\360\237\230\200' "$tag")" "$(kyu_ids --search $'\360\237\230\200')" \
		"$tag: kyu list --search of an emoji"
	# The dashboard's search, the same way.
	assert_eq "200 " "$(web_ids failed "$kana' OR 1=1) #")" \
		"$tag: GET /api/jobs?q= with a kana and quote, OR 1=1"
	assert_eq "200 $tag-kana" "$(web_ids failed "$kana'; INSERT")" \
		"$tag: GET /api/jobs?q= of the kana job's line"
	assert_eq "200 $(printf '%s-\360\237\230\200' "$tag")" "$(web_ids succeeded $'\360\237\230\200')" \
		"$tag: GET /api/jobs?q= of an emoji"
	assert_eq "0" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'cancelled'")" "$tag: jobs cancelled"
}

# web_ids STATUS QUERY: the HTTP status and the sorted ids that GET
# /api/jobs?status=STATUS&q=QUERY finds (or its body, when it has no rows).
web_ids() {
	webq "$WEB_URL/api/jobs?status=$1&q=$(urlq "$2")" \
		"' '.join(sorted(r['id'] for r in d['rows'])) if isinstance(d, dict) and 'rows' in d else body"
}
urlq() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1].encode("utf-8", "surrogateescape")))' "$1"; }
kyu_ids() {
	"$KYU" -c "$T_DIR/kyu.ini" --raw list -n 100 "$@" 2>"$T_DIR/err" | awk 'NR > 1 {print $1}' | sort | tr '\n' ' ' | sed 's/ $//'
}

# ---- the server ignores the client's charset and imposes gbk.
private_db_start --skip-character-set-client-handshake --character-set-server=gbk
fresh_db
# shellcheck source=tests/lib/web.sh
. "$KYU_SRC/tests/lib/web.sh"
write_ini "$T_DIR/kyu.ini"
start_kyud kyud.workers=1
start_web "$(free_tcp_port)"
attack gbk
stop_web
stop_kyud

# ---- the server's init_connect sets the session's charset (the kyu user
# has no SUPER, so it runs for every kyu session).
private_db_stop
private_db_start "--init-connect=SET NAMES sjis"
assert_eq "SET NAMES sjis" "$(root_sql -N -e 'SELECT @@init_connect')" "init_connect"
fresh_db
start_kyud kyud.workers=1
start_web "$(free_tcp_port)"
attack sjis
stop_web
stop_kyud
