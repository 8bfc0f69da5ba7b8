import { FreeLoaderError } from './errors.js';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * Parse a human size into bytes. Decimal units (kB, MB, GB, TB) are powers of 1000,
 * binary units (KiB, MiB, GiB, TiB) powers of 1024; a bare number is bytes.
 *
 * @example parseSize('20GiB') === 21474836480; parseSize('1.5 MB') === 1500000
 */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `not a size: "${text}" (use e.g. 500MB, 20GiB, 1TiB or a byte count)`,
    );
  }
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) {
    throw new FreeLoaderError('VALIDATION_FAILED', `size too large: "${text}"`);
  }
  return bytes;
}

/**
 * Format bytes with binary units and at most one decimal.
 *
 * @example formatSize(1536) === '1.5 KiB'; formatSize(0) === '0 B'
 */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const text = i === 0 ? String(v) : v.toFixed(1).replace(/\.0$/, '');
  return `${text} ${units[i]}`;
}
