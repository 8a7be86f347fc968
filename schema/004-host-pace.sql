-- SPDX-License-Identifier: MIT
-- argusd store, version 4: the host's pace read between jobs. argusd reads
-- its fixed memory loop on each of its CPUs while no job runs
-- (host_pace_idle_s) and keeps a day of readings; a reference is judged
-- slow against their median and its earlier references' (usual_pace.c).

-- One reading: when (ISO 8601 UTC), on which host and CPU, and the loop's
-- nanoseconds per load.
CREATE TABLE host_pace (
	taken TEXT NOT NULL,
	host TEXT NOT NULL,
	cpu INTEGER NOT NULL CHECK (cpu >= 0),
	ns_per_load REAL NOT NULL CHECK (ns_per_load > 0)
);
CREATE INDEX host_pace_by_cpu ON host_pace (host, cpu, taken);
CREATE INDEX host_pace_by_taken ON host_pace (taken);
