-- Prefix extension (issue 7): a partly cached dataset read often enough gets more of it cached
-- when the cache has room under its high watermark.

-- Reads (map fetches): the total, and a count that halves every READ_HALF_LIFE_S (decayed from
-- last_access_at, which every read also moves).
ALTER TABLE datasets
  ADD COLUMN read_count bigint NOT NULL DEFAULT 0 CHECK (read_count >= 0),
  ADD COLUMN read_score double precision NOT NULL DEFAULT 0 CHECK (read_score >= 0);

-- An extension in flight: {fromBytes, toBytes, extents (the new morsels only), startedAt}.
-- Readers keep the old prefix (placement, cached_bytes) until it commits; NULL when none.
ALTER TABLE datasets ADD COLUMN extension jsonb;

-- Extensions are recorded beside trims and evictions.
ALTER TABLE cache_evictions DROP CONSTRAINT cache_evictions_kind_check;
ALTER TABLE cache_evictions
  ADD CONSTRAINT cache_evictions_kind_check CHECK (kind IN ('trim', 'evict', 'extend'));
