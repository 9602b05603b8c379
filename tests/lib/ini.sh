# shellcheck shell=bash
# The configuration file of a test's kyud (and of kyu, kyu web): the test
# defaults (the shared server, small timings, no wake-up port) with the
# test's overrides.

# write_ini FILE [section.key=value ...]: the test defaults with overrides.
# Small timings keep tests short; listen is off so parallel tests never
# compete for a UDP port (a test that wants it passes kyud.listen=...).
# The value @default leaves the key out, so that kyud uses its own default
# (kyud.lease=@default: what conf/kyu.ini ships, not the tests' 6 s).
write_ini() {
	local file=$1 kv key section i
	shift
	local -a keys=() vals=()
	set_key() {
		local i
		for i in "${!keys[@]}"; do
			if [ "${keys[$i]}" = "$1" ]; then vals[i]=$2; return; fi
		done
		keys+=("$1"); vals+=("$2")
	}
	set_key database.socket "$KYU_DB_SOCKET"
	set_key database.user kyu
	set_key database.password kyu
	set_key database.database "$T_DB"
	set_key kyud.workers 2
	set_key kyud.lease 6
	set_key kyud.poll_interval 1
	set_key kyud.listen ""
	# No watcher (kyud(8), "Wake-ups and polling") unless a test asks for
	# it: the tests of the claim loop count its claims, statements and
	# connections, and find jobs by the 1 s poll above; the watcher's own
	# tests (wake/watch_*) turn it on.
	set_key kyud.wake_binlog off
	set_key kyud.wake_poll 0
	set_key kyud.shutdown_grace 10
	set_key kyud.log_level debug
	# Tests run as root in CI: kyud refuses to run jobs as root unless a
	# section says so (a test of that rule passes queue.*.user= to drop it).
	[ "$(id -u)" != 0 ] || set_key 'queue.*.user' root
	for kv in "$@"; do
		key=${kv%%=*}
		key=${key%"${key##*[![:space:]]}"}
		kv=${kv#*=}
		set_key "$key" "${kv#"${kv%%[![:space:]]*}"}"
	done
	# A key's section is what comes before its last dot ("queue.mail.user"
	# is user in [queue.mail]); an empty value drops the key.
	local -a sections=(database kyud job)
	for i in "${!keys[@]}"; do
		section=${keys[$i]%.*}
		[[ " ${sections[*]} " == *" $section "* ]] || sections+=("$section")
	done
	{
		for section in "${sections[@]}"; do
			echo "[$section]"
			for i in "${!keys[@]}"; do
				[ "${keys[$i]%.*}" = "$section" ] || continue
				case $section in queue.*) [ -n "${vals[$i]}" ] || continue ;; esac
				[ "${vals[$i]}" != @default ] || continue
				echo "${keys[$i]##*.} = ${vals[$i]}"
			done
			echo
		done
	} >"$file"
	# It holds the database password: kyud, kyu and kyu web refuse a file
	# every local user may read (kyu.ini(5)).
	chmod 0600 "$file"
}
