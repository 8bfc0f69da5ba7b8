-- FreeLoader manager schema, version 1.
-- UUID keys everywhere (gen_random_uuid() is built in since PostgreSQL 13); timestamps are
-- timestamptz; byte counts are bigint (exact in JSON up to 2^53).

CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username      text NOT NULL UNIQUE,
  -- scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>
  password_hash text NOT NULL,
  role          text NOT NULL CHECK (role IN ('admin', 'scientist')),
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  -- sha256 of the bearer token: a leaked table does not leak sessions.
  token_hash bytea PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE join_tokens (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash bytea NOT NULL UNIQUE,
  note       text,
  max_uses   integer NOT NULL CHECK (max_uses > 0),
  uses       integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agents (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name                text NOT NULL,
  url                 text NOT NULL,
  credential_hash     bytea NOT NULL,
  bandwidth_only      boolean NOT NULL DEFAULT false,
  quota_bytes         bigint NOT NULL CHECK (quota_bytes >= 0),
  -- The manager's ledger: bytes of committed reservations. Admission control uses this, never
  -- the agent's own report, so a late heartbeat cannot undo a commit.
  used_bytes          bigint NOT NULL DEFAULT 0 CHECK (used_bytes >= 0),
  -- What the agent last reported (flushed from soft state, display only).
  reported_used_bytes bigint NOT NULL DEFAULT 0,
  free_bytes          bigint NOT NULL DEFAULT 0,
  serving_rate        double precision NOT NULL DEFAULT 0,
  throttle            text,
  -- Wall-clock time of the last heartbeat, flushed in batches for display; liveness itself is
  -- decided in memory on the manager's monotonic clock, so this column is deliberately unindexed.
  last_seen_at        timestamptz,
  enrolled_at         timestamptz NOT NULL DEFAULT now(),
  join_token_id       uuid REFERENCES join_tokens (id) ON DELETE SET NULL,
  revoked_at          timestamptz
);

-- The namespace is a tree of folders. The root is one fixed row, the only one without a parent,
-- so unique(parent_id, name) never has to compare NULLs.
CREATE TABLE folders (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  parent_id  uuid REFERENCES folders (id) ON DELETE CASCADE,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (parent_id, name),
  CHECK ((parent_id IS NULL) = (id = '00000000-0000-0000-0000-000000000000'))
);
INSERT INTO folders (id, parent_id, name) VALUES ('00000000-0000-0000-0000-000000000000', NULL, '');

-- A folder's path from the root ('' for the root itself), e.g. 'climate/cmip6'.
CREATE FUNCTION folder_path(folder uuid) RETURNS text
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE up AS (
    SELECT id, parent_id, name, 0 AS depth FROM folders WHERE id = folder
    UNION ALL
    SELECT f.id, f.parent_id, f.name, up.depth + 1 FROM folders f JOIN up ON f.id = up.parent_id
  )
  SELECT coalesce(string_agg(name, '/' ORDER BY depth DESC) FILTER (WHERE parent_id IS NOT NULL), '')
  FROM up
$$;

CREATE TABLE datasets (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  folder_id      uuid NOT NULL REFERENCES folders (id) ON DELETE RESTRICT,
  name           text NOT NULL,
  source_uri     text,
  size_bytes     bigint NOT NULL CHECK (size_bytes >= 0),
  morsel_size    integer NOT NULL CHECK (morsel_size > 0),
  etag           text,
  last_modified  text,
  state          text NOT NULL DEFAULT 'importing'
                 CHECK (state IN ('importing', 'ready', 'failed', 'deleting')),
  cached_bytes   bigint NOT NULL DEFAULT 0 CHECK (cached_bytes >= 0),
  error          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_access_at timestamptz,
  UNIQUE (folder_id, name)
);

-- Placement as extents (see protocol/placement.ts): copy `copy` of morsels
-- [first, first + count) lives on donors[(floor((m - first) / unit) + phase) % len(donors)].
-- Moving one morsel m (in stripe s = floor((m - first) / unit), b = first + (s + 1) * unit,
-- n = cardinality(donors)) to donor X splits its extent, in one transaction, into up to four
-- rows so that every other morsel keeps its donor:
--   [first, m)         unit, phase and donors unchanged                         (if m > first)
--   [m, m + 1)         unit 1, phase 0, donors {X}
--   [m + 1, b)         rest of stripe s: unit 1, phase 0, donors {donors[(s + phase) % n]}
--   [b, first + count) unit and donors unchanged, phase (phase + s + 1) % n      (if b < end)
-- A dataset is therefore a handful of rows however large it is.
CREATE TABLE placement_extents (
  dataset_id uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  copy       integer NOT NULL CHECK (copy >= 0),
  first      bigint NOT NULL CHECK (first >= 0),
  count      bigint NOT NULL CHECK (count > 0),
  unit       integer NOT NULL CHECK (unit > 0),
  phase      integer NOT NULL CHECK (phase >= 0),
  donors     uuid[] NOT NULL CHECK (cardinality(donors) > 0),
  PRIMARY KEY (dataset_id, copy, first)
);
-- Which datasets touch an agent (startup reconciliation, deletes).
CREATE INDEX placement_extents_donors_idx ON placement_extents USING gin (donors);

-- SHA-256 of every morsel: 4096 digests (32 bytes each, 128 KiB) a row, in morsel order, so
-- chunk c holds morsels [c * 4096, (c + 1) * 4096).
CREATE TABLE morsel_hashes (
  dataset_id uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  chunk      integer NOT NULL CHECK (chunk >= 0),
  hashes     bytea NOT NULL CHECK (octet_length(hashes) % 32 = 0),
  PRIMARY KEY (dataset_id, chunk)
);

CREATE TABLE reservations (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  dataset_id uuid REFERENCES datasets (id) ON DELETE SET NULL,
  bytes      bigint NOT NULL CHECK (bytes > 0),
  state      text NOT NULL DEFAULT 'active'
             CHECK (state IN ('active', 'committed', 'released', 'expired')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reservations_active_idx ON reservations (agent_id) WHERE state = 'active';
CREATE INDEX reservations_dataset_idx ON reservations (dataset_id) WHERE dataset_id IS NOT NULL;

CREATE TABLE jobs (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind        text NOT NULL CHECK (kind IN ('import', 'patch', 'delete', 'relocate')),
  state       text NOT NULL DEFAULT 'queued'
              CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  dataset_id  uuid REFERENCES datasets (id) ON DELETE SET NULL,
  -- The agent that must run it; NULL means any agent may claim it.
  agent_id    uuid REFERENCES agents (id) ON DELETE CASCADE,
  payload     jsonb NOT NULL DEFAULT '{}'::jsonb,
  result      jsonb,
  done_bytes  bigint NOT NULL DEFAULT 0,
  total_bytes bigint NOT NULL DEFAULT 0,
  rate        double precision NOT NULL DEFAULT 0,
  error       text,
  error_code  text,
  attempts    integer NOT NULL DEFAULT 0,
  locked_by   uuid,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- Claiming scans only queued jobs, oldest first.
CREATE INDEX jobs_queued_idx ON jobs (created_at) WHERE state = 'queued';
CREATE INDEX jobs_dataset_idx ON jobs (dataset_id);
CREATE INDEX jobs_updated_idx ON jobs (updated_at DESC);
