import { describe, expect, it } from 'vitest';
import type { FreeLoaderEvent, Heartbeat } from '@freeloader/protocol';
import { EventBus } from './events.js';
import { SoftState } from './soft-state.js';

const A = '11111111-1111-4111-8111-111111111111';
const hb: Heartbeat = { quotaBytes: 100, usedBytes: 10, freeBytes: 90, servingRate: 5 };

function setup() {
  let now = 1_000;
  const bus = new EventBus();
  const events: FreeLoaderEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const soft = new SoftState({ staleAfterMs: 100, deadAfterMs: 1_000, clock: () => now, bus });
  return { soft, events, advance: (ms: number) => (now += ms) };
}

describe('SoftState', () => {
  it.each([
    [0, 'live'],
    [99, 'live'],
    [100, 'stale'],
    [999, 'stale'],
    [1_000, 'dead'],
    [50_000, 'dead'],
  ] as const)('%i ms after a heartbeat an agent is %s', (ms, state) => {
    const { soft, advance } = setup();
    soft.record(A, hb);
    advance(ms);
    expect(soft.stateOf(A)).toBe(state);
    expect(soft.lastSeenAgoMs(A)).toBe(ms);
  });

  it('announces live → stale → dead once each, and live again on a heartbeat', () => {
    const { soft, events, advance } = setup();
    soft.record(A, hb);
    soft.record(A, hb);
    expect(soft.sweep()).toEqual([]);
    advance(150);
    expect(soft.sweep()).toEqual([{ agentId: A, state: 'stale' }]);
    expect(soft.sweep()).toEqual([]);
    advance(1_000);
    expect(soft.sweep()).toEqual([{ agentId: A, state: 'dead' }]);
    soft.record(A, hb);
    expect(events.map((e) => (e.type === 'agent' ? e.state : e.type))).toEqual([
      'live',
      'stale',
      'dead',
      'live',
    ]);
  });

  it('notes each outage a sighting ends, however soon after stale, and hands it over once', () => {
    const { soft, advance } = setup();
    soft.record(A, hb); // first sighting since start: no outage known
    advance(99);
    soft.record(A, hb); // still live: no outage
    expect(soft.takeOutages()).toEqual([]);
    advance(101);
    soft.record(A, hb); // stale for 1 ms only
    advance(1_500);
    soft.record(A, hb); // dead, then back
    expect(soft.takeOutages()).toEqual([
      { agentId: A, silentMs: 101, knownVersion: null },
      { agentId: A, silentMs: 1_500, knownVersion: null },
    ]);
    expect(soft.takeOutages()).toEqual([]);
  });

  it('treats an agent unseen since start as stale, then dead', () => {
    const { soft, advance } = setup();
    expect(soft.stateOf(A)).toBe('stale');
    expect(soft.lastSeenAgoMs(A)).toBeNull();
    advance(900);
    expect(soft.stateOf(A)).toBe('dead');
  });

  it('hands out each sighting once for the flush, and again after a failed write', () => {
    const { soft } = setup();
    soft.record(A, hb);
    const rows = soft.takeDirty();
    expect(rows).toEqual([{ agentId: A, seenAt: expect.any(Date), heartbeat: hb }]);
    expect(soft.takeDirty()).toEqual([]);
    soft.markDirty(rows);
    expect(soft.takeDirty()).toHaveLength(1);
  });

  it('shares an unchanged sighting again only after a third of the stale window', () => {
    const { soft, advance } = setup();
    soft.record(A, hb);
    expect(soft.takeDirty()).toHaveLength(1);
    // Same numbers (cpuLoad aside) 20 ms later: nothing the shared row does not say.
    advance(20);
    soft.record(A, { ...hb, cpuLoad: 0.7 });
    expect(soft.takeDirty()).toEqual([]);
    // New numbers are news at once.
    soft.record(A, { ...hb, freeBytes: 80 });
    expect(soft.takeDirty()).toEqual([
      { agentId: A, seenAt: expect.any(Date), heartbeat: { ...hb, freeBytes: 80 } },
    ]);
    // Unchanged again, 33 ms after the last write: still fresh enough; at 34 ms (≥ 100 / 3) not.
    advance(33);
    soft.record(A, { ...hb, freeBytes: 80 });
    expect(soft.takeDirty()).toEqual([]);
    advance(1);
    soft.record(A, { ...hb, freeBytes: 80 });
    expect(soft.takeDirty()).toHaveLength(1);
  });

  it('shares the sighting that ends a silence at once, numbers unchanged', () => {
    const { soft, advance } = setup();
    soft.record(A, hb);
    soft.takeDirty();
    advance(150); // stale
    soft.record(A, hb);
    expect(soft.takeDirty()).toHaveLength(1);
  });

  it('forgets revoked agents', () => {
    const { soft } = setup();
    soft.record(A, hb);
    soft.forget(A);
    expect(soft.heartbeatOf(A)).toBeUndefined();
    expect(soft.takeDirty()).toEqual([]);
  });

  it("takes in other managers' sightings without ending an outage here", () => {
    const { soft, events, advance } = setup();
    soft.record(A, hb);
    soft.noteVersions(new Map([[A, 4]]));
    advance(500); // stale here…
    soft.sweep();
    // …but another manager heard it 20 ms ago (version 9): live, announced by the sweep.
    soft.merge([{ agentId: A, ageMs: 20, heartbeat: { ...hb, servingRate: 9 }, version: 9 }]);
    expect(soft.stateOf(A)).toBe('live');
    expect(soft.heartbeatOf(A)?.servingRate).toBe(9);
    expect(soft.takeOutages()).toEqual([]);
    expect(soft.takeDirty()).toHaveLength(1); // this manager's own sighting, still to write
    soft.sweep();
    expect(events.map((e) => e.type === 'agent' && e.state)).toEqual(['live', 'stale', 'live']);
    // An older sighting never moves it back.
    soft.merge([{ agentId: A, ageMs: 400, heartbeat: hb, version: 10 }]);
    expect(soft.silentForMs(A)).toBe(20);
    // An outage ending here names the version this manager knew, for the write to check.
    advance(300);
    soft.record(A, hb);
    expect(soft.takeOutages()).toEqual([{ agentId: A, silentMs: 320, knownVersion: 10 }]);
  });

  it('keeps the numbers of a heartbeat whose estimated age puts it before the sighting it follows', () => {
    const { soft } = setup();
    // Enrolment (no numbers) shared first; the heartbeat's row arrives later, its age
    // estimate carrying more delay, so it looks older than the enrolment.
    soft.merge([{ agentId: A, ageMs: 10, heartbeat: null, version: 1 }]);
    soft.merge([{ agentId: A, ageMs: 30, heartbeat: hb, version: 2 }]);
    expect(soft.heartbeatOf(A)).toEqual(hb);
    expect(soft.lastSeenAgoMs(A)).toBe(10);
  });

  it('ignores sightings older than what it assumes of agents unseen since its start', () => {
    const { soft } = setup();
    // Seen 150 ms ago elsewhere: older than start minus the stale window (100 ms).
    soft.merge([{ agentId: A, ageMs: 150, heartbeat: hb, version: 1 }]);
    expect(soft.lastSeenAgoMs(A)).toBeNull();
    soft.merge([{ agentId: A, ageMs: 30, heartbeat: hb, version: 2 }]);
    expect(soft.lastSeenAgoMs(A)).toBe(30);
    expect(soft.stateOf(A)).toBe('live');
  });
});
