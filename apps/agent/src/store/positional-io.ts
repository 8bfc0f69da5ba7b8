import type { FileHandle } from 'node:fs/promises';

/** pwrite all of `data` at `position` (a short write is retried for the rest). */
export async function writeFully(
  fh: FileHandle,
  data: Uint8Array,
  position: number,
): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

/** pread into all of `buf` from `position`; returns the bytes read (fewer only at end of file). */
export async function readFully(
  fh: FileHandle,
  buf: Uint8Array,
  position: number,
): Promise<number> {
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}
