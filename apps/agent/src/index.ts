// What the tray shell (apps/agent/electron) embeds: the daemon and its local settings page.
export { AgentDaemon, type AgentOptions, type AgentStatus } from './daemon/agent-daemon.js';
export { AgentHost, type AgentHostOptions } from './daemon/agent-host.js';
export { loadIdentity } from './daemon/identity.js';
export { serveDaemonSettings } from './settings/daemon-settings.js';
export { startSettingsServer, type SettingsServer } from './settings/settings-server.js';
export { SettingsClient } from './settings/settings-client.js';
export { DaemonBackend, type SettingsBackend } from './settings/daemon-backend.js';
export { SetupBackend } from './settings/setup-backend.js';
export type { LocalState, EnrollLocal } from './settings/local-api.js';
export type { OwnerIdleSource } from './governor/owner-idle.js';
