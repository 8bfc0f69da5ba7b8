import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, type LogRecord } from './index-log.js';
import { compressRuns, SlotTable } from './slot-table.js';

describe('compressRuns', () => {
  it.each([
    [[], 0, []],
    [[5], 2, [[5, 1, 1, 2]]],
    [
      [0, 4, 8, 9],
      0,
      [
        [0, 4, 3, 0],
        [9, 1, 1, 3],
      ],
    ],
    [
      [0, 1, 2, 3, 16, 17, 18, 19],
      0,
      [
        [0, 1, 4, 0],
        [16, 1, 4, 4],
      ],
    ],
  ])('%j from slot %i → %j', (indices, first, runs) => {
    expect(compressRuns(indices, first)).toEqual(runs);
  });
});

describe('SlotTable', () => {
  const put = (index: number, slot: number): LogRecord => ({
    kind: 'put',
    index,
    slot,
    length: 1,
    sha256: '0'.repeat(64),
  });

  it('gives a planned index its slot, others spare then new slots', () => {
    const t = new SlotTable();
    t.plan([10, 20]);
    expect(t.allocate(20)).toBe(1);
    expect(t.allocate(99)).toBe(2);
    t.settle(2); // the write to slot 2 failed: spare again
    expect(t.allocate(98)).toBe(2);
  });

  it('never hands out a slot that is being read', () => {
    const t = new SlotTable();
    t.apply(put(0, 0));
    t.startRead(0);
    t.apply({ kind: 'free', index: 0 });
    expect(t.allocate(1)).toBe(1);
    t.endRead(0);
    expect(t.allocate(2)).toBe(0);
  });

  it('lets a later record win a reused slot', () => {
    const t = new SlotTable();
    t.apply(put(0, 0));
    t.apply(put(1, 0));
    expect([...t.entries.keys()]).toEqual([1]);
    expect(t.bytes).toBe(1);
  });
});

describe('index log records', () => {
  it.each<LogRecord>([
    { kind: 'put', index: 2 ** 30 - 1, slot: 7, length: 1 << 20, sha256: 'ab'.repeat(32) },
    { kind: 'free', index: 3 },
  ])('round-trips %j and detects a flipped bit', (rec) => {
    const buf = encodeRecord(rec);
    expect(decodeRecord(buf)).toEqual(rec);
    buf[9]! ^= 1;
    expect(decodeRecord(buf)).toBeUndefined();
  });
});
