import type { AgentSettings } from '../state/settings-file.js';
import type { ScrubSettings } from '../store/scrub-rate.js';

/**
 * The scrub pace in force: this start's options, else the remembered settings, else defaults
 * (an empty object).
 *
 * @example
 *   scrubSettingsOf(undefined, { bytesPerSecond: 'max' }) // → { bytesPerSecond: Infinity }
 */
export function scrubSettingsOf(
  given: ScrubSettings | undefined,
  saved: AgentSettings['scrub'],
): ScrubSettings {
  if (given) return given;
  const out: ScrubSettings = {};
  if (saved?.periodMs !== undefined) out.periodMs = saved.periodMs;
  if (saved?.bytesPerSecond !== undefined) {
    out.bytesPerSecond = saved.bytesPerSecond === 'max' ? Infinity : saved.bytesPerSecond;
  }
  return out;
}

/**
 * What settings.json remembers of a scrub pace given on this start (JSON has no Infinity, so an
 * unlimited pace is written 'max'); with none given, the remembered one stays.
 *
 * @example
 *   scrubSettingsFile({ bytesPerSecond: Infinity }, {}) // → { scrub: { bytesPerSecond: 'max' } }
 */
export function scrubSettingsFile(
  given: ScrubSettings | undefined,
  saved: AgentSettings,
): AgentSettings {
  if (!given) return saved.scrub ? { scrub: saved.scrub } : {};
  const scrub: NonNullable<AgentSettings['scrub']> = {};
  if (given.periodMs !== undefined) scrub.periodMs = given.periodMs;
  if (given.bytesPerSecond !== undefined) {
    scrub.bytesPerSecond = Number.isFinite(given.bytesPerSecond) ? given.bytesPerSecond : 'max';
  }
  return { scrub };
}
