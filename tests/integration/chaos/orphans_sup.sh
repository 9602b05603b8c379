#!/usr/bin/env bash
# Issue 44, item 1: kyud's own processes SIGKILLed must never leave a job
# running beside its next attempt. Here the supervisor alone (an OOM kill):
# its worker, orphaned, still renews its jobs' leases, interrupts them
# after shutdown_grace and exits; the restarted kyud runs them again.
# The scenario and the verdict: tests/chaos/orphans.sh.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"
. "$KYU_SRC/tests/chaos/orphans.sh"

orphans_run sup
