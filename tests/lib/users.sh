# shellcheck shell=bash
# The system accounts the protection-domain tests (queue/domain*.sh) run
# jobs as.

# ensure_test_users: the accounts the protection-domain tests run jobs as,
# created once per machine (root only: otherwise the test is skipped, 77).
#   kyut_a    (home /var/tmp/kyut_a, also in group kyut_extra)
#   kyut_b    (home /nonexistent)
#   kyut_c    (home /nonexistent; only queue/domain_config.sh runs jobs as
#             it, so that it can count that user's processes)
#   group kyut_extra
# Tests running at once may race to create them: losing is fine.
ensure_test_users() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $T_NAME: needs root to create test users and switch to them"
		exit 77
	fi
	getent group kyut_extra >/dev/null || groupadd --system kyut_extra 2>/dev/null ||
		getent group kyut_extra >/dev/null || fail "cannot create group kyut_extra"
	id -u kyut_a >/dev/null 2>&1 || useradd --system --home-dir /var/tmp/kyut_a --no-create-home \
		--shell /bin/sh --groups kyut_extra kyut_a 2>/dev/null || id -u kyut_a >/dev/null ||
		fail "cannot create user kyut_a"
	id -u kyut_b >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin kyut_b 2>/dev/null || id -u kyut_b >/dev/null ||
		fail "cannot create user kyut_b"
	id -u kyut_c >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin kyut_c 2>/dev/null || id -u kyut_c >/dev/null ||
		fail "cannot create user kyut_c"
	mkdir -p /var/tmp/kyut_a
	chown kyut_a: /var/tmp/kyut_a
	chmod 0700 /var/tmp/kyut_a
}
