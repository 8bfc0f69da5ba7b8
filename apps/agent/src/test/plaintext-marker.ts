import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateContent } from '@freeloader/sources/testing';

/**
 * A byte string no random content holds by chance: written all through a test dataset, it shows
 * whether a donor's store holds plaintext (a donor owner grepping his disk, issue 17 item 3).
 */
export const PLAINTEXT_MARKER = Buffer.from('FREELOADER-KNOWN-MARKER-7d1f9c');

/** Distance between two markers (bytes): every morsel of any test size holds many of them. */
const MARKER_EVERY_BYTES = 64 * 1024;

/**
 * Random bytes (`generateContent(size, seed)`) with PLAINTEXT_MARKER written every 64 KiB.
 *
 * @example markedContent(6 * MiB, 1).indexOf(PLAINTEXT_MARKER) // → 100
 */
export function markedContent(size: number, seed: number): Buffer {
  const content = generateContent(size, seed);
  for (let at = 100; at + PLAINTEXT_MARKER.length < size; at += MARKER_EVERY_BYTES) {
    PLAINTEXT_MARKER.copy(content, at);
  }
  return content;
}

/** A donor's data file of dataset `id` under its agent directory. */
export const donorDataFile = (agentDir: string, id: string): string =>
  join(agentDir, 'store', 'datasets', `${id}.data`);

/**
 * How many times PLAINTEXT_MARKER occurs in the data files of dataset `id` in the agent
 * directories `agentDirs` (a donor without the dataset counts 0).
 *
 * @example await markersOnDonors(c.agentDirs, id) // → 0 when every donor stores ciphertext
 */
export async function markersOnDonors(agentDirs: readonly string[], id: string): Promise<number> {
  let found = 0;
  for (const dir of agentDirs) {
    const bytes = await readFile(donorDataFile(dir, id)).catch(() => Buffer.alloc(0));
    for (let at = bytes.indexOf(PLAINTEXT_MARKER); at >= 0;) {
      found++;
      at = bytes.indexOf(PLAINTEXT_MARKER, at + 1);
    }
  }
  return found;
}
