import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { FreeLoaderError, clampThrottleReasons, type Heartbeat } from '@freeloader/protocol';
import { Governor, SYSTEM_CLOCK, type GovernorClock, type GovernorDecision } from './governor.js';
import { mergeSettings, type GovernorSettings } from './governor-settings.js';
import { loadGovernorFile, saveGovernorFile, type GovernorFile } from './governor-file.js';
import {
  NO_OWNER_INPUT,
  OwnerIdle,
  platformIdleSource,
  type OwnerIdleSource,
} from './owner-idle.js';
import { paceBody } from './paced-stream.js';
import { pauseFor, type Pause, type PauseSpan } from './pause.js';
import { nativeSample } from './native-sample.js';
import { UNKNOWN_SAMPLE, type MonitorSample } from './sample.js';
import { defaultProbe } from './default-probe.js';
import type { SystemFigures, SystemProbe } from './system-probe.js';
import { TokenBucket } from './token-bucket.js';
import { TransferGate } from './transfer-gate.js';

/**
 * Which way a governed background transfer moves bytes: `in` = pulled from elsewhere and
 * written here (imports, patch downloads), `out` = read here and sent (relocation pushes).
 */
export type TransferDirection = 'in' | 'out';

/** How often owner input is looked at when something can tell (ms): a drop within a second. */
const OWNER_POLL_MS = 250;
/** How often the machine is measured (ms). */
const SYSTEM_POLL_MS = 1_000;

/**
 * How often the governor re-decides from owner input (ms). With nothing that can tell owner
 * input (a headless Linux, Wayland without the tray) a tick between two machine samples sees
 * nothing new — the tray's reports are applied at once, not polled — so it runs at the machine
 * sample's pace: 4 wake-ups a second fewer on an idle donor.
 *
 * @example ownerPollMs(NO_OWNER_INPUT, undefined, 1000) // → 1000
 * @example ownerPollMs(platformIdleSource(), undefined, 1000) // → 250 where xprintidle is asked
 */
export function ownerPollMs(
  source: OwnerIdleSource,
  configured: number | undefined,
  systemPollMs: number,
): number {
  return configured ?? (source === NO_OWNER_INPUT ? systemPollMs : OWNER_POLL_MS);
}

/** {@link Governance.admit} as the jobs and patch sessions see it. */
export type AdmitTransfer = (
  bytes: number,
  direction: TransferDirection,
  signal?: AbortSignal,
) => Promise<void>;

export interface GovernanceOptions {
  /** State directory: `governor.json` (settings and pause) lives here. */
  dir: string;
  log: Logger;
  /** Bytes this agent has served so far (cumulative), to subtract its own share. */
  servedBytes: () => number;
  /** Owner idle time from elsewhere (Electron's powerMonitor); default: the platform's. */
  idleSource?: OwnerIdleSource;
  /** Machine figures; default systeminformation (none with FREELOADER_IGNORE_LOAD=1). */
  probe?: SystemProbe;
  clock?: GovernorClock;
  /**
   * How often owner input is looked at (ms): bounds how fast serving drops. Default 250, or
   * `systemPollMs` when nothing on this platform can tell owner input ({@link ownerPollMs}).
   */
  idlePollMs?: number;
  /** How often the machine is measured (ms). Default 1000. */
  systemPollMs?: number;
  /** Timer for paced transfers (tests pass one that advances their clock). */
  sleep?: ConstructorParameters<typeof TransferGate>[2];
}

/** What the settings UI and the tray show about the governor. */
export interface GovernanceStatus {
  /** The cap is null when unlimited (JSON has no Infinity). */
  decision: Omit<GovernorDecision, 'capBps'> & { capBps: number | null };
  sample: MonitorSample;
  settings: GovernorSettings;
  pause: Pause | null;
}

/**
 * The governor at work in the daemon: polls owner input every `idlePollMs` and the machine every
 * `systemPollMs`, feeds the state machine, and sets the serving token bucket's rate. The morsel
 * service hands every response body to {@link Governance.pace}; imports, patch downloads and
 * relocation pushes ask {@link Governance.admit} before moving bytes, through the same bucket.
 */
export class Governance {
  readonly bucket: TokenBucket;
  readonly governor: Governor;
  readonly idle: OwnerIdle;
  /** Background transfers: paced by {@link bucket}, held (not failed) while paused. */
  readonly transfers: TransferGate;
  private settings: GovernorSettings;
  private figures: SystemFigures | undefined;
  private sample: MonitorSample = UNKNOWN_SAMPLE;
  private served = { bytes: 0, at: 0, bps: 0 };
  /** Bytes admitted for background transfers so far, by direction (own traffic, subtracted). */
  private moved = { in: 0, out: 0 };
  private received = { bytes: 0, bps: 0 };
  private timers: NodeJS.Timeout[] = [];
  private probing = false;
  private ticking = false;
  private readonly idleSource: OwnerIdleSource;

  /** Build from the loaded `governor.json` ({@link loadGovernorFile}); {@link start} runs it. */
  constructor(
    private readonly opts: GovernanceOptions,
    file: GovernorFile,
  ) {
    const clock = opts.clock ?? SYSTEM_CLOCK;
    this.settings = file.settings;
    this.governor = new Governor(file.settings, clock, file.pause);
    this.bucket = new TokenBucket(0, () => clock.now());
    this.transfers = new TransferGate(
      this.bucket,
      () => this.governor.decision.state === 'paused',
      opts.sleep,
    );
    this.idleSource = opts.idleSource ?? platformIdleSource();
    this.idle = new OwnerIdle(this.idleSource, () => clock.now());
    this.served = { bytes: opts.servedBytes(), at: clock.now(), bps: 0 };
  }

  /**
   * Load `governor.json` from `opts.dir` and start governing.
   *
   * @example const g = await Governance.open({ dir, log, servedBytes: () => served });
   */
  static async open(opts: GovernanceOptions): Promise<Governance> {
    const g = new Governance(opts, await loadGovernorFile(opts.dir));
    await g.start();
    return g;
  }

  /** Begin polling owner input and the machine; the first decision is made before returning. */
  async start(): Promise<void> {
    if (this.timers.length > 0) return;
    const probe = this.opts.probe ?? defaultProbe();
    const systemEvery = this.opts.systemPollMs ?? SYSTEM_POLL_MS;
    const ownerEvery = ownerPollMs(this.idleSource, this.opts.idlePollMs, systemEvery);
    if (ownerEvery === systemEvery) {
      // One wake-up a second: decide right after each machine sample, from fresh figures.
      this.timers.push(
        setInterval(() => void this.probe(probe).then(() => this.tick()), systemEvery),
      );
    } else {
      this.timers.push(
        setInterval(() => void this.tick(), ownerEvery),
        setInterval(() => void this.probe(probe), systemEvery),
      );
    }
    for (const t of this.timers) t.unref();
    await this.probe(probe);
    await this.tick();
  }

  /**
   * A GET response body, paced at the current cap (a buffer goes out unchanged while serving is
   * unlimited; streams are always wrapped so a cap set mid-stream still bites). Throws UNAVAILABLE
   * while paused, and aborts streams that are running when a pause starts.
   */
  pace(body: Buffer | Readable): Buffer | Readable {
    const refused = this.refusal();
    if (refused) throw refused;
    if (Buffer.isBuffer(body) && !Number.isFinite(this.bucket.rate)) return body;
    return paceBody(body, this.bucket, { refuse: () => this.refusal() });
  }

  /**
   * Wait until `bytes` of background transfer may move: paced with serving at the governor's
   * cap, and held while donating is paused (resolves after the pause; rejects only on `signal`).
   *
   * @example await governance.admit(morsel.length, 'in', ctx.signal); // then fetch it
   */
  async admit(bytes: number, direction: TransferDirection, signal?: AbortSignal): Promise<void> {
    await this.transfers.admit(bytes, signal);
    this.moved[direction] += bytes;
  }

  /** The governor's part of a heartbeat. */
  heartbeatFields(): Pick<Heartbeat, 'throttle' | 'throttleReasons' | 'rateCap' | 'cpuLoad'> {
    const d = this.governor.decision;
    return {
      throttle: d.state,
      throttleReasons: clampThrottleReasons(d.reasons),
      ...(d.capBps > 0 ? { rateCap: Number.isFinite(d.capBps) ? Math.round(d.capBps) : 0 } : {}),
      ...(this.figures?.cpu != null ? { cpuLoad: this.figures.cpu } : {}),
    };
  }

  status(): GovernanceStatus {
    const d = this.governor.decision;
    return {
      decision: { ...d, capBps: Number.isFinite(d.capBps) ? d.capBps : null },
      sample: this.sample,
      settings: this.settings,
      pause: this.governor.pause,
    };
  }

  async updateSettings(patch: Partial<GovernorSettings>): Promise<GovernorSettings> {
    const next = mergeSettings(this.settings, patch);
    this.settings = next;
    this.governor.setSettings(next);
    await this.persist();
    await this.tick();
    return next;
  }

  async pauseFor(span: PauseSpan): Promise<Pause> {
    const pause = pauseFor(span, (this.opts.clock ?? SYSTEM_CLOCK).wall());
    this.governor.setPause(pause);
    await this.persist();
    await this.tick();
    return pause;
  }

  async resume(): Promise<void> {
    this.governor.setPause(null);
    await this.persist();
    await this.tick();
  }

  /** Owner input reported from outside (the tray's powerMonitor, or a test). Applied at once. */
  async reportIdle(idleMs: number): Promise<void> {
    this.idle.report(idleMs);
    await this.tick();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  private refusal(): FreeLoaderError | undefined {
    return this.governor.decision.state === 'paused'
      ? new FreeLoaderError('UNAVAILABLE', 'this donor is paused by its owner; try another copy')
      : undefined;
  }

  /** Owner input + the latest machine figures → a decision → the bucket's rate. */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const ownerIdleMs = await this.idle.read().catch(() => null);
      const hadPause = this.governor.pause;
      this.sample = {
        ...nativeSample(this.figures, this.served.bps, this.received.bps),
        ownerIdleMs,
      };
      const before = this.governor.decision;
      const d = this.governor.update(this.sample);
      this.bucket.setRate(d.capBps === 0 ? Infinity : d.capBps);
      if (d.state !== before.state || d.capBps !== before.capBps) {
        this.opts.log.info(
          { state: d.state, capBps: d.capBps, reasons: d.reasons },
          'serving governor changed',
        );
      }
      this.transfers.wake();
      // A timed pause that ran out is forgotten on disk too.
      if (hadPause && !this.governor.pause) await this.persist();
    } finally {
      this.ticking = false;
    }
  }

  private async probe(probe: SystemProbe): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      this.figures = await probe.read();
      const clock = this.opts.clock ?? SYSTEM_CLOCK;
      const now = clock.now();
      // Relocation pushes leave like served bytes (disk read, network send); imports and patch
      // downloads arrive (network receive, disk write).
      const bytes = this.opts.servedBytes() + this.moved.out;
      const seconds = (now - this.served.at) / 1000;
      if (seconds > 0) {
        this.served = { bytes, at: now, bps: Math.max(0, bytes - this.served.bytes) / seconds };
        const inBytes = this.moved.in;
        this.received = { bytes: inBytes, bps: (inBytes - this.received.bytes) / seconds };
      }
    } catch (e) {
      this.opts.log.debug({ err: String(e) }, 'system probe failed');
    } finally {
      this.probing = false;
    }
  }

  private async persist(): Promise<void> {
    await saveGovernorFile(this.opts.dir, {
      settings: this.settings,
      pause: this.governor.pause,
    });
  }
}
