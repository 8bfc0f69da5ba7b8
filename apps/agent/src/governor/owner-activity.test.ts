import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { DatasetReader } from '../client/dataset-reader.js';
import { fetchMap } from '../client/fetch-map.js';
import type { SettingsClient } from '../control-api/settings-client.js';
import { settingsOf } from '../test/settings-of.js';
import { waitFor } from '../test/cluster-harness.js';
import { startDataCluster, type DataCluster } from '../test/data-cluster.js';

// A real donor process, a real client reading from it as fast as it can, and the owner
// simulated through the agent's local settings API (as the tray reports powerMonitor's idle
// time). The client's measured rate must fall to the active cap within a second of input.
let c: DataCluster;
let src: TestServer;
let settings: SettingsClient;
const ACTIVE_CAP = 1 * MiB;

beforeAll(async () => {
  c = await startDataCluster(1, '64MiB');
  settings = await settingsOf(c.agents[0]!);
  src = await startTestServer({ size: 16 * MiB, seed: 41 });
  // Small morsels so the client's rate can be read in short windows.
  await c.importAndWait({ uri: src.url, name: 'gov/data.bin', morselSize: 64 * 1024 });
  await settings.update({
    governor: {
      idleCapBps: null,
      activeCapBps: ACTIVE_CAP,
      idleAfterMs: 60_000,
      // Other suites share this machine: their load must not read as contention here.
      thresholds: { cpu: 2, memory: 2, diskBps: 1e15, netBps: 1e15 },
    },
  });
}, 180_000);

afterAll(async () => {
  await src?.close();
  await c?.close();
});

/** Reads morsels round and round, recording when each byte arrived. */
async function readContinuously(stop: { done: boolean }, log: Array<[number, number]>) {
  const reader = new DatasetReader(await fetchMap(c.tm.admin, 'gov/data.bin'));
  try {
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; !stop.done; i = (i + 1) % reader.count) {
      const p = reader.readMorsel(i).then((b) => void log.push([performance.now(), b.length]));
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= 4) await Promise.race(inFlight);
    }
    await Promise.allSettled(inFlight);
  } finally {
    await reader.close();
  }
}

/** Bytes/s the client received in [from, to) (performance.now() milliseconds). */
const rateIn = (log: Array<[number, number]>, from: number, to: number): number =>
  log.filter(([t]) => t >= from && t < to).reduce((s, [, n]) => s + n, 0) / ((to - from) / 1000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Wait until the client's rate over the last `windowMs` satisfies `ok` and return it. A busy
 * machine may slow the client for a while; the condition is what is asserted, not a window.
 */
const rateWhen = (log: Array<[number, number]>, what: string, ok: (rate: number) => boolean) =>
  waitFor(
    what,
    () => {
      const now = performance.now();
      const rate = rateIn(log, now - 1_000, now);
      return ok(rate) ? rate : undefined;
    },
    60_000,
    100,
  );

describe('owner activity', () => {
  it('drops a real client to the active cap within 1 s, and recovers when the owner leaves', async () => {
    await settings.reportIdle(10 * 60_000);
    const stop = { done: false };
    const log: Array<[number, number]> = [];
    const reading = readContinuously(stop, log);
    try {
      const idleRate = await rateWhen(
        log,
        'the idle client to read fast',
        (r) => r > 4 * ACTIVE_CAP,
      );

      await settings.reportIdle(0);
      // The agent has taken the input (its answer came back): the cap holds from 1 s on.
      const input = performance.now();
      expect((await settings.state()).governor).toMatchObject({
        state: 'active',
        capBps: ACTIVE_CAP,
      });
      // Still served at the cap, not stopped (however long a busy machine takes to show it)…
      const served = await rateWhen(
        log,
        'the active client to be served at the cap',
        (r) => r > 0.5 * ACTIVE_CAP && performance.now() > input + 2_000,
      );
      await sleep(Math.max(0, input + 2_500 - performance.now()));
      // …and never above it from one second after the input on (+ one burst). Load can only
      // slow the client, never speed it up, so this bound holds on any machine.
      const activeRate = rateIn(log, input + 1_000, performance.now());

      await settings.reportIdle(10 * 60_000);
      const recovered = await rateWhen(log, 'the client to recover', (r) => r > 4 * ACTIVE_CAP);

      console.log(
        `client MB/s: idle ${(idleRate / 1e6).toFixed(1)}, active ${(activeRate / 1e6).toFixed(2)} ` +
          `(served ${(served / 1e6).toFixed(2)}), recovered ${(recovered / 1e6).toFixed(1)}`,
      );
      expect(activeRate).toBeLessThan(1.5 * ACTIVE_CAP);
    } finally {
      stop.done = true;
      await reading;
    }
    // The manager hears the state and cap in heartbeats.
    await settings.reportIdle(0);
    const view = await waitFor('the manager to see the owner active', async () =>
      (await c.tm.agents()).find((a) => a.throttle === 'active'),
    );
    expect(view.rateCap).toBe(ACTIVE_CAP);
    // …and why, in the donor list and in the map a reader gets.
    expect(view.throttleReasons).toEqual(['owner active']);
    const donor = (await fetchMap(c.tm.admin, 'gov/data.bin')).donors[0]!;
    expect(donor).toMatchObject({ throttle: 'active', throttleReasons: ['owner active'] });
  }, 240_000);

  it('a paused donor refuses reads at once; resuming serves again', async () => {
    await settings.pause('1h');
    const map = await fetchMap(c.tm.admin, 'gov/data.bin');
    const res = await fetch(`${map.donors[0]!.url}/v1/morsels/${map.dataset.id}/0`, {
      headers: { authorization: `Bearer ${map.capability}` },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/paused/);
    await settings.resume();
    const again = await fetch(`${map.donors[0]!.url}/v1/morsels/${map.dataset.id}/0`, {
      headers: { authorization: `Bearer ${map.capability}` },
    });
    expect(again.status).toBe(200);
    expect((await again.arrayBuffer()).byteLength).toBe(64 * 1024);
  });
});
