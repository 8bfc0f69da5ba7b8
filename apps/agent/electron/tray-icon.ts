import { deflateSync } from 'node:zlib';
import type { TrayState } from './tray-model.js';

/** Icon colours per state (RGB). */
export const STATE_COLORS: Record<TrayState, [number, number, number]> = {
  serving: [46, 160, 67],
  throttled: [230, 160, 0],
  paused: [130, 130, 130],
  offline: [90, 90, 90],
  error: [210, 50, 40],
};

/**
 * A tray icon as PNG bytes: a filled disc in the state's colour (a ring for offline), drawn
 * here so the shell ships no binary assets. `size` is in pixels (16, 32 for HiDPI).
 *
 * @example nativeImage.createFromBuffer(trayIconPng('serving', 32), { scaleFactor: 2 })
 */
export function trayIconPng(state: TrayState, size = 32): Buffer {
  const [r, g, b] = STATE_COLORS[state];
  const rows: Buffer[] = [];
  const c = (size - 1) / 2;
  const outer = size / 2 - 1;
  const inner = state === 'offline' ? outer * 0.55 : -1;
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0 + RGBA
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x - c, y - c);
      // One pixel of anti-aliasing at each edge.
      const alpha = Math.max(0, Math.min(1, outer - d + 0.5, d - inner + 0.5));
      row.set([r, g, b, Math.round(alpha * 255)], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
