import { crc32 } from 'node:zlib';
import type { FileHandle } from 'node:fs/promises';
import type { HandleLease } from './fd-cache.js';

/**
 * The per-dataset append-only index log: fixed-size records, each with its own CRC32, so a torn
 * or corrupt record is detected and skipped on replay. A morsel is visible only once its `put`
 * record is on disk (written and fsynced after the morsel bytes themselves).
 *
 * Record layout (64 bytes, big-endian):
 *   0 magic u32 'FLIX' | 4 kind u8 | 5 version u8 | 6 reserved u16 | 8 index u32 | 12 slot u32
 *   16 length u32 | 20 reserved u32 | 24 sha256 [32] | 56 reserved u32 | 60 crc32 of bytes 0..59
 */
export const RECORD_SIZE = 64;
const MAGIC = 0x464c4958;
const VERSION = 1;
const CRC_AT = 60;
const REPLAY_CHUNK_RECORDS = 16384;

export type LogRecord =
  | { kind: 'put'; index: number; slot: number; length: number; sha256: string }
  | { kind: 'free'; index: number };

const KIND_CODE = { put: 1, free: 2 } as const;

export function encodeRecord(rec: LogRecord): Buffer {
  const buf = Buffer.alloc(RECORD_SIZE);
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeUInt8(KIND_CODE[rec.kind], 4);
  buf.writeUInt8(VERSION, 5);
  buf.writeUInt32BE(rec.index, 8);
  if (rec.kind === 'put') {
    buf.writeUInt32BE(rec.slot, 12);
    buf.writeUInt32BE(rec.length, 16);
    buf.write(rec.sha256, 24, 32, 'hex');
  }
  buf.writeUInt32BE(crc32(buf.subarray(0, CRC_AT)), CRC_AT);
  return buf;
}

/** Decode one record; undefined when torn, corrupt or unknown. */
export function decodeRecord(buf: Buffer): LogRecord | undefined {
  if (buf.length !== RECORD_SIZE) return undefined;
  if (buf.readUInt32BE(0) !== MAGIC || buf.readUInt8(5) !== VERSION) return undefined;
  if (crc32(buf.subarray(0, CRC_AT)) !== buf.readUInt32BE(CRC_AT)) return undefined;
  const kind = buf.readUInt8(4);
  const index = buf.readUInt32BE(8);
  if (kind === KIND_CODE.free) return { kind: 'free', index };
  if (kind !== KIND_CODE.put) return undefined;
  return {
    kind: 'put',
    index,
    slot: buf.readUInt32BE(12),
    length: buf.readUInt32BE(16),
    sha256: buf.toString('hex', 24, 56),
  };
}

export interface ReplayResult {
  /** Bytes of the log that end in a good record; later bytes are a torn or corrupt tail. */
  goodLength: number;
  records: number;
  /** Bad records skipped (a torn tail counts as one). */
  badRecords: number;
}

/**
 * Replay a log in order, calling `apply` for every good record. Corrupt records in the middle are
 * skipped (their neighbours are still trustworthy: every record has its own checksum).
 */
export async function replayLog(
  fh: FileHandle,
  apply: (rec: LogRecord) => void,
): Promise<ReplayResult> {
  const { size } = await fh.stat();
  const chunk = Buffer.allocUnsafe(RECORD_SIZE * REPLAY_CHUNK_RECORDS);
  const result: ReplayResult = { goodLength: 0, records: 0, badRecords: 0 };
  let pos = 0;
  while (pos < size) {
    const want = Math.min(chunk.length, size - pos);
    const { bytesRead } = await fh.read(chunk, 0, want, pos);
    if (bytesRead === 0) break;
    for (let off = 0; off < bytesRead; off += RECORD_SIZE) {
      const rec = decodeRecord(chunk.subarray(off, off + RECORD_SIZE));
      if (!rec) {
        result.badRecords++;
        continue;
      }
      apply(rec);
      result.records++;
      result.goodLength = pos + off + RECORD_SIZE;
    }
    pos += bytesRead;
  }
  return result;
}

interface Pending {
  record: Buffer;
  onCommit: () => void;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Serialises appends to one log with group commit: records queued while an fsync is running are
 * written and synced together. `onCommit` callbacks run synchronously in log order right after
 * the fsync, so in-memory state changes in exactly the order the log will replay.
 */
export class LogAppender {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly lease: () => Promise<HandleLease>,
    private end: number,
  ) {}

  /** Records in the log (good ones and any skipped in the middle). */
  get length(): number {
    return this.end / RECORD_SIZE;
  }

  append(record: LogRecord, onCommit: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record: encodeRecord(record), onCommit, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        const lease = await this.lease();
        try {
          const buf =
            batch.length === 1 ? batch[0]!.record : Buffer.concat(batch.map((p) => p.record));
          // A failed write leaves `end` where it was, so the next batch overwrites any partial bytes.
          await lease.fh.write(buf, 0, buf.length, this.end);
          await lease.fh.datasync();
          this.end += buf.length;
        } finally {
          lease.release();
        }
      } catch (err) {
        for (const p of batch) p.reject(err);
        continue;
      }
      for (const p of batch) {
        p.onCommit();
        p.resolve();
      }
    }
    this.flushing = false;
  }
}
