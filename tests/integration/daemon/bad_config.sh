#!/usr/bin/env bash
# A bad config (unknown key, unknown section, bad number) is refused with
# FILE:LINE: [section] key = 'value': reason on stderr and exit 78
# (EX_CONFIG), by --check-config and by a plain start alike.
. "$KYU_SRC/tests/lib.sh"

# bad_ini NAME LINE...: a config with a valid [database] section (lines
# 1-5) followed by the given lines; prints its path.
bad_ini() {
	local f=$T_DIR/$1.ini
	shift
	printf '%s\n' "[database]" "socket = $KYU_DB_SOCKET" "user = kyu" "password = kyu" \
		"database = $T_DB" "$@" >"$f"
	# kyud as root refuses to run jobs as root unless a section says so.
	[ "$(id -u)" != 0 ] || printf '%s\n' "[queue.*]" "user = root" >>"$f"
	# It holds the password: private, or kyud refuses it.
	chmod 0600 "$f"
	echo "$f"
}


# The control: the same file without the bad line is accepted.
good=$(bad_ini good "[kyud]" "workers = 1" "lease = 12")
rc=0
"$KYUD" -c "$good" --check-config 2>"$T_DIR/err" || rc=$?
assert_eq 0 "$rc" "--check-config of a good file (stderr: $(cat "$T_DIR/err"))"

ini=$(bad_ini unknown-key "[kyud]" "workers = 1" "no_such_key = 1")
assert_config_refused "$ini" 8 "[kyud] no_such_key = '1': "

ini=$(bad_ini bad-number "[kyud]" "workers = 1" "lease = 12x")
assert_config_refused "$ini" 8 "[kyud] lease = '12x': "

ini=$(bad_ini bad-workers "[kyud]" "workers = abc")
assert_config_refused "$ini" 7 "[kyud] workers = 'abc': "

ini=$(bad_ini unknown-section "[kyud]" "workers = 1" "[nosuch]" "foo = 1")
assert_config_refused "$ini" 9 "[nosuch] foo = '1': "

ini=$(bad_ini database-key "[kyud]" "workers = 1" "[database]" "hostname = db1")
assert_config_refused "$ini" 9 "[database] hostname = 'db1': "

ini=$(bad_ini short-lease "[kyud]" "workers = 1" "lease = 2")
assert_config_refused "$ini" 8 "[kyud] lease = '2': too short for self-fencing"

# A listen address that parses but cannot be bound (not an address of this
# host) passes --check-config, and then the start exits 78 too, naming it:
# systemd does not restart it in a loop.
ini=$(bad_ini unbindable "[kyud]" "workers = 1" "listen = 192.0.2.1:7711")
rc=0
timeout 20 "$KYUD" -c "$ini" 2>"$T_DIR/err" >/dev/null || rc=$?
cat "$T_DIR/err" >>"$KYUD_LOG"
assert_eq 78 "$rc" "exit status of kyud with an unbindable listen address"
grep -qF "[kyud] listen = '192.0.2.1:7711' in $ini cannot be used" "$T_DIR/err" ||
	fail "kyud did not name the listen address: $(cat "$T_DIR/err")"

# A directory is not a config file.
rc=0
"$KYUD" -c "$T_DIR" --check-config 2>"$T_DIR/err" >/dev/null || rc=$?
assert_eq 78 "$rc" "exit status of kyud -c DIRECTORY --check-config"
grep -qF "is a directory" "$T_DIR/err" || fail "kyud -c DIRECTORY: $(cat "$T_DIR/err")"

# Nor is a FIFO: with no writer, opening it used to block kyud
# --check-config, kyud and kyu for ever (issue 25, item 11). The timeout
# only turns a hang into a failure.
mkfifo "$T_DIR/fifo.ini"
assert_config_refused "$T_DIR/fifo.ini" - "is a FIFO, not a regular file"
if [ -x "${KYU:-}" ]; then
	rc=0
	timeout 20 "$KYU" -c "$T_DIR/fifo.ini" list 2>"$T_DIR/err" >/dev/null || rc=$?
	assert_eq 78 "$rc" "exit status of kyu -c FIFO list ($(cat "$T_DIR/err"))"
	grep -qF "kyu: $T_DIR/fifo.ini: is a FIFO, not a regular file" "$T_DIR/err" ||
		fail "kyu -c FIFO: $(cat "$T_DIR/err")"
fi
# A section line that inih would read as another section (issue 25, item 12).
ini=$(bad_ini trailing "[kyud]" "workers = 1" "[queue.a]b]" "user = nobody")
assert_config_refused "$ini" 8 "text after the section name's closing ']'"
