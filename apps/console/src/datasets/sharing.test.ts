import { describe, expect, it } from 'vitest';
import { shareLabel } from './sharing';

describe('shareLabel', () => {
  it.each([
    [{ groupId: 'g', group: 'lab', manage: false, from: 'a/x' }, 'lab'],
    [{ groupId: 'g', group: 'lab', manage: true, from: 'a/x' }, 'lab · may manage'],
    [{ groupId: null, group: null, manage: false, from: 'a' }, 'Everyone (site) · from a/'],
    [{ groupId: null, group: null, manage: false, from: '' }, 'Everyone (site) · from /'],
  ])('%j → %s', (share, label) => {
    expect(shareLabel(share, 'a/x')).toBe(label);
  });
});
