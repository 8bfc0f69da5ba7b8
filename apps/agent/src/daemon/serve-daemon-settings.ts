import { startSettingsServer, type SettingsServer } from '../control-api/settings-server.js';
import type { AgentDaemon } from './agent-daemon.js';
import { DaemonBackend } from './daemon-backend.js';

export interface DaemonSettingsOptions {
  dir: string;
  managerUrl: string;
  bandwidthOnly: boolean;
  host?: string;
  port?: number;
}

/**
 * Serve a running daemon's settings page on loopback (what `freeloader agent` and the tray do).
 *
 * @example const s = await serveDaemonSettings(daemon, { dir, managerUrl, bandwidthOnly: false });
 */
export function serveDaemonSettings(
  daemon: AgentDaemon,
  opts: DaemonSettingsOptions,
): Promise<SettingsServer> {
  return startSettingsServer({
    backend: new DaemonBackend(daemon, opts),
    dir: opts.dir,
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    ...(opts.port !== undefined ? { port: opts.port } : {}),
  });
}
