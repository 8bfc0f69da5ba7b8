// What the tray shell (apps/agent/electron) embeds: the daemon and its local settings page.
export { AgentDaemon, type AgentOptions } from './daemon/agent-daemon.js';
export type { AgentStatus } from './daemon/agent-status.js';
export { AgentHost, type AgentHostOptions } from './daemon/agent-host.js';
export { loadIdentity } from './state/identity.js';
export { serveDaemonSettings } from './daemon/serve-daemon-settings.js';
export { startSettingsServer, type SettingsServer } from './control-api/settings-server.js';
export { SettingsClient } from './control-api/settings-client.js';
export { DaemonBackend } from './daemon/daemon-backend.js';
export type { SettingsBackend } from './control-api/control-backend.js';
export { SetupBackend } from './control-api/setup-backend.js';
export type { LocalState, EnrollLocal } from './control-api/local-api.js';
export type { OwnerIdleSource } from './governor/owner-idle.js';
