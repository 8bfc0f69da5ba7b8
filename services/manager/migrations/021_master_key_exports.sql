-- Which master keys have been backed up (`freeloader manager key export`), by the key's one-way
-- check value (masterKeyCheck: an HMAC under the key, never the key). A fact of the key, not of
-- one manager's key file: every manager of the database reads it at start, and a key file
-- restored from its backup is still known as exported. Replaces the `master.key.exported`
-- marker file beside each key file (moved in here by the first manager that finds one).
CREATE TABLE master_key_exports (
  key_check   text PRIMARY KEY,
  exported_at timestamptz NOT NULL DEFAULT now(),
  -- Where the backup went, as the exporting command named it (a path on that machine).
  exported_to text NOT NULL
);
