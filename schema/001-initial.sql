-- SPDX-License-Identifier: MIT
-- argusd store, version 1. Applied once, inside a transaction, by store_open();
-- PRAGMA user_version then records 1. JSON documents are kept as TEXT.
-- Timestamps are ISO 8601 UTC text ("2026-11-29T07:32:14Z").

CREATE TABLE jobs (
	id INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: clients keep ids
	kind TEXT NOT NULL CHECK (kind IN ('diagnose', 'reference')),
	state TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled',
				 'interrupted')),
	progress REAL NOT NULL DEFAULT 0 CHECK (progress >= 0 AND progress <= 1),
	step TEXT,
	request TEXT NOT NULL CHECK (json_valid(request)),
	result TEXT CHECK (result IS NULL OR json_valid(result)),
	error TEXT CHECK (error IS NULL OR json_valid(error)),
	created TEXT NOT NULL,
	started TEXT,
	finished TEXT,
	-- filters of GET /jobs
	workload TEXT GENERATED ALWAYS AS (json_extract(request, '$.workload')) VIRTUAL,
	subject TEXT GENERATED ALWAYS AS (json_extract(request, '$.subject')) VIRTUAL
);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_workload ON jobs (workload, id);

-- One row per trace step, in the order the job wrote them.
CREATE TABLE trace_steps (
	job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	step TEXT NOT NULL CHECK (json_valid(step)),
	PRIMARY KEY (job_id, seq)
) WITHOUT ROWID;

-- Probes loaded for a job: source, verifier log, backend, overhead.
CREATE TABLE probes (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
	probe TEXT NOT NULL CHECK (json_valid(probe)),
	created TEXT NOT NULL
);
CREATE INDEX probes_by_job ON probes (job_id, level);

-- References (RMV sets). "references" is an SQL keyword, hence "refs".
-- subject: workload name, "pid:N" or "unit:NAME".
CREATE TABLE refs (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
	subject TEXT NOT NULL,
	meta TEXT NOT NULL CHECK (json_valid(meta)),
	created TEXT NOT NULL
);
CREATE INDEX refs_by_subject ON refs (subject, id);

-- The K runs of a reference; vector: {"metric": value, ...}.
CREATE TABLE reference_runs (
	ref_id INTEGER NOT NULL REFERENCES refs (id) ON DELETE CASCADE,
	repeat INTEGER NOT NULL CHECK (repeat >= 0),
	vector TEXT NOT NULL CHECK (json_valid(vector)),
	PRIMARY KEY (ref_id, repeat)
) WITHOUT ROWID;

-- Vectors measured by a job (PMV per level; parent: node whose children were probed).
CREATE TABLE vectors (
	id INTEGER PRIMARY KEY,
	job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('pmv', 'rmv')),
	level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 3),
	parent TEXT NOT NULL DEFAULT '',
	vector TEXT NOT NULL CHECK (json_valid(vector)),
	created TEXT NOT NULL
);
CREATE INDEX vectors_by_job ON vectors (job_id, level);
