import { describe, expect, it } from 'vitest';
import type { DatasetMap } from '@freeloader/protocol';
import { COPY_A as A, COPY_B as B, twoCopiesMap } from '../test/two-copies-map.js';
import { DatasetReader, PER_DONOR_IN_FLIGHT } from './dataset-reader.js';

/** Two full copies (A and B) on donors that refuse connections (ports 9 and 1 on loopback). */
const twoRefusingCopies = (): DatasetMap =>
  twoCopiesMap([
    { id: A, url: 'http://127.0.0.1:9', state: 'live' },
    { id: B, url: 'http://127.0.0.1:1', state: 'live' },
  ]);

/** Whether `p` settled within a few turns of the event loop. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('request reservations (a morsel leaves its queue only when its request can go out)', () => {
  it('hold request slots, send on a held slot at once, and give back only what was not used', async () => {
    expect(PER_DONOR_IN_FLIGHT).toBe(2);
    const reader = new DatasetReader(twoRefusingCopies());
    try {
      const r1 = await reader.reserveRequest(A);
      const r2 = await reader.reserveRequest(A);
      // Both of A's slots are held: a third reservation waits.
      const third = reader.reserveRequest(A);
      expect(await settled(third)).toBe(false);
      // A read on a held reservation asks A at once (without it, it would wait for a slot).
      await expect(reader.readIntoSlot(0, undefined, r1)).rejects.toThrow(/unavailable/i);
      expect(reader.connectionAttempts(A)).toBe(1);
      expect(r1.held).toBe(false);
      // The request's end freed r1's slot, which the waiting reservation took.
      const r3 = await third;
      reader.unreserve(r1); // used: nothing to give back
      reader.unreserve(r2);
      reader.unreserve(r2); // twice: still one slot
      reader.unreserve(r3);
      // Exactly PER_DONOR_IN_FLIGHT slots are free again, no more.
      const again = [await reader.reserveRequest(A), await reader.reserveRequest(A)];
      expect(await settled(reader.reserveRequest(A))).toBe(false);
      for (const r of again) reader.unreserve(r);
    } finally {
      await reader.close();
    }
  });
});
