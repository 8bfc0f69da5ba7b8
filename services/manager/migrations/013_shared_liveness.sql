-- Stateless managers (issue 16 item 3): liveness every manager of the database shares. Each
-- manager writes the sightings it received in one batch per flush period and reads the others'
-- back, so an agent heartbeating to any manager is live on all of them.
--
-- `seen_at` is on the database's clock (now() minus the sighting's age at flush time), the one
-- clock every manager shares; a manager turns it back into an age on its own monotonic clock.
-- `version` comes from one sequence, so a manager reads only the rows changed since its last
-- read, and an outage is recorded only when no other manager wrote a sighting in between.
CREATE SEQUENCE agent_liveness_version;
CREATE TABLE agent_liveness (
  agent_id  uuid PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
  seen_at   timestamptz NOT NULL,
  -- The latest heartbeat (URL, space, rates, governor state, diagnostics), for placement.
  heartbeat jsonb,
  version   bigint NOT NULL
);
CREATE INDEX agent_liveness_version_idx ON agent_liveness (version);
