import { describe, expect, it } from 'vitest';
import { leaseVerdict, type LeaseVerdict } from './lease-expiry.js';

const NOW = new Date('2026-01-01T00:10:00Z');
const at = (iso: string): Date => new Date(`2026-01-01T${iso}Z`);

describe('leaseVerdict', () => {
  it.each<[string, Date | null, number, Date | null, LeaseVerdict]>([
    ['lease still running', at('00:10:30'), 1, null, 'keep'],
    ['lease ends exactly now', NOW, 1, null, 'keep'],
    ['lapsed, first attempt', at('00:09:00'), 1, null, 'requeue'],
    ['lapsed, second attempt', at('00:09:00'), 2, null, 'requeue'],
    ['lapsed, attempts used up', at('00:09:00'), 3, null, 'fail'],
    ['lapsed, more claims than allowed', at('00:09:00'), 7, null, 'fail'],
    ['no lease at all (pre-lease job)', null, 1, null, 'requeue'],
    ['lapsed but inside the start-up grace', at('00:01:00'), 3, at('00:10:01'), 'keep'],
    ['lapsed, grace over', at('00:01:00'), 3, at('00:09:59'), 'fail'],
  ])('%s → %s', (_name, leaseExpiresAt, attempts, graceUntil, verdict) => {
    expect(leaseVerdict({ leaseExpiresAt, attempts }, NOW, graceUntil)).toBe(verdict);
  });
});
