-- Prefix caching and collective download (seed 002).

-- What each source (scheme://host[:port]) is like: the model's L and R_patch, decaying averages
-- learned from imports, patches and `freeloader source probe`.
CREATE TABLE source_stats (
  source            text PRIMARY KEY,
  startup_latency_s double precision,
  patch_rate        double precision,
  patch_width       integer,
  import_rate       double precision,
  request_size      bigint NOT NULL DEFAULT 67108864 CHECK (request_size > 0),
  samples           integer NOT NULL DEFAULT 0,
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- R_client per reading principal ('' aggregates every client): in-cache read rate (bytes/s).
CREATE TABLE client_rates (
  client     text PRIMARY KEY,
  rate       double precision NOT NULL,
  samples    integer NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The cached part an import aims for (NULL: the whole dataset); pinned datasets are never evicted.
ALTER TABLE datasets ADD COLUMN import_cache_bytes bigint CHECK (import_cache_bytes >= 0);
ALTER TABLE datasets ADD COLUMN pinned boolean NOT NULL DEFAULT false;

-- Every trim (tail cut back to the model prefix) and eviction (cached prefix dropped).
CREATE TABLE cache_evictions (
  id         bigserial PRIMARY KEY,
  dataset_id uuid REFERENCES datasets (id) ON DELETE SET NULL,
  kind       text NOT NULL CHECK (kind IN ('trim', 'evict')),
  bytes      bigint NOT NULL CHECK (bytes >= 0),
  at         timestamptz NOT NULL DEFAULT now()
);

-- One collective download of a suffix for one reader.
CREATE TABLE patch_sessions (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  dataset_id   uuid REFERENCES datasets (id) ON DELETE CASCADE,
  client       text NOT NULL,
  state        text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'done', 'replaced')),
  first_morsel bigint NOT NULL,
  end_morsel   bigint NOT NULL,
  request_size bigint NOT NULL,
  nodes        jsonb NOT NULL,
  source       text,
  reports      integer NOT NULL DEFAULT 0,
  bytes        bigint NOT NULL DEFAULT 0,
  rate         double precision,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX patch_sessions_recent_idx ON patch_sessions (created_at DESC);
