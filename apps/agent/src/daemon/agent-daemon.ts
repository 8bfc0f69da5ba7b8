import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import {
  FreeLoaderError,
  HEARTBEAT_INTERVAL_MS,
  type DatasetView,
  type Heartbeat,
  type HeartbeatResponse,
  type LeaveProgress,
} from '@freeloader/protocol';
import { SourcePolicy } from '@freeloader/sources';
import { ManagerClient } from '../manager-client.js';
import { buildMorselService, listenMorselService } from '../service/morsel-service.js';
import { JobReportOutbox } from '../jobs/job-reports.js';
import { JobRunner } from '../jobs/job-runner.js';
import { attachPatching } from '../patching/attach-patching.js';
import type { PatchRegistry } from '../patching/patch-registry.js';
import { holdsBackgroundWork } from '../governor/background-hold.js';
import { ForegroundYield } from '../governor/foreground-yield.js';
import { Governance, type AdmitTransfer } from '../governor/governance.js';
import { loadGovernorFile, type GovernorFile } from '../governor/governor-file.js';
import { QuotaVersion } from '../relocation/quota-version.js';
import { RelocationTracker } from '../relocation/relocation-tracker.js';
import type { RetiringStore } from '../store/retiring-store.js';
import { loadIdentity, type Identity } from '../state/identity.js';
import { loadSettings, saveSettings } from '../state/settings-file.js';
import type { AgentOptions } from './agent-options.js';
import type { AgentStatus } from './agent-status.js';
import { installAgentMetrics } from './agent-metrics.js';
import { agentAuthorization, JoinDiagnostics } from './diagnostics.js';
import { OWNER_DISK_FLOOR_BYTES } from '../store/disk-space.js';
import type { ScrubSettings } from '../store/scrub-rate.js';
import { Scrubber } from '../store/scrubber.js';
import { FaultReporter } from './fault-reporter.js';
import { enroll } from './enrollment.js';
import { HeartbeatLoop } from './heartbeat-loop.js';
import { leaveCache } from './leave-cache.js';
import { donorJobHandlers } from './job-handlers.js';
import { openDonorStore } from './open-store.js';
import { reconcileStore } from './reconcile.js';
import { scrubSettingsFile, scrubSettingsOf } from './scrub-settings.js';

export type { AgentOptions } from './agent-options.js';

/** How often a donor whose disk filled up looks whether it has room again (milliseconds). */
const DISK_FULL_RECHECK_MS = 10_000;

/**
 * The donor daemon's composition: store, morsel service, governor, patching, jobs, diagnostics
 * and the heartbeat, wired together and started in order. Enrollment and the heartbeat loop are
 * their own modules; this class owns the parts' lifetimes and what they share.
 */
export class AgentDaemon extends EventEmitter {
  status: AgentStatus = 'starting';
  identity: Identity | null = null;
  url = '';
  /** The morsel store; relocated morsels stay readable in it until old maps expire. */
  readonly store: RetiringStore;
  /** The serving governor: owner activity, contention, schedules and pauses → a paced rate. */
  readonly governance: Governance;
  /** Client reads served here hold this donor's repair traffic back (both ways). */
  readonly foreground = new ForegroundYield();
  private readonly service: FastifyInstance;
  /** The manager's API as this agent (the settings API uses it for quota changes). */
  readonly manager: ManagerClient;
  /** Progress of moving data off this donor after a quota cut. */
  readonly relocation = new RelocationTracker();
  /** The version of the store's quota that heartbeats carry (see QuotaVersion). */
  readonly quotaVersion = new QuotaVersion();
  private readonly jobs: JobRunner;
  private readonly reports: JobReportOutbox;
  /** Disk and network rates measured once after joining (seed 000 §5.2.1). */
  private readonly diagnostics: JoinDiagnostics;
  /** Collective downloads this agent patches for clients (seed 002). */
  private readonly patching: PatchRegistry;
  private readonly opts: AgentOptions;
  private readonly log: Logger;
  private readonly heartbeat: HeartbeatLoop;
  /** Re-hashes stored morsels in the background, paced, while the owner is away. */
  readonly scrubber: Scrubber;
  /** Morsels this donor dropped (scrub, start-up check), until the manager has them. */
  readonly faults: FaultReporter;
  private diskFullWatch: NodeJS.Timeout | undefined;
  /**
   * Where imports and patch downloads may connect: checked here on every connection, whatever
   * the manager asked for.
   */
  readonly sourcePolicy: SourcePolicy;
  private servedBytes = 0;
  private lastBeat = { at: performance.now(), served: 0 };
  private reconciled = false;
  /** How far a graceful leave has come (set once one started). */
  leaveProgress: LeaveProgress | undefined;
  private stopping = false;

  private constructor(
    opts: AgentOptions,
    store: RetiringStore,
    identity: Identity | null,
    governorFile: GovernorFile,
    scrub: ScrubSettings,
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
    this.manager = new ManagerClient(opts.managerUrl);
    this.sourcePolicy = new SourcePolicy(opts.sourceAllow ?? []);
    this.heartbeat = new HeartbeatLoop({
      manager: this.manager,
      body: () => this.heartbeatBody(),
      onAnswer: (res) => this.onHeartbeatAnswer(res),
      setStatus: (status) => this.setStatus(status),
      intervalMs: opts.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
      ...(opts.heartbeatIntervalMs !== undefined
        ? { fixedIntervalMs: opts.heartbeatIntervalMs }
        : {}),
      log: opts.logger,
    });
    this.faults = new FaultReporter({
      manager: this.manager,
      file: join(opts.dir, 'faults-pending.json'),
      log: opts.logger,
    });
    this.scrubber = new Scrubber({
      store,
      positionFile: join(opts.dir, 'scrub-position.json'),
      settings: () => scrub,
      // The owner is at the machine, or donating is paused: the scrub's disk reads wait.
      held: () => holdsBackgroundWork(this.governance.governor.decision.state),
      onBad: ({ datasetId, index }) => {
        this.log.warn({ datasetId, morsel: index }, 'scrub: bad hash, morsel dropped');
        void this.faults
          .add([{ datasetId, morsel: index, reason: 'corrupt', reportedBy: 'scrub' }])
          .catch((e: unknown) => this.log.warn({ err: errText(e) }, 'recording a fault failed'));
      },
      log: opts.logger,
    });
    this.diagnostics = new JoinDiagnostics({
      dir: opts.dir,
      managerUrl: this.manager.baseUrl,
      authorization: () => agentAuthorization(this.identity),
      managerCa: () => this.identity?.managerCa,
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
      foreground: this.foreground,
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
      sourcePolicy: this.sourcePolicy,
      onServed: (bytes) => {
        this.servedBytes += bytes;
      },
      pace: (body) => this.governance.pace(body),
      admit,
    });
    this.reports = new JobReportOutbox(
      opts.dir,
      async (jobId, report) => {
        await this.manager.request('POST', `/jobs/${jobId}/finish`, report);
      },
      this.log,
    );
    installAgentMetrics(this.service, {
      servedBytes: () => this.servedBytes,
      governor: () => this.governance.status().decision,
      jobs: () => ({ running: this.jobs.active, reportsPending: this.reports.size }),
      usage: () => this.store.usage(),
    });
    this.jobs = new JobRunner(
      this.manager,
      donorJobHandlers({
        store,
        manager: this.manager,
        agentId: () => this.identity!.agentId,
        allowFileUris: opts.allowFileUris ?? false,
        sourcePolicy: this.sourcePolicy,
        admit,
        foreground: this.foreground,
        relocation: this.relocation,
      }),
      this.log,
      this.reports,
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
    const onDiskFull = { call: (): void => undefined };
    const { fsStore, store } = await openDonorStore({
      dir: opts.dir,
      quotaBytes,
      ...(opts.bandwidthOnly !== undefined ? { bandwidthOnly: opts.bandwidthOnly } : {}),
      logger: opts.logger,
      onDiskFull: () => onDiskFull.call(),
    });
    const scrub = scrubSettingsOf(opts.scrub, settings.scrub);
    await saveSettings(opts.dir, {
      ...settings,
      quotaBytes,
      ...scrubSettingsFile(opts.scrub, settings),
    });
    let daemon: AgentDaemon;
    try {
      daemon = new AgentDaemon(opts, store, identity, governorFile, scrub);
    } catch (e) {
      // E.g. a malformed manager URL: the store is open and must not stay locked.
      await store.close();
      throw e;
    }
    // The manager hears about a full disk at once, not at the next heartbeat; the donor
    // reports room again once the disk has the owner's floor free.
    onDiskFull.call = () => daemon.heartbeat.beatSoon(0);
    daemon.diskFullWatch = setInterval(() => {
      void fsStore.recheckDiskFull(OWNER_DISK_FLOOR_BYTES).catch(() => undefined);
    }, DISK_FULL_RECHECK_MS);
    daemon.diskFullWatch.unref();
    try {
      await daemon.reports.load();
      await daemon.faults.load();
      // Morsels whose data was missing or short at open are gone from the store: report them.
      await daemon.faults.add(
        fsStore.drainLost().map(({ datasetId, index }) => ({
          datasetId,
          morsel: index,
          reason: 'missing' as const,
          reportedBy: 'startup' as const,
        })),
      );
      await daemon.governance.start();
      await daemon.listen();
      if (!identity) await daemon.enroll(opts.token!, quotaBytes);
    } catch (e) {
      await daemon.stop();
      throw e;
    }
    daemon.heartbeat.beatSoon(0);
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
    const { identity, heartbeatIntervalMs } = await enroll(token, {
      manager: this.manager,
      dir: this.opts.dir,
      url: this.url,
      ...(this.opts.name !== undefined ? { name: this.opts.name } : {}),
      quotaBytes,
      bandwidthOnly: this.opts.bandwidthOnly ?? false,
    });
    this.useIdentity(identity);
    this.heartbeat.useInterval(heartbeatIntervalMs);
    this.log.info({ agentId: identity.agentId }, 'enrolled');
    this.emit('enrolled', identity);
  }

  private useIdentity(identity: Identity): void {
    this.identity = identity;
    if (identity.managerCa) this.manager.trustCa(identity.managerCa);
    this.manager.setCredentials({
      kind: 'agent',
      agentId: identity.agentId,
      credential: identity.credential,
    });
  }

  /** The manager's allow list; a malformed one is logged and the last good one kept. */
  private adoptSourceAllow(entries: readonly string[]): void {
    try {
      this.sourcePolicy.setShared(entries);
    } catch (e) {
      this.log.warn({ err: errText(e) }, "ignoring the manager's source allow list");
    }
  }

  /** The manager answered a heartbeat: reconcile once, then take jobs when some are pending. */
  private async onHeartbeatAnswer(res: HeartbeatResponse): Promise<void> {
    this.diagnostics.ensure();
    this.adoptSourceAllow(res.sourceAllow ?? []);
    if (!this.reconciled) {
      // Reconcile before taking jobs, so a fresh import is never mistaken for a leftover.
      this.reconciled = true;
      await reconcileStore(this.store, this.manager, this.log).then(
        () => {
          // Stopped while reconciling: nothing may start now (it would keep the process alive).
          if (this.stopping) return;
          this.jobs.start();
          this.faults.enable();
          this.scrubber.start();
        },
        (e: unknown) => {
          this.reconciled = false;
          this.log.warn({ err: errText(e) }, 'store reconciliation failed; will retry');
        },
      );
    } else {
      // The manager is back (or still there): reports it could not take go now.
      this.reports.nudge();
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
      quotaVersion: this.quotaVersion.current,
      usedBytes: usage.usedBytes,
      freeBytes: usage.freeBytes,
      ...(usage.diskFull ? { diskFull: true } : {}),
      servingRate: Math.round(servingRate),
      url: this.url,
      ...this.governance.heartbeatFields(),
      ...this.diagnostics.heartbeatFields(),
      ...(this.jobs.active > 0 ? { runningJobs: this.jobs.runningIds() } : {}),
    };
  }

  private setStatus(status: AgentStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.emit('status', status);
  }

  /**
   * Leave the cache gracefully: the manager re-creates this donor's copies elsewhere (reading
   * them from here while it works), then releases it; `onProgress` hears how much is left at
   * every poll. Once released, the local store is emptied (nothing here is placed any more).
   */
  async leave(onProgress?: (p: LeaveProgress) => void): Promise<void> {
    await leaveCache({
      manager: this.manager,
      store: this.store,
      log: this.log,
      stopping: () => this.stopping,
      onProgress: (p) => {
        this.leaveProgress = p;
        onProgress?.(p);
      },
    });
  }

  /** Stop heartbeats, close the listener (finishing in-flight reads) and the store. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.heartbeat.stop();
    this.diagnostics.stop();
    this.governance.stop();
    clearInterval(this.diskFullWatch);
    await this.scrubber.stop();
    await this.jobs.stop();
    await this.faults.close();
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
