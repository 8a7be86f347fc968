-- SPDX-License-Identifier: MIT
-- argusd store, version 2: who submitted each job. "uid:N" for a peer of the
-- control socket (SO_PEERCRED), "token" for a TCP client that sent the bearer
-- token; NULL for jobs recorded before this version (only an admin may cancel
-- those). The index serves the per-submitter queue quota.

ALTER TABLE jobs ADD COLUMN submitter TEXT;
CREATE INDEX jobs_by_submitter ON jobs (submitter, state);
