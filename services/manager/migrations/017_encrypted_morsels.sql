-- Encrypted morsels (issue 17 item 3): donors store ciphertext only.

-- The dataset's AES-256 data key, wrapped (AES-256-GCM, dataset id as AAD) with the manager's
-- master key (settings row 'manager_master_key'). NULL: the dataset is stored in clear (imported
-- with encrypt=false, a partly cached dataset, or imported before this migration). A re-import
-- replaces it: one key per generation of the bytes, so no (key, nonce) ever seals two plaintexts.
ALTER TABLE datasets ADD COLUMN wrapped_key bytea;

-- The AES-GCM tag of every sealed morsel, laid out as morsel_hashes: 4096 tags (16 bytes each)
-- a row, chunk c holds morsels [c * 4096, (c + 1) * 4096).
CREATE TABLE morsel_tags (
  dataset_id uuid NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  chunk      integer NOT NULL CHECK (chunk >= 0),
  tags       bytea NOT NULL CHECK (octet_length(tags) % 16 = 0),
  PRIMARY KEY (dataset_id, chunk)
);
