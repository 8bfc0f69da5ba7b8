import { EventEmitter } from 'node:events';
import { FreeLoaderError, isFreeLoaderError } from '@freeloader/protocol';
import { DaemonBackend } from './daemon-backend.js';
import type { EnrollLocal } from '../control-api/local-api.js';
import { SettingsClient } from '../control-api/settings-client.js';
import { startSettingsServer, type SettingsServer } from '../control-api/settings-server.js';
import { SetupBackend } from '../control-api/setup-backend.js';
import { normalizeManagerUrl } from '../manager-client.js';
import { AgentDaemon, type AgentOptions } from './agent-daemon.js';
import { loadIdentity } from '../state/identity.js';

export interface AgentHostOptions {
  /**
   * The daemon's options. Before enrollment, `managerUrl`, `quotaBytes` and `name` are only the
   * form's suggestions; `managerUrl` may be omitted when the agent is enrolled (its identity
   * names the manager).
   */
  agent: Omit<AgentOptions, 'managerUrl'> & { managerUrl?: string };
  /** Where the settings page listens (loopback), or false for none. */
  settings: { host?: string; port?: number } | false;
  /**
   * Called as soon as the daemon runs (at start, or after enrollment), before its first
   * heartbeat: the place to listen for its status changes.
   */
  onDaemon?: (daemon: AgentDaemon) => void;
}

/**
 * The donor daemon plus its local settings page: what `freeloader agent` and the tray run.
 * An enrolled agent (or one given a join token) starts its daemon at once. One that is not
 * enrolled yet serves the settings page with an enrollment form; submitting it starts the
 * daemon through the same {@link AgentDaemon.start} the CLI's `--token` uses, and the page
 * switches to the running daemon. Calls `onDaemon` and emits `daemon` once the daemon runs.
 *
 * @example
 *   const host = await AgentHost.start({ agent: { dir, logger }, settings: {} });
 *   console.error(`settings at ${host.settings!.openUrl}`); // enroll there on first run
 */
export class AgentHost extends EventEmitter {
  private daemonRef: AgentDaemon | null = null;
  private startingDaemon = false;
  private stopped = false;
  settings: SettingsServer | null = null;

  private constructor(private readonly opts: AgentHostOptions) {
    super();
  }

  static async start(opts: AgentHostOptions): Promise<AgentHost> {
    const identity = await loadIdentity(opts.agent.dir);
    const ready = identity !== null || Boolean(opts.agent.token);
    if (!ready && opts.settings === false) {
      throw new FreeLoaderError(
        'JOIN_TOKEN_INVALID',
        'this agent is not enrolled yet: pass --token (an admin creates one with `freeloader token create`), or drop --no-settings and enroll on the settings page',
      );
    }
    const host = new AgentHost(opts);
    try {
      if (ready) {
        await host.startDaemon({
          managerUrl: opts.agent.managerUrl ?? identity?.managerUrl ?? '',
        });
      }
      if (opts.settings !== false) {
        const backend = host.daemonRef
          ? host.daemonBackend(host.daemonRef)
          : new SetupBackend(opts.agent.dir, (req) => host.enroll(req), {
              managerUrl: opts.agent.managerUrl ?? null,
              quotaBytes: opts.agent.quotaBytes ?? null,
              bandwidthOnly: opts.agent.bandwidthOnly ?? false,
            });
        host.settings = await startSettingsServer({
          backend,
          dir: opts.agent.dir,
          ...opts.settings,
        });
      }
    } catch (e) {
      await host.stop();
      throw e;
    }
    return host;
  }

  /** The running daemon; null until this computer has joined a cache. */
  get daemon(): AgentDaemon | null {
    return this.daemonRef;
  }

  /** The settings API as a client (what the tray shows and its menu does); null with no page. */
  get client(): SettingsClient | null {
    return this.settings ? new SettingsClient(this.settings.url, this.settings.token) : null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.settings?.close().catch(() => undefined);
    await this.daemonRef?.stop();
  }

  /** The enrollment form was submitted: join with its URL and token, or say clearly why not. */
  private async enroll(req: EnrollLocal): Promise<void> {
    if (this.daemonRef || this.startingDaemon) {
      throw new FreeLoaderError('CONFLICT', 'this computer is joining or has joined a cache');
    }
    // A malformed URL is the owner's typo: say so before opening anything.
    const managerUrl = normalizeManagerUrl(req.managerUrl.trim());
    try {
      await this.startDaemon({
        managerUrl,
        token: req.token.trim(),
        quotaBytes: this.opts.agent.bandwidthOnly ? 0 : req.quotaBytes,
        ...(req.name ? { name: req.name } : {}),
      });
    } catch (e) {
      throw enrollError(e, managerUrl);
    }
    this.settings?.setBackend(this.daemonBackend(this.daemonRef!));
  }

  private async startDaemon(o: {
    managerUrl: string;
    token?: string;
    quotaBytes?: number;
    name?: string;
  }): Promise<void> {
    this.startingDaemon = true;
    try {
      const daemon = await AgentDaemon.start({ ...this.opts.agent, ...o });
      if (this.stopped) {
        await daemon.stop();
        throw new FreeLoaderError('UNAVAILABLE', 'the agent is stopping');
      }
      this.daemonRef = daemon;
      this.opts.onDaemon?.(daemon);
      this.emit('daemon', daemon);
    } finally {
      this.startingDaemon = false;
    }
  }

  private daemonBackend(daemon: AgentDaemon): DaemonBackend {
    return new DaemonBackend(daemon, {
      dir: this.opts.agent.dir,
      managerUrl: daemon.identity?.managerUrl ?? this.opts.agent.managerUrl ?? '',
      bandwidthOnly: this.opts.agent.bandwidthOnly ?? false,
    });
  }
}

/**
 * The manager's refusal, worded for the person at the form: a refused join token is not the
 * local settings token (both would be 401), so it goes back as a validation error.
 */
function enrollError(e: unknown, managerUrl: string): unknown {
  if (!isFreeLoaderError(e)) return e;
  if (
    e.code === 'JOIN_TOKEN_INVALID' ||
    e.code === 'JOIN_TOKEN_EXPIRED' ||
    e.code === 'JOIN_TOKEN_USED'
  ) {
    return new FreeLoaderError(
      'VALIDATION_FAILED',
      `the manager at ${managerUrl} refused the join token: ${e.message}`,
    );
  }
  return e;
}
