#!/usr/bin/env bash
# A row INSERTed as running with no lease (no worker holds it) is not left
# running forever: it gets an expired lease at INSERT and is run like a
# dead worker's job.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_jobs (id, command, status) VALUES ('orphan', 'true', 'running')"
assert_eq 1 "$(sql "SELECT lease_until IS NOT NULL AND due IS NOT NULL FROM kyu_jobs WHERE id = 'orphan'")" \
	"a lease and a due time for a row inserted as running"
start_kyud
wait_for "SELECT CONCAT(status, ' ', attempts) FROM kyu_jobs WHERE id = 'orphan'" "succeeded 1" 60
stop_kyud
