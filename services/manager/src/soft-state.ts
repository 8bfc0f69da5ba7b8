import { performance } from 'node:perf_hooks';
import type { Heartbeat } from '@freeloader/protocol';
import type { EventBus } from './events.js';
import type { SoftStateRow } from './repositories/agents.js';

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
}

/** Ended outages kept for {@link SoftState.takeOutages} at most (the oldest go first). */
const MAX_PENDING_OUTAGES = 1_000;

/** A silence past the stale threshold that a sighting ended. */
export interface EndedOutage {
  agentId: string;
  /** Milliseconds from the last sighting before it to the one that ended it. */
  silentMs: number;
}

interface Entry {
  lastSeen: number;
  seenAt: Date;
  heartbeat: Heartbeat | undefined;
  /** State last announced on the bus, so each change is published once. */
  announced: Liveness;
  dirty: boolean;
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

  constructor(private readonly opts: SoftStateOptions) {
    this.clock = opts.clock ?? (() => performance.now());
    this.wallClock = opts.wallClock ?? (() => new Date());
    this.startedAt = this.clock();
  }

  /** Note a sighting (enrollment or heartbeat); publishes `live` when the agent was not. */
  record(agentId: string, heartbeat?: Heartbeat): void {
    const previous = this.stateOf(agentId);
    const entry = this.entries.get(agentId);
    const now = this.clock();
    // Noted here, not sampled by a later loop: an outage can end well within one of its ticks.
    if (entry && previous !== 'live') {
      this.outages.push({ agentId, silentMs: Math.round(now - entry.lastSeen) });
      if (this.outages.length > MAX_PENDING_OUTAGES) this.outages.shift();
    }
    const next: Entry = {
      lastSeen: now,
      seenAt: this.wallClock(),
      heartbeat: heartbeat ?? entry?.heartbeat,
      announced: 'live',
      dirty: true,
    };
    this.entries.set(agentId, next);
    if (previous !== 'live' || entry?.announced !== 'live') {
      this.opts.bus?.publish({ type: 'agent', agentId, state: 'live' });
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
        this.opts.bus?.publish({ type: 'agent', agentId, state });
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

  private lastSeen(agentId: string): number {
    return this.entries.get(agentId)?.lastSeen ?? this.startedAt - this.opts.staleAfterMs;
  }
}
