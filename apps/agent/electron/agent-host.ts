import {
  AgentDaemon,
  DaemonBackend,
  SetupBackend,
  loadIdentity,
  startSettingsServer,
  type EnrollLocal,
  type LocalState,
  type OwnerIdleSource,
  type SettingsServer,
} from '@freeloader/agent';
import { DEFAULT_AGENT_PORT } from '@freeloader/protocol';
import type { Logger } from 'pino';

export interface AgentHostOptions {
  /** The agent's state directory. */
  dir: string;
  /** Owner idle time from the desktop session (Electron's powerMonitor). */
  idleSource: OwnerIdleSource;
  logger: Logger;
}

/**
 * The donor daemon inside the tray process, plus its settings page. Before this computer has
 * joined a cache the page offers enrollment; enrolling starts the daemon and the page switches
 * to it. Nothing here depends on Electron: the same daemon runs headless with `freeloader agent`.
 */
export class AgentHost {
  private daemonRef: AgentDaemon | null = null;

  private constructor(
    readonly settings: SettingsServer,
    private readonly opts: AgentHostOptions,
  ) {}

  /** Start the settings page, and the daemon too when this computer is enrolled already. */
  static async start(opts: AgentHostOptions): Promise<AgentHost> {
    const identity = await loadIdentity(opts.dir);
    const holder: { host?: AgentHost } = {};
    const settings = await startSettingsServer({
      backend: new SetupBackend(opts.dir, (req) => holder.host!.enroll(req)),
      dir: opts.dir,
    });
    const host = new AgentHost(settings, opts);
    holder.host = host;
    if (identity) await host.startDaemon({ managerUrl: identity.managerUrl });
    return host;
  }

  get daemon(): AgentDaemon | null {
    return this.daemonRef;
  }

  /** What the settings API says right now (the tray's view of the agent). */
  async state(): Promise<LocalState> {
    const res = await fetch(new URL('api/state', this.settings.url), {
      headers: { authorization: `Bearer ${this.settings.token}` },
    });
    return (await res.json()) as LocalState;
  }

  /** Call the settings API as the tray (pause, resume). */
  async call(method: string, path: string, body?: unknown): Promise<void> {
    await fetch(new URL(path, this.settings.url), {
      method,
      headers: {
        authorization: `Bearer ${this.settings.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }

  async stop(): Promise<void> {
    await this.settings.close().catch(() => undefined);
    await this.daemonRef?.stop();
  }

  private async enroll(req: EnrollLocal): Promise<void> {
    if (this.daemonRef) throw new Error('this computer has joined a cache already');
    await this.startDaemon({
      managerUrl: req.managerUrl,
      token: req.token,
      quotaBytes: req.quotaBytes,
      ...(req.name ? { name: req.name } : {}),
    });
  }

  private async startDaemon(o: {
    managerUrl: string;
    token?: string;
    quotaBytes?: number;
    name?: string;
  }): Promise<void> {
    this.daemonRef = await AgentDaemon.start({
      ...o,
      dir: this.opts.dir,
      listenHost: '0.0.0.0',
      listenPort: DEFAULT_AGENT_PORT,
      idleSource: this.opts.idleSource,
      logger: this.opts.logger,
    });
    this.settings.setBackend(
      new DaemonBackend(this.daemonRef, {
        dir: this.opts.dir,
        managerUrl: o.managerUrl,
        bandwidthOnly: false,
      }),
    );
  }
}
