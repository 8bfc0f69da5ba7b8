-- Which manager wrote each shared liveness row (issue 16, 10,000 agents): a manager reads back
-- only the rows the others wrote. Reading its own back cost it a JSON parse of every heartbeat
-- it had just written (2,000 rows a second at 10,000 agents) for nothing it did not know.
-- NULL: written before this column existed (read by every manager, as before).
ALTER TABLE agent_liveness ADD COLUMN written_by uuid;
