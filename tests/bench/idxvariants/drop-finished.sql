-- An idxcost.sh variant (docs/benchmarks.md, "Two indexes on the status"): measured only, no schema step.
ALTER TABLE kyu_jobs DROP INDEX IF EXISTS kyu_jobs_finished, ALGORITHM = INPLACE, LOCK = NONE;
