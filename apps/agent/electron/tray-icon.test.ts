import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { STATE_COLORS, trayIconPng } from './tray-icon.js';

/** Decode our own PNGs (one IDAT, filter 0 rows) back to RGBA pixels. */
function pixels(png: Buffer): { size: number; at: (x: number, y: number) => number[] } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  const size = png.readUInt32BE(16);
  const idatAt = png.indexOf('IDAT');
  const raw = inflateSync(png.subarray(idatAt + 4, idatAt + 4 + png.readUInt32BE(idatAt - 4)));
  return {
    size,
    at: (x, y) => [...raw.subarray(y * (1 + size * 4) + 1 + x * 4, y * (1 + size * 4) + 5 + x * 4)],
  };
}

describe('trayIconPng', () => {
  it.each(Object.keys(STATE_COLORS) as Array<keyof typeof STATE_COLORS>)(
    '%s: a disc in its colour on a transparent square',
    (state) => {
      const p = pixels(trayIconPng(state, 32));
      expect(p.size).toBe(32);
      expect(p.at(0, 0)[3]).toBe(0);
      const edge = p.at(2, 16);
      expect(edge.slice(0, 3)).toEqual(STATE_COLORS[state]);
      expect(edge[3]).toBe(255);
      // Offline is a ring: its centre is empty.
      expect(p.at(16, 16)[3]).toBe(state === 'offline' ? 0 : 255);
    },
  );
});
