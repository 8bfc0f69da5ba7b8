import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  FreeLoaderError,
  HEARTBEAT_INTERVAL_MS,
  isFreeLoaderError,
  type DatasetView,
  type Heartbeat,
} from '@freeloader/protocol';
import { ManagerClient } from '../manager-client.js';
import { buildMorselService, listenMorselService } from '../service/morsel-service.js';
import { deleteJobHandler } from '../jobs/delete-job.js';
import { importJobHandler } from '../jobs/import-job.js';
import { JobRunner } from '../jobs/job-runner.js';
import { attachPatching } from '../patching/attach-patching.js';
import type { PatchRegistry } from '../patching/patch-registry.js';
import { FsStore } from '../store/fs-store.js';
import { Governance, type AdmitTransfer } from '../governor/governance.js';
import { loadGovernorFile, type GovernorFile } from '../governor/governor-file.js';
import type { OwnerIdleSource } from '../governor/owner-idle.js';
import type { SystemProbe } from '../governor/system-probe.js';
import { relocateJobHandler } from '../jobs/relocate-job.js';
import { RelocationTracker } from '../relocation/relocation-tracker.js';
import { RetiringStore } from '../store/retiring-store.js';
import { backoffDelay } from './backoff.js';
import { agentAuthorization, JoinDiagnostics } from './diagnostics.js';
import { checkQuotaFits, diskShort } from '../store/disk-space.js';
import { loadIdentity, saveIdentity, type Identity } from './identity.js';
import { reconcileStore } from './reconcile.js';
import { loadSettings, saveSettings } from './settings.js';

/**
 * Status codes the daemon reports (the tray shell and `freeloader agent` show them):
 * starting → enrolling (first run) → online ⇄ offline (manager unreachable, still serving);
 * revoked when the manager refuses our identity; stopped after stop().
 */
export type AgentStatus = 'starting' | 'enrolling' | 'online' | 'offline' | 'revoked' | 'stopped';

export interface AgentOptions {
  managerUrl: string;
  /** Join token; needed only for the first start (later starts reuse the stored identity). */
  token?: string;
  /** State directory: identity, settings and the morsel store live here. */
  dir: string;
  /** Donated space in bytes; remembered, so later starts may omit it. */
  quotaBytes?: number;
  listenHost?: string;
  /** 0 picks a free port. */
  listenPort?: number;
  /** URL clients use to reach this agent's morsel service; defaults to the listen address. */
  advertiseUrl?: string;
  name?: string;
  bandwidthOnly?: boolean;
  heartbeatIntervalMs?: number;
  /** Accept file:// sources in import jobs (the manager must allow them too). */
  allowFileUris?: boolean;
  /** Owner idle time from the host (the tray's powerMonitor); default: the platform's. */
  idleSource?: OwnerIdleSource;
  /** Machine measurements for the governor; default systeminformation. */
  systemProbe?: SystemProbe;
  logger: Logger;
}

/** Delay bounds while the manager is unreachable (milliseconds). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

export class AgentDaemon extends EventEmitter {
  status: AgentStatus = 'starting';
  identity: Identity | null = null;
  url = '';
  /** The morsel store; relocated morsels stay readable in it until old maps expire. */
  readonly store: RetiringStore;
  /** The serving governor: owner activity, contention, schedules and pauses → a paced rate. */
  readonly governance: Governance;
  private readonly service: FastifyInstance;
  /** The manager's API as this agent (the settings API uses it for quota changes). */
  readonly manager: ManagerClient;
  /** Progress of moving data off this donor after a quota cut. */
  readonly relocation = new RelocationTracker();
  private readonly jobs: JobRunner;
  /** Disk and network rates measured once after joining (seed 000 §5.2.1). */
  private readonly diagnostics: JoinDiagnostics;
  /** Collective downloads this agent patches for clients (seed 002). */
  private readonly patching: PatchRegistry;
  private readonly opts: AgentOptions;
  private readonly log: Logger;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private servedBytes = 0;
  private lastBeat = { at: performance.now(), served: 0 };
  private reconciled = false;
  private stopping = false;
  private intervalMs: number;

  private constructor(
    opts: AgentOptions,
    store: RetiringStore,
    identity: Identity | null,
    governorFile: GovernorFile,
  ) {
    super();
    this.opts = opts;
    this.log = opts.logger;
    this.store = store;
    this.identity = identity;
    this.governance = new Governance(
      {
        dir: opts.dir,
        log: opts.logger,
        servedBytes: () => this.servedBytes,
        ...(opts.idleSource ? { idleSource: opts.idleSource } : {}),
        ...(opts.systemProbe ? { probe: opts.systemProbe } : {}),
      },
      governorFile,
    );
    this.intervalMs = opts.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS;
    this.manager = new ManagerClient(opts.managerUrl);
    this.diagnostics = new JoinDiagnostics({
      dir: opts.dir,
      managerUrl: this.manager.baseUrl,
      authorization: () => agentAuthorization(this.identity),
      log: opts.logger,
    });
    if (identity) this.useIdentity(identity);
    this.service = buildMorselService({
      store,
      agentId: () => this.identity?.agentId,
      managerPublicKey: () => this.identity?.managerPublicKey,
      logger: false,
      onServed: (bytes) => {
        this.servedBytes += bytes;
      },
      pace: (body) => this.governance.pace(body),
      prepareDataset: (datasetId) => this.prepareDataset(datasetId),
    });
    // The owner notices everything the agent moves: imports, patch downloads and relocation
    // pushes go through the serving governor too (paced with it, held while paused).
    const admit: AdmitTransfer = (bytes, direction, signal) =>
      this.governance.admit(bytes, direction, signal);
    this.patching = attachPatching(this.service, {
      manager: this.manager,
      agentId: () => this.identity?.agentId,
      managerPublicKey: () => this.identity?.managerPublicKey,
      log: this.log,
      allowFileUris: opts.allowFileUris ?? false,
      onServed: (bytes) => {
        this.servedBytes += bytes;
      },
      pace: (body) => this.governance.pace(body),
      admit,
    });
    this.jobs = new JobRunner(
      this.manager,
      {
        import: importJobHandler({
          store,
          agentId: () => this.identity!.agentId,
          allowFileUris: opts.allowFileUris ?? false,
          admit,
        }),
        delete: deleteJobHandler(store),
        relocate: relocateJobHandler({
          store,
          manager: this.manager,
          tracker: this.relocation,
          retire: (datasetId, morsels, keepMs) => store.retire(datasetId, morsels, keepMs),
          admit,
        }),
      },
      this.log,
    );
  }

  /**
   * A donor receives a PUT for a dataset it has not declared when another donor distributes a
   * stream import: declare it if the manager says it is being imported.
   */
  private async prepareDataset(datasetId: string): Promise<boolean> {
    try {
      const d = await this.manager.request<DatasetView>('GET', `/datasets/${datasetId}`);
      // A PUT reaching here passed its write capability: the manager sends them for imports and
      // for relocations (quota cuts on another donor), which move morsels of ready datasets.
      if (d.state !== 'importing' && d.state !== 'ready') return false;
      await this.store.create(datasetId, { morselSize: d.morselSize });
      return true;
    } catch {
      return false;
    }
  }

  /** Open the store, start serving, enroll if needed and begin heartbeats. */
  static async start(opts: AgentOptions): Promise<AgentDaemon> {
    const settings = await loadSettings(opts.dir);
    const governorFile = await loadGovernorFile(opts.dir);
    const quotaBytes = opts.quotaBytes ?? settings.quotaBytes;
    if (quotaBytes === undefined) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        'no quota set: pass --quota SIZE (e.g. 20GiB)',
      );
    }
    const identity = await loadIdentity(opts.dir);
    if (!identity && !opts.token) {
      throw new FreeLoaderError(
        'JOIN_TOKEN_INVALID',
        'this agent is not enrolled yet: pass --token (an admin creates one with `freeloader token create`)',
      );
    }
    const storeDir = join(opts.dir, 'store');
    const fsStore = await FsStore.open(storeDir, {
      quotaBytes: opts.bandwidthOnly ? 0 : quotaBytes,
    });
    const store: RetiringStore = new RetiringStore(fsStore, {
      log: opts.logger,
      diskShort: () => diskShort(storeDir, store.usage().freeBytes),
    });
    try {
      if (!opts.bandwidthOnly) await checkQuotaFits(storeDir, quotaBytes, store.usage().usedBytes);
    } catch (e) {
      await store.close();
      throw e;
    }
    store.startSweeping();
    await saveSettings(opts.dir, { ...settings, quotaBytes });
    let daemon: AgentDaemon;
    try {
      daemon = new AgentDaemon(opts, store, identity, governorFile);
    } catch (e) {
      // E.g. a malformed manager URL: the store is open and must not stay locked.
      await store.close();
      throw e;
    }
    try {
      await daemon.governance.start();
      await daemon.listen();
      if (!identity) await daemon.enroll(opts.token!, quotaBytes);
    } catch (e) {
      await daemon.stop();
      throw e;
    }
    daemon.beatSoon(0);
    return daemon;
  }

  private async listen(): Promise<void> {
    const host = this.opts.listenHost ?? '127.0.0.1';
    const address = await listenMorselService(this.service, host, this.opts.listenPort ?? 0);
    this.url = this.opts.advertiseUrl ?? address;
    this.log.info({ url: this.url }, 'morsel service listening');
  }

  private async enroll(token: string, quotaBytes: number): Promise<void> {
    this.setStatus('enrolling');
    const name = this.opts.name ?? hostname();
    const res = await this.manager.enroll({
      token,
      name,
      url: this.url,
      quotaBytes: this.opts.bandwidthOnly ? 0 : quotaBytes,
      bandwidthOnly: this.opts.bandwidthOnly ?? false,
    });
    const identity: Identity = {
      agentId: res.agentId,
      credential: res.credential,
      managerUrl: this.manager.baseUrl,
      managerPublicKey: res.managerPublicKey,
      name,
      enrolledAt: new Date().toISOString(),
    };
    await saveIdentity(this.opts.dir, identity);
    this.useIdentity(identity);
    this.intervalMs = this.opts.heartbeatIntervalMs ?? res.heartbeatIntervalMs;
    this.log.info({ agentId: res.agentId }, 'enrolled');
    this.emit('enrolled', identity);
  }

  private useIdentity(identity: Identity): void {
    this.identity = identity;
    this.manager.setCredentials({
      kind: 'agent',
      agentId: identity.agentId,
      credential: identity.credential,
    });
  }

  private beatSoon(delayMs: number): void {
    if (this.stopping) return;
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = setTimeout(() => void this.beat(), delayMs);
    this.heartbeatTimer.unref?.();
  }

  private async beat(): Promise<void> {
    try {
      const res = await this.manager.heartbeat(this.heartbeatBody());
      this.failures = 0;
      // A restarted agent never enrolls again: the heartbeat answer is where it learns the
      // manager's interval (else it would beat at the protocol default and look stale).
      if (res.heartbeatIntervalMs > 0) {
        this.intervalMs = this.opts.heartbeatIntervalMs ?? res.heartbeatIntervalMs;
      }
      this.setStatus('online');
      this.diagnostics.ensure();
      if (!this.reconciled) {
        // Reconcile before taking jobs, so a fresh import is never mistaken for a leftover.
        this.reconciled = true;
        await reconcileStore(this.store, this.manager, this.log).then(
          () => this.jobs.start(),
          (e: unknown) => {
            this.reconciled = false;
            this.log.warn({ err: errText(e) }, 'store reconciliation failed; will retry');
          },
        );
      } else if (res.jobsPending) {
        this.jobs.poke();
      }
      this.beatSoon(this.intervalMs);
    } catch (e) {
      if (isFreeLoaderError(e) && (e.code === 'AGENT_REVOKED' || e.status === 401)) {
        this.setStatus('revoked');
        this.log.error(
          { err: e.message },
          'manager refused this agent; re-enroll with a new token',
        );
        this.beatSoon(RETRY_MAX_MS);
        return;
      }
      this.setStatus('offline');
      const delay = backoffDelay(this.failures++, RETRY_BASE_MS, RETRY_MAX_MS);
      this.log.warn({ err: errText(e), retryInMs: delay }, 'heartbeat failed; still serving');
      this.beatSoon(delay);
    }
  }

  private heartbeatBody(): Heartbeat {
    const now = performance.now();
    const seconds = Math.max((now - this.lastBeat.at) / 1000, 0.001);
    const servingRate = (this.servedBytes - this.lastBeat.served) / seconds;
    this.lastBeat = { at: now, served: this.servedBytes };
    const usage = this.store.usage();
    return {
      quotaBytes: usage.quotaBytes,
      usedBytes: usage.usedBytes,
      freeBytes: usage.freeBytes,
      servingRate: Math.round(servingRate),
      url: this.url,
      ...this.governance.heartbeatFields(),
      ...this.diagnostics.heartbeatFields(),
    };
  }

  private setStatus(status: AgentStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.emit('status', status);
  }

  /** Stop heartbeats, close the listener (finishing in-flight reads) and the store. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.heartbeatTimer);
    this.diagnostics.stop();
    this.governance.stop();
    await this.jobs.stop();
    await this.patching.close().catch(() => undefined);
    await this.service.close().catch(() => undefined);
    await this.store.close().catch(() => undefined);
    await this.manager.close().catch(() => undefined);
    this.setStatus('stopped');
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
