-- The version of an agent's quota (the agent's clock in ms when it set it): a heartbeat built
-- before a quota change can be flushed after the change was written, and must not put the old
-- quota back (placement would see space the owner took away, or miss space just given).
ALTER TABLE agents ADD COLUMN quota_version bigint NOT NULL DEFAULT 0;
