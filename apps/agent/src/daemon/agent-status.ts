/**
 * Status codes the daemon reports (the tray shell and `freeloader agent` show them):
 * starting → enrolling (first run) → online ⇄ offline (manager unreachable, still serving);
 * revoked when the manager refuses our identity; stopped after stop().
 */
export type AgentStatus = 'starting' | 'enrolling' | 'online' | 'offline' | 'revoked' | 'stopped';
