import { FreeLoaderError } from '@freeloader/protocol';

/** Reject a byte range [start, end) outside [0, size] before any I/O is attempted. */
export function checkRange(start: number, end: number, size: number): void {
  const ok =
    Number.isSafeInteger(start) &&
    Number.isSafeInteger(end) &&
    start >= 0 &&
    start <= end &&
    end <= size;
  if (!ok) {
    throw new FreeLoaderError(
      'BAD_REQUEST',
      `bad range [${start}, ${end}) for an object of ${size} bytes`,
    );
  }
}
