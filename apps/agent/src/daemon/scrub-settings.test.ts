import { describe, expect, it } from 'vitest';
import type { AgentSettings } from '../state/settings-file.js';
import type { ScrubSettings } from '../store/scrub-rate.js';
import { scrubSettingsFile, scrubSettingsOf } from './scrub-settings.js';

describe('scrubSettingsOf', () => {
  it.each<[string, ScrubSettings | undefined, AgentSettings['scrub'], ScrubSettings]>([
    ['nothing given or saved: defaults', undefined, undefined, {}],
    ['saved period', undefined, { periodMs: 3_600_000 }, { periodMs: 3_600_000 }],
    ['saved max rate', undefined, { bytesPerSecond: 'max' }, { bytesPerSecond: Infinity }],
    ['saved rate', undefined, { bytesPerSecond: 1000 }, { bytesPerSecond: 1000 }],
    ['given wins over saved', { periodMs: 5 }, { periodMs: 9, bytesPerSecond: 1 }, { periodMs: 5 }],
  ])('%s', (_, given, saved, want) => {
    expect(scrubSettingsOf(given, saved)).toEqual(want);
  });
});

describe('scrubSettingsFile', () => {
  it.each<[string, ScrubSettings | undefined, AgentSettings, AgentSettings]>([
    ['nothing given, nothing saved', undefined, {}, {}],
    [
      'nothing given keeps the saved pace',
      undefined,
      { scrub: { periodMs: 7 } },
      { scrub: { periodMs: 7 } },
    ],
    [
      'unlimited is written max',
      { bytesPerSecond: Infinity },
      {},
      { scrub: { bytesPerSecond: 'max' } },
    ],
    [
      'a rate and a period',
      { bytesPerSecond: 10, periodMs: 20 },
      { scrub: { periodMs: 1 } },
      { scrub: { bytesPerSecond: 10, periodMs: 20 } },
    ],
  ])('%s', (_, given, saved, want) => {
    expect(scrubSettingsFile(given, saved)).toEqual(want);
  });

  it('round-trips through scrubSettingsOf', () => {
    const given: ScrubSettings = { bytesPerSecond: Infinity, periodMs: 42 };
    expect(scrubSettingsOf(undefined, scrubSettingsFile(given, {}).scrub)).toEqual(given);
  });
});
