import { FreeLoaderError } from '@freeloader/protocol';

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/**
 * Parse a duration like `90s`, `15m`, `12h`, `7d`, `2w` into seconds.
 *
 * @example parseDuration('7d') === 604800
 */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhdw])$/.exec(text.trim());
  if (!m)
    throw new FreeLoaderError('VALIDATION_FAILED', `not a duration: "${text}" (use e.g. 1h, 7d)`);
  return Number(m[1]) * UNIT_S[m[2]!]!;
}
