import { describe, expect, it } from 'vitest';
import { describeCopies, replicaFields } from './import-replicas.js';

describe('replicaFields', () => {
  it.each([
    [{}, {}],
    [{ replicas: '3' }, { replicas: 3 }],
    [{ replicas: ' 16 ' }, { replicas: 16 }],
    [{ availability: '0.999' }, { availability: 0.999 }],
  ])('%o → %o', (opts, fields) => expect(replicaFields(opts)).toEqual(fields));

  it.each([
    [{ replicas: '0' }, /--replicas must be a whole number from 1 to 16, not "0"/],
    [{ replicas: '17' }, /--replicas/],
    [{ replicas: '2.5' }, /--replicas/],
    [{ replicas: '' }, /--replicas/],
    [{ availability: '1' }, /--availability must be a probability/],
    [{ availability: 'high' }, /--availability/],
    [{ replicas: '2', availability: '0.9' }, /exclude each other/],
  ])('rejects %o', (opts, message) => expect(() => replicaFields(opts)).toThrow(message));
});

describe('describeCopies', () => {
  const plan = { width: 2, stripeSize: 1, morsels: 4, donors: 2 };
  it.each([
    [undefined, null],
    [plan, null],
    [
      {
        ...plan,
        replicas: 2,
        placedCopies: 2,
        replicasReason: 'manager default (REPLICAS_DEFAULT=2)',
      },
      'copies: 2 — manager default (REPLICAS_DEFAULT=2)',
    ],
    [
      { ...plan, replicas: 2, placedCopies: 1 },
      'copies: 1 of 2 placed (too few donors with room; the dataset is under-replicated until repair adds the rest)',
    ],
  ])('%o → %s', (p, line) => expect(describeCopies(p)).toBe(line));
});
