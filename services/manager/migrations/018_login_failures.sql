-- Failed logins counted in the database (issue 16 item 3): every manager of the database reads
-- and adds to the same windows, so spreading guesses over several managers gains nothing.
-- One row per throttled key ('addr <ip>' or 'user <lower-case name>'): a fixed window that
-- starts at its first failure; an ended window is restarted by the next failure and pruned.
CREATE TABLE login_failures (
  key            text PRIMARY KEY,
  failures       integer NOT NULL CHECK (failures > 0),
  window_ends_at timestamptz NOT NULL
);
CREATE INDEX login_failures_window_ends_at ON login_failures (window_ends_at);
