-- Ownership and sharing (issue 17 item 2). The model fits a research group: users belong to
-- groups (some of them as the group's managers); folders and datasets have an owner and may be
-- shared, for reading, with groups or with the whole site. A share with `manage` lets the
-- group's managers (not every member) also delete, re-import, pin and re-share. Sharing is
-- additive down the tree: a dataset is shared with whatever it and every folder above it is
-- shared with. The rule itself lives in one place, services/manager/src/auth/permissions.ts.

CREATE TABLE groups (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE group_members (
  group_id uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
  user_id  uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  manager  boolean NOT NULL DEFAULT false,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user_idx ON group_members (user_id);

-- NULL owner: only admins manage it (the root, folders made before owners existed, a deleted
-- user's items).
ALTER TABLE folders ADD COLUMN owner_id uuid REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE datasets ADD COLUMN owner_id uuid REFERENCES users (id) ON DELETE SET NULL;

CREATE TABLE shares (
  folder_id  uuid REFERENCES folders (id) ON DELETE CASCADE,
  dataset_id uuid REFERENCES datasets (id) ON DELETE CASCADE,
  -- NULL: the whole site (every signed-in user).
  group_id   uuid REFERENCES groups (id) ON DELETE CASCADE,
  manage     boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((folder_id IS NULL) <> (dataset_id IS NULL)),
  -- Managing goes to a group's managers; the site has none.
  CHECK (group_id IS NOT NULL OR NOT manage)
);
-- One share per item and audience (folder and dataset ids never collide: both are UUIDs).
CREATE UNIQUE INDEX shares_item_audience_idx ON shares (
  coalesce(folder_id, dataset_id), coalesce(group_id, '00000000-0000-0000-0000-000000000000'));
CREATE INDEX shares_group_idx ON shares (group_id);

-- A folder and every folder above it, up to the root.
CREATE FUNCTION folder_ancestors(folder uuid) RETURNS SETOF uuid
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE up AS (
    SELECT id, parent_id FROM folders WHERE id = folder
    UNION ALL
    SELECT f.id, f.parent_id FROM folders f JOIN up ON f.id = up.parent_id
  )
  SELECT id FROM up
$$;

-- A folder and every folder and dataset below it (for "may this user see the folder at all").
CREATE FUNCTION folder_subtree(folder uuid) RETURNS SETOF uuid
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE down AS (
    SELECT id FROM folders WHERE id = folder
    UNION ALL
    SELECT f.id FROM folders f JOIN down ON f.parent_id = down.id
  )
  SELECT id FROM down
$$;

-- Existing datasets belong to whoever imported them; every signed-in user could read them
-- before owners existed, so they stay readable by the site (owners may unshare them).
UPDATE datasets SET owner_id = created_by;
INSERT INTO shares (dataset_id, group_id, manage) SELECT id, NULL, false FROM datasets;
