-- SPDX-License-Identifier: MIT
-- argusd store, version 3: retention. Finished jobs are deleted by age and by
-- count (retention_days, max_jobs; their trace steps, probes and vectors go
-- with them by ON DELETE CASCADE), and each job's trace is capped
-- (trace_max_bytes).

-- How much of each job's trace is stored, so that the cap is checked without
-- reading the steps back. bytes: the JSON text of the stored steps. Once a
-- step did not fit, cut_seq is the seq of the "trace_cut" step, the trace's
-- last, which says how much was left out (omitted_steps, omitted_bytes).
CREATE TABLE trace_sizes (
	job_id INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
	bytes INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0),
	cut_seq INTEGER,
	omitted_steps INTEGER NOT NULL DEFAULT 0,
	omitted_bytes INTEGER NOT NULL DEFAULT 0
);
INSERT INTO trace_sizes (job_id, bytes)
	SELECT job_id, SUM(length(CAST(step AS BLOB))) FROM trace_steps GROUP BY job_id;

-- Retention picks finished jobs by when they finished.
CREATE INDEX jobs_by_finished ON jobs (finished);
