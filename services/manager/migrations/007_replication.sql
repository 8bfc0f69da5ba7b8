-- Replication and repair (issue 15), the schema the replication, repair and scrub work share.

-- Wanted copies of every morsel (ThriftStore's replication level n). Rows imported before this
-- migration had one copy. The manager's REPLICAS_DEFAULT applies to new imports; a per-dataset
-- availability target (a probability, e.g. 0.999) is turned into n by the availability model
-- (packages/striping/src/availability) with measured donor failure and repair rates.
ALTER TABLE datasets
  ADD COLUMN replicas integer NOT NULL DEFAULT 1 CHECK (replicas BETWEEN 1 AND 16),
  ADD COLUMN availability_target double precision
    CHECK (availability_target > 0 AND availability_target < 1);

-- Copies known to be bad on their donor: a scrub or start-up check found the bytes missing,
-- short or with the wrong hash, or a client read a bad hash from that donor. Reads skip such a
-- copy and repair replaces it; the row goes when the copy is re-created (or its dataset or donor
-- goes). One row per (dataset, copy, morsel): a second report of the same copy only refreshes it.
CREATE TABLE morsel_faults (
  dataset_id  uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  copy        integer NOT NULL CHECK (copy >= 0),
  morsel      bigint NOT NULL CHECK (morsel >= 0),
  agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  reason      text NOT NULL CHECK (reason IN ('corrupt', 'missing')),
  reported_by text NOT NULL CHECK (reported_by IN ('scrub', 'startup', 'client')),
  reported_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dataset_id, copy, morsel)
);
CREATE INDEX morsel_faults_agent_idx ON morsel_faults (agent_id);
