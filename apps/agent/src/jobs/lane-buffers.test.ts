import { setImmediate as yieldTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { forEachBounded } from './bounded-tasks.js';
import { LaneBuffers } from './lane-buffers.js';

describe('LaneBuffers', () => {
  it('allocates one buffer per lane, however many items, and never hands one to two running items', async () => {
    const lanes = 4;
    const slots = new LaneBuffers(1024);
    const busy = new Set<Buffer>();
    let overlaps = 0;
    const items = Array.from({ length: 200 }, (_, i) => i);
    await forEachBounded(items, lanes, async (i, lane) => {
      const buf = slots.of(lane);
      if (busy.has(buf)) overlaps++;
      busy.add(buf);
      buf.fill(i & 0xff);
      // Other lanes run meanwhile: a shared buffer would be overwritten here.
      for (let t = 0; t < (i % 3) + 1; t++) await yieldTurn();
      expect(buf.every((b) => b === (i & 0xff))).toBe(true);
      busy.delete(buf);
    });
    expect(overlaps).toBe(0);
    expect(slots.allocated).toBe(lanes);
  });

  it('makes nothing until a lane asks', () => {
    const slots = new LaneBuffers(1 << 20);
    expect(slots.allocated).toBe(0);
    expect(slots.of(2).length).toBe(1 << 20);
    expect(slots.allocated).toBe(1);
  });
});
