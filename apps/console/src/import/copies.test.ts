import { describe, expect, it } from 'vitest';
import { copiesSentence } from './copies';

describe('copiesSentence', () => {
  const plan = { width: 3, stripeSize: 1, morsels: 24, donors: 3 };
  it.each([
    [
      {
        ...plan,
        replicas: 2,
        placedCopies: 2,
        replicasReason: 'manager default (REPLICAS_DEFAULT=2)',
      },
      '2 copies of each morsel (manager default (REPLICAS_DEFAULT=2)).',
    ],
    [{ ...plan, replicas: 1 }, '1 copy of each morsel.'],
    [
      { ...plan, replicas: 3, placedCopies: 1 },
      '1 of 3 copies placed: too few donors with room; repair adds the rest.',
    ],
  ])('%o', (p, sentence) => expect(copiesSentence(p)).toBe(sentence));
});
