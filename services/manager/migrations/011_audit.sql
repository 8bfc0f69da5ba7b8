-- Audit log (issue 17): who imported, deleted, revoked, created tokens and users, changed the
-- source allow list, and every login that succeeded, failed or was rate-limited; when and from
-- which address. Rows are only ever added; admins read them newest first (GET /api/v1/audit).
CREATE TABLE audit_log (
  id       bigserial PRIMARY KEY,
  at       timestamptz NOT NULL DEFAULT now(),
  -- The user or agent that acted (null: anonymous, e.g. a failed login for an unknown name).
  user_id  uuid REFERENCES users (id) ON DELETE SET NULL,
  agent_id uuid REFERENCES agents (id) ON DELETE SET NULL,
  -- Who, in words, kept when the user or agent row goes: a username, `agent <name>` …
  actor    text NOT NULL,
  action   text NOT NULL,
  -- What was acted on: a dataset path or id, a token id, a username …
  target   text,
  address  text NOT NULL,
  outcome  text NOT NULL CHECK (outcome IN ('ok', 'refused')),
  details  jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_at_idx ON audit_log (at DESC);
