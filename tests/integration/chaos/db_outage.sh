#!/usr/bin/env bash
# Fault suite (issue 12), scenario 3 (c, d): with two kyud running jobs, the
# database (c) is stopped for longer than a lease, (d) is frozen with SIGSTOP
# for longer than a lease. Running jobs are fenced before their lease
# expires; then everything finishes, nothing is lost or runs twice at once,
# kyud never crashes, each worker logs each outage once. See
# tests/chaos/db_faults.sh.
DB_FAULTS="c d"
. "$KYU_SRC/tests/chaos/db_faults.sh"
