import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GiB,
  MIN_MORSEL_SIZE,
  SCRUB_MAX_BYTES_PER_S,
  SCRUB_MIN_BYTES_PER_S,
  TiB,
} from '@freeloader/protocol';
import { flipByte } from '../test/damage.js';
import { FsStore } from './fs-store.js';
import { scrubRate } from './scrub-rate.js';
import { readPosition, Scrubber, type ScrubberDeps, type ScrubFinding } from './scrubber.js';

const MS = MIN_MORSEL_SIZE;

describe('scrubRate', () => {
  it.each([
    ['100 GiB over the default 14 days', 100 * GiB, {}, (100 * GiB) / (14 * 86400)],
    ['a small store: the floor', 1 * GiB, {}, SCRUB_MIN_BYTES_PER_S],
    ['a huge store: the ceiling', 100 * TiB, {}, SCRUB_MAX_BYTES_PER_S],
    [
      '1 GiB over one day (floor still wins)',
      1 * GiB,
      { periodMs: 86_400_000 },
      SCRUB_MIN_BYTES_PER_S,
    ],
    ['100 GiB over one day', 100 * GiB, { periodMs: 86_400_000 }, (100 * GiB) / 86400],
    ['a fixed rate, unclamped', 1 * GiB, { bytesPerSecond: 10 }, 10],
    ['full speed', 1 * GiB, { bytesPerSecond: Infinity }, Infinity],
  ])('%s', (_label, stored, settings, want) => {
    expect(scrubRate(stored, settings)).toBeCloseTo(want, 6);
  });
});

describe('Scrubber over a real FsStore', () => {
  const dirs: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });

  /** Two datasets of three morsels each (one morsel per slot, index order). */
  async function filled(): Promise<{ dir: string; store: FsStore; ids: string[] }> {
    const dir = await mkdtemp(join(tmpdir(), 'fl-scrub-'));
    dirs.push(dir);
    const store = await FsStore.open(join(dir, 'store'));
    cleanups.push(() => store.close());
    const ids = [randomUUID(), randomUUID()].sort();
    for (const id of ids) {
      await store.create(id, { morselSize: MS, planned: [0, 1, 2] });
      for (const i of [0, 1, 2]) await store.put(id, i, randomBytes(MS));
    }
    return { dir, store, ids };
  }

  function scrubber(
    dir: string,
    store: FsStore,
    over: Partial<ScrubberDeps> = {},
  ): { scrub: Scrubber; found: ScrubFinding[] } {
    const found: ScrubFinding[] = [];
    const scrub = new Scrubber({
      store,
      positionFile: join(dir, 'scrub-position.json'),
      settings: () => ({ bytesPerSecond: Infinity }),
      held: () => false,
      onBad: (f) => found.push(f),
      ...over,
    });
    cleanups.push(() => scrub.stop());
    return { scrub, found };
  }

  it('finds a flipped byte, frees that morsel (no longer held) and reports it; a pass wraps', async () => {
    const { dir, store, ids } = await filled();
    // Morsel 1 of the second dataset sits in slot 1 of its data file.
    await flipByte(join(dir, 'store', 'datasets', `${ids[1]}.data`), MS + 17);
    const { scrub, found } = scrubber(dir, store);
    for (let i = 0; i < 6; i++) expect(await scrub.step()).toBe(MS);
    expect(found).toEqual([{ datasetId: ids[1], index: 1 }]);
    expect((await store.stat(ids[1]!)).indices).toEqual([0, 2]);
    expect(scrub.status()).toMatchObject({ checkedMorsels: 6, badMorsels: 1, passes: 0 });
    // The next step starts pass 2 at the first dataset's first morsel.
    await scrub.step();
    expect(scrub.status().passes).toBe(1);
    expect(found).toHaveLength(1);
  });

  it('resumes after a restart at the morsel after the last one checked', async () => {
    const { dir, store, ids } = await filled();
    const first = scrubber(dir, store);
    for (let i = 0; i < 4; i++) await first.scrub.step();
    await first.scrub.stop();
    expect(await readPosition(join(dir, 'scrub-position.json'))).toEqual({
      datasetId: ids[1],
      index: 0,
      passes: 0,
    });
    // A flip in a morsel already checked this pass is not seen before the next pass…
    await flipByte(join(dir, 'store', 'datasets', `${ids[0]}.data`), 3);
    const again = scrubber(dir, store);
    await again.scrub.step();
    await again.scrub.step();
    expect(again.found).toEqual([]);
    expect(again.scrub.status().checkedMorsels).toBe(2);
    // …and is seen first thing in it.
    await again.scrub.step();
    expect(again.found).toEqual([{ datasetId: ids[0], index: 0 }]);
    expect(again.scrub.status().passes).toBe(1);
  });

  it('waits while held (owner active) and goes on when released', async () => {
    const { dir, store } = await filled();
    let held = true;
    const sleeps: number[] = [];
    const { scrub } = scrubber(dir, store, {
      held: () => held,
      sleep: recordedSleep(sleeps),
    });
    scrub.start();
    await waitUntil(() => sleeps.length >= 5);
    expect(scrub.status()).toMatchObject({ state: 'held', checkedMorsels: 0 });
    held = false;
    await waitUntil(() => scrub.status().checkedMorsels >= 6);
    held = true;
    await waitUntil(() => scrub.status().state === 'held');
    const frozen = scrub.status().checkedMorsels;
    const before = sleeps.length;
    await waitUntil(() => sleeps.length >= before + 5);
    expect(scrub.status().checkedMorsels).toBe(frozen);
  });

  it('never starts again once stopped (a late start after the daemon stopped)', async () => {
    const { dir, store } = await filled();
    const { scrub } = scrubber(dir, store);
    await scrub.stop();
    scrub.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(scrub.status()).toMatchObject({ state: 'stopped', checkedMorsels: 0 });
  });

  it('paces itself at the configured rate', async () => {
    const { dir, store } = await filled();
    const sleeps: number[] = [];
    const { scrub } = scrubber(dir, store, {
      settings: () => ({ bytesPerSecond: MS / 2 }), // two seconds per morsel
      sleep: recordedSleep(sleeps),
    });
    scrub.start();
    await waitUntil(() => sleeps.length >= 3);
    await scrub.stop();
    // Each wait is the morsel's share of the rate minus the time the check itself took.
    for (const ms of sleeps.slice(0, 3)) {
      expect(ms).toBeGreaterThan(1000);
      expect(ms).toBeLessThanOrEqual(2000);
    }
  });
});

/** A sleep that records what it was asked for and yields briefly (the loop must not spin). */
function recordedSleep(sleeps: number[]): ScrubberDeps['sleep'] {
  return async (ms, signal) => {
    sleeps.push(ms);
    await new Promise((r) => setTimeout(r, 2));
    signal.throwIfAborted();
  };
}

async function waitUntil(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
