import { open } from 'node:fs/promises';

/**
 * Flip every bit of the byte at `offset` of a file, in place: bit rot behind a store's back.
 *
 * @example await flipByte(join(storeDir, 'datasets', `${id}.data`), 0)
 */
export async function flipByte(path: string, offset: number): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, offset);
    b[0] = b[0]! ^ 0xff;
    await fh.write(b, 0, 1, offset);
  } finally {
    await fh.close();
  }
}
