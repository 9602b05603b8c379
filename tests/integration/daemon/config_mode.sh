#!/usr/bin/env bash
# A configuration file that holds [database] password and that every local
# user may read is refused, naming the file, its mode and the fix: by kyud
# (--check-config, a start, a reload, which keeps the old configuration),
# kyu and kyu web. Readable by its group (root:kyu 0640) it is accepted,
# and so is a world-readable file without a password. kyud's supervisor and
# kyu-web, which hold the password, are not dumpable: no core dump, and no
# other process of their user can ptrace them or read their memory, which
# shows as /proc/PID/environ owned by root.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
ensure_test_users

write_ini "$T_DIR/kyu.ini" kyud.workers=1
refusal="holds [database] password, but its mode 0644 lets every local user read it: refused. Make it private: chmod 600 $T_DIR/kyu.ini, or chmod 640"

# ---- kyud: --check-config and a start, exit 78 (systemd does not retry).
chmod 0644 "$T_DIR/kyu.ini"
assert_config_refused "$T_DIR/kyu.ini" - "$refusal"
chmod 0604 "$T_DIR/kyu.ini"
assert_config_refused "$T_DIR/kyu.ini" - "holds [database] password, but its mode 0604 lets every local user read it"

# ---- kyu and kyu web: the same refusal, exit 78.
chmod 0644 "$T_DIR/kyu.ini"
for cmd in "list" "web --listen 127.0.0.1:$(free_tcp_port)"; do
	rc=0
	# shellcheck disable=SC2086 # the command's words
	timeout 20 "$KYU" -c "$T_DIR/kyu.ini" $cmd >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 78 "$rc" "exit status of kyu $cmd with a world-readable password ($(cat "$T_DIR/err"))"
	grep -qF -- "$T_DIR/kyu.ini: $refusal" "$T_DIR/err" || fail "kyu $cmd: stderr lacks the refusal: $(cat "$T_DIR/err")"
done

# ---- accepted: group-readable, private, or no password at all.
for mode in 0640 0600; do
	chmod "$mode" "$T_DIR/kyu.ini"
	"$KYUD" -c "$T_DIR/kyu.ini" --check-config >"$T_DIR/out" 2>&1 || fail "kyud --check-config, mode $mode: $(cat "$T_DIR/out")"
done
write_ini "$T_DIR/nopw.ini" database.password= kyud.workers=1
chmod 0644 "$T_DIR/nopw.ini"
"$KYUD" -c "$T_DIR/nopw.ini" --check-config >"$T_DIR/out" 2>&1 || fail "kyud --check-config, no password, 0644: $(cat "$T_DIR/out")"

# ---- a reload of a file made world-readable fails and keeps the old one.
start_kyud kyud.workers=1
chmod 0644 "$KYUD_INI"
assert_eq "kyud[sup]: reload failed, keeping old config: $KYUD_INI: holds [database] password, but its mode 0644 lets every local user read it: refused. Make it private: chmod 600 $KYUD_INI, or chmod 640 and give it to the group that runs kyud (chown root:kyu)" \
	"$(hup_verdict)" "reload verdict for a world-readable file"
chmod 0600 "$KYUD_INI"
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(hup_verdict)" "reload verdict once private again"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('after', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'after'" succeeded 30
stop_kyud

# ---- not dumpable. As a user of its own (root passes every check): the
# /proc files that need ptrace access belong to root, not to the process's
# user, for kyud's supervisor and kyu-web; a worker (exec'd anew, and
# whose jobs reach its pipe through /proc) stays the user's. The kyu-web
# probe starts it on a port nothing answers and stops it.
dir=$(mktemp -d /tmp/kyu-test-dumpable.XXXXXX)
EXIT_HOOKS+=("rm -rf '$dir'")
chmod 0755 "$dir"
# Over TCP: the shared server's socket directory is root's.
write_ini "$dir/kyu.ini" database.socket= database.host=127.0.0.1 database.port="$KYU_DB_PORT" \
	kyud.workers=1 'queue.*.user=' "web.listen=127.0.0.1:$(free_tcp_port)" web.open_to_local_users=yes
chown kyut_b: "$dir/kyu.ini"
# kyud starts its workers from its own path, and kyu web kyu-web from its
# own directory: the build directory may be closed to other users (a clone
# in a mktemp -d directory is 0700), so the programs run from a copy here.
for p in "$KYUD" "$KYU" "$KYU_WEB"; do install -m 0755 "$p" "$dir/"; done
b_kyud=$dir/$(basename "$KYUD") b_kyu=$dir/$(basename "$KYU")
# A command, not a function: $! must be the program's own pid.
as_b=(setpriv --reuid=kyut_b --regid="$(id -g kyut_b)" --clear-groups --inh-caps=-all)
# owner_of PID: the owner of /proc/PID/environ once the process has run past
# its start (the prctl comes before the configuration is read).
owner_of() { stat -c %U "/proc/$1/environ"; }

"${as_b[@]}" "$b_kyud" -c "$dir/kyu.ini" 2>>"$T_DIR/b-kyud.log" &
b_sup=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $b_sup"
wait_until 60 "kyud as kyut_b to be ready" grep -q 'kyud\[sup\]: ready:' "$T_DIR/b-kyud.log"
assert_eq root "$(owner_of "$b_sup")" "owner of kyud's supervisor's /proc/PID/environ"
w=$(pgrep -P "$b_sup" -f -- '--worker' | head -n 1)
[ -n "$w" ] || fail "no worker under kyud as kyut_b"
assert_eq kyut_b "$(owner_of "$w")" "owner of a worker's /proc/PID/environ"
kill -TERM "$b_sup"
wait "$b_sup" || fail "kyud as kyut_b exited with status $?: $(cat "$T_DIR/b-kyud.log")"

"${as_b[@]}" "$b_kyu" -c "$dir/kyu.ini" web 2>>"$T_DIR/b-web.log" &
b_web=$!
EXTRA_PIDS="${EXTRA_PIDS:-} $b_web"
wait_until 20 "kyu web as kyut_b to serve" grep -q 'serving the dashboard' "$T_DIR/b-web.log"
assert_eq root "$(owner_of "$b_web")" "owner of kyu-web's /proc/PID/environ"
kill -TERM "$b_web"
wait "$b_web" || true
