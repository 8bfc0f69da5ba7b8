-- Observed donor→client delivery rates, reported by clients after reads. `rate` is a decaying
-- average (bytes/s); `client` is the reading principal ('' for the all-clients aggregate), so
-- predictive placement can use a donor-client pair where known and the aggregate otherwise.
CREATE TABLE donor_rates (
  agent_id   uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
  client     text NOT NULL DEFAULT '',
  rate       double precision NOT NULL,
  samples    integer NOT NULL DEFAULT 1,
  failures   integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, client)
);
