# shellcheck shell=bash
# Workflow tests' helpers (tests/integration/after/), sourced by those
# tests after tests/lib.sh.

# early_starts: edges whose dependent started (started_at) before its
# upstream finished (finished_at), by the database clock, as
# "DOWN after UP: N ms early;" (empty when none).
early_starts() {
	sql "SELECT CONCAT(d.id, ' after ', u.id, ': ', IFNULL(ROUND(TIMESTAMPDIFF(MICROSECOND, d.started_at,
	            u.finished_at) / 1000, 1), '?'), ' ms early') FROM kyu_after AS e
	     JOIN kyu_jobs AS d ON d.seq = e.down_seq JOIN kyu_jobs AS u ON u.seq = e.up_seq
	     WHERE d.started_at IS NULL OR u.finished_at IS NULL OR d.started_at < u.finished_at LIMIT 10" | tr '\n' ';'
}
