import { performance } from 'node:perf_hooks';
import type { Heartbeat } from '@freeloader/protocol';
import type { EventBus } from './events.js';
import { heartbeatChanged } from './heartbeat-change.js';
import { newerQuota } from './newer-quota.js';
import type { SoftStateRow } from './repositories/agents.js';
import type { OutageClaim, SharedSighting, Sighting } from './repositories/liveness.js';

/** Liveness derived from heartbeats alone (revocation is a database fact, not soft state). */
export type Liveness = 'live' | 'stale' | 'dead';

export interface SoftStateOptions {
  staleAfterMs: number;
  deadAfterMs: number;
  /** Monotonic milliseconds; `performance.now()` unless a test injects its own. */
  clock?: () => number;
  /** Wall clock for the `last_seen_at` display column only. */
  wallClock?: () => Date;
  bus?: EventBus;
  /**
   * A sighting that changes nothing but last-seen is written to the shared liveness table only
   * once the shared row is this old (ms); default {@link REWRITE_SHARE_OF_STALE} of the stale
   * window. 0 writes every sighting.
   */
  rewriteAfterMs?: number;
}

/**
 * Share of the stale window after which an unchanged sighting is shared again. Another manager
 * sees an agent's last-seen at most this much (plus a flush and a read, 1 s each by default)
 * older than it is: with the default 15 s window, 5 s, so an agent heartbeating every 5 s is
 * judged stale elsewhere after 11–12 s of real silence at worst, never while heartbeating. At
 * 1,000 idle agents this halved the rows written per flush (one heartbeat in two).
 */
export const REWRITE_SHARE_OF_STALE = 1 / 3;

/** Ended outages kept for {@link SoftState.takeOutages} at most (the oldest go first). */
const MAX_PENDING_OUTAGES = 1_000;

/**
 * A silence past the stale threshold that a sighting ended: milliseconds from the last sighting
 * before it (on any manager) to the one that ended it, with the shared-liveness version this
 * manager knew then (see {@link OutageClaim}).
 */
export type EndedOutage = OutageClaim;

interface Entry {
  lastSeen: number;
  seenAt: Date;
  heartbeat: Heartbeat | undefined;
  /** State last announced on the bus, so each change is published once. */
  announced: Liveness;
  dirty: boolean;
  /** `lastSeen` as the shared liveness table last knew it (written or read; null: never). */
  sharedSeen: number | null;
  /** The shared-liveness row's version this view last knew (null: none yet). */
  version: number | null;
}

/**
 * In-memory last-seen per agent on the manager's own monotonic clock: wall-clock jumps on
 * either side cannot make an agent look alive or dead. live → stale after `staleAfterMs` of
 * silence, → dead after `deadAfterMs`.
 *
 * An agent not heard from since this manager started counts as last seen `staleAfterMs` before
 * the start: stale at once (nothing is read from it until it heartbeats) and dead if it stays
 * silent for the rest of the dead window.
 *
 * @example
 *   const s = new SoftState({ staleAfterMs: 15_000, deadAfterMs: 120_000 });
 *   s.record(agentId, heartbeat); s.stateOf(agentId) // 'live'
 */
export class SoftState {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: () => number;
  private readonly wallClock: () => Date;
  private readonly startedAt: number;
  private outages: EndedOutage[] = [];
  private readonly rewriteAfterMs: number;

  constructor(private readonly opts: SoftStateOptions) {
    this.rewriteAfterMs = opts.rewriteAfterMs ?? opts.staleAfterMs * REWRITE_SHARE_OF_STALE;
    this.clock = opts.clock ?? (() => performance.now());
    this.wallClock = opts.wallClock ?? (() => new Date());
    this.startedAt = this.clock();
  }

  /**
   * Note a sighting (enrollment or heartbeat); publishes `live` when the agent was not. It is
   * marked for the next flush when it is news: a first sighting, the end of a silence, changed
   * heartbeat numbers, or a shared last-seen older than the rewrite window.
   */
  record(agentId: string, sent?: Heartbeat): void {
    const previous = this.stateOf(agentId);
    const entry = this.entries.get(agentId);
    const heartbeat = sent && newerQuota(entry?.heartbeat, sent);
    const now = this.clock();
    // Noted here, not sampled by a later loop: an outage can end well within one of its ticks.
    if (entry && previous !== 'live') {
      this.outages.push({
        agentId,
        silentMs: Math.round(now - entry.lastSeen),
        knownVersion: entry.version,
      });
      if (this.outages.length > MAX_PENDING_OUTAGES) this.outages.shift();
    }
    const sharedSeen = entry?.sharedSeen ?? null;
    const dirty =
      !entry ||
      entry.dirty ||
      previous !== 'live' ||
      sharedSeen === null ||
      now - sharedSeen >= this.rewriteAfterMs ||
      (heartbeat !== undefined && heartbeatChanged(entry.heartbeat, heartbeat));
    const next: Entry = {
      lastSeen: now,
      seenAt: this.wallClock(),
      heartbeat: heartbeat ?? entry?.heartbeat,
      announced: 'live',
      dirty,
      sharedSeen,
      version: entry?.version ?? null,
    };
    this.entries.set(agentId, next);
    if (previous !== 'live' || entry?.announced !== 'live') {
      this.announce(agentId, 'live');
    }
  }

  stateOf(agentId: string): Liveness {
    const age = this.clock() - this.lastSeen(agentId);
    if (age >= this.opts.deadAfterMs) return 'dead';
    if (age >= this.opts.staleAfterMs) return 'stale';
    return 'live';
  }

  /** Milliseconds since the last sighting; null when not seen since this manager started. */
  lastSeenAgoMs(agentId: string): number | null {
    const entry = this.entries.get(agentId);
    return entry ? Math.max(0, Math.round(this.clock() - entry.lastSeen)) : null;
  }

  /**
   * Milliseconds of silence on the monotonic clock; an agent not seen since this manager
   * started counts from the start minus the stale window (as {@link stateOf} does).
   */
  silentForMs(agentId: string): number {
    return Math.max(0, this.clock() - this.lastSeen(agentId));
  }

  /**
   * Outages (silent past stale, then seen again) ended since the last call, oldest first; only
   * of agents seen since this manager started, whose silence is known.
   */
  takeOutages(): EndedOutage[] {
    const ended = this.outages;
    this.outages = [];
    return ended;
  }

  heartbeatOf(agentId: string): Heartbeat | undefined {
    return this.entries.get(agentId)?.heartbeat;
  }

  /** Drop an agent (revoked): it will not be flushed or announced again. */
  forget(agentId: string): void {
    this.entries.delete(agentId);
  }

  /** Publish every state change since the last sweep; returns the changes. */
  sweep(): Array<{ agentId: string; state: Liveness }> {
    const changes: Array<{ agentId: string; state: Liveness }> = [];
    for (const [agentId, entry] of this.entries) {
      const state = this.stateOf(agentId);
      if (state !== entry.announced) {
        entry.announced = state;
        changes.push({ agentId, state });
        this.announce(agentId, state);
      }
    }
    return changes;
  }

  /** Sightings not yet written to the database; clears their dirty marks. */
  takeDirty(): SoftStateRow[] {
    const rows: SoftStateRow[] = [];
    for (const [agentId, entry] of this.entries) {
      if (!entry.dirty) continue;
      entry.dirty = false;
      entry.sharedSeen = entry.lastSeen;
      rows.push({ agentId, seenAt: entry.seenAt, heartbeat: entry.heartbeat });
    }
    return rows;
  }

  /** Re-mark rows whose write failed so the next flush retries them. */
  markDirty(rows: readonly SoftStateRow[]): void {
    for (const row of rows) {
      const entry = this.entries.get(row.agentId);
      if (entry) entry.dirty = true;
    }
  }

  /** Dirty sightings as rows of the shared liveness table: their age now, their heartbeat. */
  sightingsOf(rows: readonly SoftStateRow[]): Sighting[] {
    const now = this.clock();
    return rows.flatMap((r) => {
      const entry = this.entries.get(r.agentId);
      return entry
        ? [{ agentId: r.agentId, ageMs: now - entry.lastSeen, heartbeat: r.heartbeat }]
        : [];
    });
  }

  /** Outages a failed write must retry (put back ahead of newer ones). */
  restoreOutages(outages: readonly EndedOutage[]): void {
    this.outages = [...outages, ...this.outages].slice(-MAX_PENDING_OUTAGES);
  }

  /** Note the versions the shared liveness table gave this manager's own writes. */
  noteVersions(versions: ReadonlyMap<string, number>): void {
    for (const [agentId, version] of versions) {
      const entry = this.entries.get(agentId);
      if (entry && (entry.version ?? 0) < version) entry.version = version;
    }
  }

  /**
   * Take in sightings other managers wrote: an agent seen more recently elsewhere moves its
   * last sighting forward (never back), without counting as a sighting here (no outage ends
   * on this manager; the sweep announces the state change). Sightings older than what this
   * manager assumes of an agent it has not seen (start minus the stale window) change
   * nothing, so time all managers were down never counts as an agent's silence.
   */
  merge(rows: readonly SharedSighting[]): void {
    const now = this.clock();
    const floor = this.startedAt - this.opts.staleAfterMs;
    for (const row of rows) {
      const seen = now - row.ageMs;
      const entry = this.entries.get(row.agentId);
      if (entry && (entry.version ?? 0) < row.version) entry.version = row.version;
      // Age estimates carry each manager's write and read delays (tens of ms on a busy
      // machine), so a heartbeat can look older than the enrollment that preceded it: its
      // numbers are still better than none.
      if (entry && !entry.heartbeat && row.heartbeat) entry.heartbeat = row.heartbeat;
      if (seen <= (entry?.lastSeen ?? floor)) continue;
      const announced = entry?.announced ?? this.stateOf(row.agentId);
      this.entries.set(row.agentId, {
        lastSeen: seen,
        seenAt: new Date(this.wallClock().getTime() - row.ageMs),
        heartbeat: row.heartbeat ?? entry?.heartbeat,
        announced,
        dirty: entry?.dirty ?? false,
        sharedSeen: seen,
        version: Math.max(entry?.version ?? 0, row.version),
      });
    }
  }

  /**
   * Liveness transitions are derived by every manager from the same shared view: published
   * here only, or each console would get one per manager.
   */
  private announce(agentId: string, state: Liveness): void {
    this.opts.bus?.publish({ type: 'agent', agentId, state }, 'local');
  }

  private lastSeen(agentId: string): number {
    return this.entries.get(agentId)?.lastSeen ?? this.startedAt - this.opts.staleAfterMs;
  }
}
