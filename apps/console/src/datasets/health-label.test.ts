import { describe, expect, it } from 'vitest';
import type { DatasetHealth } from '@freeloader/protocol';
import { copiesLabel, healthText, healthTone } from './health-label';

const h = (over: Partial<DatasetHealth>): DatasetHealth => ({
  wanted: 2,
  morsels: 8,
  liveMin: 2,
  liveAvg: 2,
  atRisk: 0,
  sourceOnly: 0,
  ...over,
});

describe('dataset health labels', () => {
  it.each<[string, DatasetHealth | undefined, string, string, string]>([
    ['not computed', undefined, 'unknown', '—', '2 copies wanted; nothing placed'],
    ['nothing placed', h({ morsels: 0 }), 'unknown', '—', '2 copies wanted; nothing placed'],
    [
      'healthy',
      h({}),
      'healthy',
      '2/2',
      '2 copies wanted; live per morsel min 2, avg 2; 0 of 8 morsels at risk, 0 only at the source',
    ],
    [
      'a donor down',
      h({ liveMin: 1, liveAvg: 1.5, atRisk: 4 }),
      'at-risk',
      '1/2',
      '2 copies wanted; live per morsel min 1, avg 1.5; 4 of 8 morsels at risk, 0 only at the source',
    ],
    [
      'some only at the source',
      h({ wanted: 1, liveMin: 0, liveAvg: 0.5, atRisk: 4, sourceOnly: 4 }),
      'source-only',
      '0/1',
      '1 copy wanted; live per morsel min 0, avg 0.5; 4 of 8 morsels at risk, 4 only at the source',
    ],
  ])('%s', (_, health, tone, label, text) => {
    const d = { health, replicas: 2, availabilityTarget: null };
    expect(healthTone(d)).toBe(tone);
    expect(copiesLabel(d)).toBe(label);
    expect(healthText(d)).toBe(text);
  });

  it('names the availability target the copy count came from', () => {
    expect(healthText({ health: h({}), availabilityTarget: 0.999 })).toMatch(
      /^2 copies wanted \(for availability 0\.999\);/,
    );
  });
});
