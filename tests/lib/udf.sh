# shellcheck shell=bash
# The kyu_notify UDF in a test's own server (sourced by tests/lib.sh).
#
#     udf_require              # exit 77 (skipped) unless kyu_notify.so is built
#     udf_db_start TARGET [ALLOWED...]
#
# udf_db_start starts a private mariadbd (private_db_start) whose plugin
# directory holds a copy of kyu_notify.so, as an installation would, with
# kyu_notify.allow listing ALLOWED (HOST:PORT, one per line; the UDF sends
# only to 127.0.0.1:7711 and to those), then loads sql/notify.sql with
# @kyu_notify_target = TARGET ('' : the registry's addresses only).

udf_require() {
	if [ -z "${KYU_UDF:-}" ] || [ ! -f "$KYU_UDF" ]; then
		echo "SKIP: kyu_notify.so not built (KYU_UDF unset)"
		exit 77
	fi
}

udf_db_start() {
	local target=$1
	shift
	mkdir -p "$T_DIR/plugin"
	cp "$KYU_UDF" "$T_DIR/plugin/kyu_notify.so"
	[ $# -eq 0 ] || printf '%s\n' "$@" >"$T_DIR/plugin/kyu_notify.allow"
	export KYU_PLUGIN_DIR=$T_DIR/plugin
	private_db_start # from here on sql and start_kyud use it
	{ echo "SET @kyu_notify_target = '$target';"; cat "$KYU_SRC/sql/notify.sql"; } |
		root_sql -D "$T_DB" || fail "sql/notify.sql failed"
}
