-- Placement policies (issue 6): which policy placed each dataset, and what each agent measured
-- about its workstation when it joined (bytes/s), for predictive and asymmetric striping.
ALTER TABLE datasets ADD COLUMN placement_policy text
  CHECK (placement_policy IN ('round-robin', 'predictive', 'asymmetric'));

ALTER TABLE agents
  ADD COLUMN disk_read_rate double precision CHECK (disk_read_rate >= 0),
  ADD COLUMN disk_read_cached boolean,
  ADD COLUMN download_rate double precision CHECK (download_rate >= 0),
  ADD COLUMN upload_rate double precision CHECK (upload_rate >= 0),
  ADD COLUMN diagnosed_at timestamptz;
