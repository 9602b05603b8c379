#!/usr/bin/env bash
# Fault suite (issue 12), scenario 3 (a, b): with two kyud running jobs, the
# database (a) restarts cleanly, (b) is killed with kill -9 and restarted.
# Everything finishes, nothing is lost or runs twice at once, kyud never
# crashes, each worker logs each outage once. See tests/chaos/db_faults.sh.
DB_FAULTS="a b"
. "$KYU_SRC/tests/chaos/db_faults.sh"
