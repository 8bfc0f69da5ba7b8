-- Failure classes, the repair queue and graceful leave (issue 15 items 2, 3 and 6).

-- A donor silent past REPAIR_AFTER_MS is *lost* (its copies are re-created elsewhere); the mark
-- survives a manager restart and is cleared when the donor heartbeats again (reintegration).
-- A donor *leaving* (freeloader agent --leave) has its copies re-created elsewhere while it still
-- serves, then is released (revoked, ledger zero).
ALTER TABLE agents
  ADD COLUMN lost_at timestamptz,
  ADD COLUMN leaving_at timestamptz;

-- Observed transient outages (silent past STALE_AFTER_MS, then back): REPAIR_AFTER_MS is sized
-- from their distribution (ThriftStore §3.2: tell transient from permanent failures by time).
CREATE TABLE donor_outages (
  id          bigserial PRIMARY KEY,
  agent_id    uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  duration_ms bigint NOT NULL CHECK (duration_ms >= 0),
  ended_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX donor_outages_ended_idx ON donor_outages (ended_at DESC);

-- The repair queue: one row per unit of work, a run [first, first + count) of one copy of one
-- dataset. `from_agent` is the donor whose copy is replaced (lost, leaving, revoked, or holding
-- a faulty copy); NULL when the copy is missing altogether (fewer copies than `replicas`).
-- Ordered by danger: fewest live copies first. A running unit names its job, destination and
-- the reservation its bytes will be committed from; commit deletes the row.
CREATE TABLE repair_units (
  id             bigserial PRIMARY KEY,
  dataset_id     uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  copy           integer NOT NULL CHECK (copy >= 0),
  first          bigint NOT NULL CHECK (first >= 0),
  count          bigint NOT NULL CHECK (count >= 1),
  from_agent     uuid REFERENCES agents (id) ON DELETE CASCADE,
  reason         text NOT NULL CHECK (reason IN ('lost', 'leaving', 'revoked', 'fault', 'missing')),
  morsels        bigint[] NOT NULL,
  bytes          bigint NOT NULL CHECK (bytes >= 0),
  live_copies    integer NOT NULL CHECK (live_copies >= 0),
  state          text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running')),
  job_id         uuid REFERENCES jobs (id) ON DELETE SET NULL,
  to_agent       uuid REFERENCES agents (id) ON DELETE SET NULL,
  reservation_id uuid,
  enqueued_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (dataset_id, copy, first)
);
CREATE INDEX repair_units_order_idx ON repair_units (state, live_copies, enqueued_at);

-- Completed units, for the repair rate and ETA (and the cap tests). Old rows are pruned.
CREATE TABLE repair_done (
  id         bigserial PRIMARY KEY,
  dataset_id uuid NOT NULL,
  agent_id   uuid,
  bytes      bigint NOT NULL,
  done_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX repair_done_at_idx ON repair_done (done_at DESC);

-- Repair jobs copy a unit's morsels donor-to-donor (or from the source) onto their destination.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs
  ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('import', 'patch', 'delete', 'relocate', 'repair'));
