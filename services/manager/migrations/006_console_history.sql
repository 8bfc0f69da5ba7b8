-- Console history (issue 18 item 6): who started an import, why the cache cut a dataset, and
-- sampled history of donors and imports that outlives a reload and a manager restart.

-- The user who started an import (cancel and retry are theirs or an admin's).
ALTER TABLE datasets ADD COLUMN created_by uuid REFERENCES users (id) ON DELETE SET NULL;

-- Why a trim or eviction happened: an import that needed room (and which dataset and user),
-- the watermark sweep, or an admin's cut. NULL for rows recorded before this migration.
ALTER TABLE cache_evictions
  ADD COLUMN reason text CHECK (reason IN ('import', 'watermark', 'admin')),
  ADD COLUMN for_dataset_id uuid REFERENCES datasets (id) ON DELETE SET NULL,
  ADD COLUMN for_path text,
  ADD COLUMN for_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  ADD COLUMN dataset_path text;
CREATE INDEX cache_evictions_at_idx ON cache_evictions (at DESC);

-- Sampled history: one value of one series for one subject (a donor, a dataset, or NULL for
-- the whole cluster) at `at`. `resolution_s` is 0 for raw samples and the bucket width for
-- downsampled ones; the sampler folds old raw rows into buckets and drops the oldest buckets,
-- so the table stays bounded (see services/manager/src/history/).
CREATE TABLE history_samples (
  series       text NOT NULL,
  subject      uuid,
  at           timestamptz NOT NULL,
  value        double precision NOT NULL,
  resolution_s integer NOT NULL DEFAULT 0 CHECK (resolution_s >= 0)
);
CREATE INDEX history_samples_series_idx ON history_samples (series, subject, at);
CREATE INDEX history_samples_at_idx ON history_samples (resolution_s, at);

-- A retried import is a new dataset; the failed jobs of its earlier attempts stay listed as
-- its failed attempts (their own dataset_id is cleared when the failed row goes).
ALTER TABLE datasets ADD COLUMN earlier_failures uuid[] NOT NULL DEFAULT '{}';
CREATE INDEX datasets_earlier_failures_idx ON datasets USING gin (earlier_failures);
