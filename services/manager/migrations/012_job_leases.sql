-- Job leases (issue 16): a claimed job is its agent's until lease_expires_at, renewed by the
-- agent's heartbeats and progress reports; a periodic sweep re-queues or fails jobs whose lease
-- lapsed, so nothing stays `running` (and reserved) after an agent or manager crash.
ALTER TABLE jobs ADD COLUMN lease_expires_at timestamptz;
-- Jobs running before leases existed get one now: the sweep's start-up grace covers them.
UPDATE jobs SET lease_expires_at = now() WHERE state = 'running';

-- Heartbeats ask "does work wait for this agent?"; lease renewals and claims look up an agent's
-- jobs by state.
CREATE INDEX jobs_agent_state_idx ON jobs (agent_id, state);
-- The lease sweep reads only running jobs, by expiry.
CREATE INDEX jobs_lease_idx ON jobs (lease_expires_at) WHERE state = 'running';
-- The retention sweep prunes finished jobs by age (jobs_updated_idx orders all jobs; this one
-- holds only the finished ones).
CREATE INDEX jobs_finished_idx ON jobs (updated_at)
  WHERE state IN ('done', 'failed', 'cancelled');
