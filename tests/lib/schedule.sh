# shellcheck shell=bash
# Schedules: the instants a schedule enqueued jobs for, read from the ids
# (cron:NAME:<instant>) of kyu_jobs, and that they leave no gap.

# cron_instants NAME [AFTER]: the instants (seconds since the epoch, UTC) of
# the jobs schedule NAME enqueued (ids cron:NAME:<instant>), in order; with
# AFTER, only the later ones. run-now jobs (cron:NAME:now:...) are left out.
cron_instants() {
	sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', STR_TO_DATE(RIGHT(id, 20), '%Y-%m-%dT%H:%i:%sZ')) AS t
		FROM kyu_jobs WHERE id LIKE 'cron:$1:2%' HAVING t > ${2:--1} ORDER BY t"
}

# assert_cron_contiguous NAME [WHAT]: NAME's instants run from the first to
# the last without a gap; sets CRON_N, CRON_FIRST, CRON_LAST.
assert_cron_contiguous() {
	local all
	all=$(cron_instants "$1")
	CRON_N=$(echo "$all" | grep -c . || true)
	CRON_FIRST=$(echo "$all" | sed -n 1p)
	CRON_LAST=$(echo "$all" | tail -n 1)
	[ "$CRON_N" -gt 0 ] || fail "schedule $1 enqueued no job"
	assert_eq $((CRON_LAST - CRON_FIRST + 1)) "$CRON_N" \
		"${2:-$1}: instants from the first ($CRON_FIRST) to the last ($CRON_LAST), no gap"
}
