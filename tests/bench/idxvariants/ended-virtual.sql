-- An idxcost.sh variant (docs/benchmarks.md, "Two indexes on the status"): measured only, no schema step.
ALTER TABLE kyu_jobs DROP INDEX IF EXISTS kyu_jobs_queue_status, ALGORITHM = INPLACE, LOCK = NONE;
ALTER TABLE kyu_jobs
  ADD COLUMN IF NOT EXISTS ended_status ENUM('succeeded','failed','cancelled')
    AS (IF(status IN ('succeeded','failed','cancelled'), status, NULL)) VIRTUAL,
  ADD COLUMN IF NOT EXISTS ended_at DATETIME(6)
    AS (IF(status IN ('succeeded','failed','cancelled'), updated_at, NULL)) VIRTUAL,
  ALGORITHM = INSTANT;
ALTER TABLE kyu_jobs DROP INDEX IF EXISTS kyu_jobs_finished,
  ADD KEY IF NOT EXISTS kyu_jobs_ended (ended_status, ended_at), ALGORITHM = INPLACE, LOCK = NONE;
