import { afterAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { SourcePolicy } from '@freeloader/sources';
import { LOOPBACK_SOURCES, startTestServer, type TestServer } from '@freeloader/sources/testing';
import { measureSource } from './source-probe.js';

let srv: TestServer | undefined;
afterAll(async () => srv?.close());

describe('measureSource', () => {
  it('measures L and finds that large requests beat small ones on a high-latency source', async () => {
    // 250 ms before every answer: the per-request cost the seed's Fig. 4 is about.
    srv = await startTestServer({ size: 8 * MiB, delayMs: 250 });
    const m = await measureSource(srv.url, {
      width: 2,
      bytes: 8 * MiB,
      requestSizes: [MiB, 4 * MiB],
      // The test server is on loopback: allowed on purpose.
      source: { policy: new SourcePolicy(LOOPBACK_SOURCES) },
    });
    expect(m.latencyS).toBeGreaterThanOrEqual(0.25);
    expect(m.rates.map((r) => r.requestSize)).toEqual([MiB, 4 * MiB]);
    // 4 requests per stream pay the delay 4 times, one request once: at least 1.25× even when
    // a loaded machine makes the transfers themselves slow.
    expect(m.rates[1]!.rate).toBeGreaterThan(m.rates[0]!.rate * 1.25);
    expect(m.requestSize).toBe(4 * MiB);
    expect(m.patchRate).toBe(m.rates[1]!.rate);
  });
});
