import { describe, expect, it } from 'vitest';
import { MinBuckets } from './availability-buckets.js';
import { EventQueue } from './availability-events.js';
import { gamma, seededRandom, weibullMean } from './availability-random.js';
import { simulateAvailability } from './availability-sim.js';

const DAY = 86400;
const YEAR = 365 * DAY;

describe('EventQueue', () => {
  it('pops by time, ties in insertion order', () => {
    /** @type {EventQueue<string>} */
    const q = new EventQueue();
    q.push(5, 'e');
    q.push(1, 'a');
    q.push(3, 'c1');
    q.push(3, 'c2');
    q.push(0, 'z');
    q.push(3, 'c3');
    const order = [];
    for (let e = q.pop(); e !== undefined; e = q.pop()) order.push(e.ev);
    expect(order).toEqual(['z', 'a', 'c1', 'c2', 'c3', 'e']);
  });

  it('sorts a random batch', () => {
    const rnd = seededRandom(3);
    /** @type {EventQueue<number>} */
    const q = new EventQueue();
    const times = Array.from({ length: 2000 }, () => rnd.int(100));
    times.forEach((t, i) => q.push(t, i));
    const popped = [];
    for (let e = q.pop(); e !== undefined; e = q.pop()) popped.push([e.t, e.ev]);
    const want = times.map((t, i) => [t, i]).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
    expect(popped).toEqual(want); // Array.sort is stable: ties stay in push order
  });
});

describe('seededRandom', () => {
  it('is deterministic per seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(xs);
  });

  it.each([
    [
      'exponential',
      (/** @type {import('./availability-random.js').Random} */ r) => r.exponential(7),
      7,
    ],
    [
      'weibull 0.49 × 10 days',
      (/** @type {import('./availability-random.js').Random} */ r) => r.weibull(0.49, 10),
      weibullMean(0.49, 10),
    ],
  ])('%s has the right mean', (_name, draw, mean) => {
    const r = seededRandom(9);
    let sum = 0;
    const count = 400_000;
    for (let i = 0; i < count; i++) sum += draw(r);
    expect(sum / count / mean).toBeGreaterThan(0.97);
    expect(sum / count / mean).toBeLessThan(1.03);
  });

  it('Γ and the paper’s 20-day transient MTTF', () => {
    expect(gamma(5)).toBeCloseTo(24, 9);
    expect(gamma(0.5)).toBeCloseTo(Math.sqrt(Math.PI), 9);
    expect(weibullMean(0.49, 10)).toBeCloseTo(20.8, 1);
  });
});

describe('MinBuckets', () => {
  it('finds the lowest and highest eligible scores, rotating ties', () => {
    const b = new MinBuckets(4);
    b.add(0, 2);
    b.add(1, 1);
    expect(b.pickMin(() => true)).toBe(2);
    expect(b.pickMin((id) => id < 2)).toBe(1);
    expect(b.pickMax(() => true)).toBe(0);
    b.add(2, 1);
    b.add(2, -1); // back to 0, behind node 3
    expect(b.pickMin(() => true)).toBe(3);
    expect(b.pickMin(() => false)).toBe(-1);
  });
});

describe('simulateAvailability', () => {
  const small = { nodes: 60, objects: 300, years: 0.5, seed: 5 };

  it('is deterministic for a seed', () => {
    const a = simulateAvailability(small);
    const b = simulateAvailability(small);
    expect(b).toEqual(a);
    expect(a.events).toBeGreaterThan(1000);
    expect(simulateAvailability({ ...small, seed: 6 }).events).not.toBe(a.events);
  });

  it('without failures nothing moves and everything stays available', () => {
    const r = simulateAvailability({ ...small, transient: null, permanentMttfS: Infinity });
    expect(r.meanUnavailability).toBe(0);
    expect(r.transfers).toBe(0);
    expect(r.events).toBe(0);
  });

  it('respects the caps b and B', () => {
    const r = simulateAvailability({ ...small, bMbps: 1, BMbps: 0.5, n: 2 });
    expect(r.transfers).toBeGreaterThan(0);
    expect(r.sourceBytes).toBeGreaterThan(0);
    expect(r.maxUploadBps).toBe(125_000);
    expect(r.maxSourceBps).toBe(62_500);
    // One transfer per node at a time: no node can have sent more than b × time.
    expect(r.nodeBytes).toBeLessThanOrEqual(60 * 125_000 * 0.5 * YEAR);
    expect(Math.max(...r.trafficByDay.map(([, bytes]) => bytes))).toBeLessThanOrEqual(
      60 * 125_000 * DAY + 31_250 * DAY,
    );
  });

  it('one node, one object, n = 1: each permanent failure costs one seeding from the source', () => {
    // B = 1 Mbps seeds 1 GB in 8,000 s; the replacement node is empty until then.
    const r = simulateAvailability({
      nodes: 1,
      objects: 1,
      n: 1,
      years: 50,
      transient: null,
      seed: 11,
    });
    expect(r.permanentFailures).toBeGreaterThan(30);
    expect(r.meanUnavailability * 50 * YEAR).toBeCloseTo(r.permanentFailures * 8000, 3);
  });

  it('transient outages without repair: unavailability is the down fraction', () => {
    // n = 1 and repair never triggered: an object is down exactly while its node is.
    const up = weibullMean(0.49, 10 * DAY);
    const down = 4 * 3600;
    const r = simulateAvailability({
      nodes: 200,
      objects: 200,
      n: 1,
      years: 20,
      permanentMttfS: Infinity,
      detectAfterS: 1e12,
      downtimeMeanS: down,
      seed: 2,
    });
    expect(r.transfers).toBe(0);
    expect(r.meanUnavailability / (down / (up + down))).toBeGreaterThan(0.9);
    expect(r.meanUnavailability / (down / (up + down))).toBeLessThan(1.1);
  });

  it('without a source, objects whose every holder failed are lost', () => {
    const r = simulateAvailability({
      ...small,
      nodes: 400,
      objects: 2000,
      n: 1,
      BMbps: 0,
      years: 2,
      transient: null,
    });
    expect(r.sourceBytes).toBe(0);
    // n = 1: every permanent failure loses its node's objects for good (1 - e^-2 = 0.865 of them).
    expect(r.lostFraction).toBeGreaterThan(0.82);
    expect(r.lostFraction).toBeLessThan(0.91);
  });
});
