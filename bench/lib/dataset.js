import { createCipheriv, createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';

/**
 * @typedef {object} Dataset
 * @property {string} path absolute path of the file
 * @property {string} name file name (served by nginx under /<name>)
 * @property {number} bytes
 * @property {string} sha256 hex
 */

/** AES-128-CTR key: the keystream is the file, so every run makes the same bytes, at GB/s. */
const KEY = Buffer.from('freeloader-bench');
const CHUNK = 4 * 1024 * 1024;

/**
 * Write a deterministic pseudo-random file of `bytes` bytes (incompressible, identical in every
 * run: an AES-CTR keystream with a fixed key) into `dir` and return its sha256.
 *
 * @param {string} dir
 * @param {number} bytes
 * @returns {Promise<Dataset>}
 * @example
 *   const ds = await makeDataset('/tmp/x', 64 * 2 ** 20); // ds.sha256 is the same every run
 */
export async function makeDataset(dir, bytes) {
  const name = `dataset-${bytes}.bin`;
  const path = join(dir, name);
  const cipher = createCipheriv('aes-128-ctr', KEY, Buffer.alloc(16));
  const hash = createHash('sha256');
  const out = createWriteStream(path, { mode: 0o644 });
  const zeros = Buffer.alloc(CHUNK);
  for (let left = bytes; left > 0; left -= CHUNK) {
    const block = cipher.update(left >= CHUNK ? zeros : zeros.subarray(0, left));
    hash.update(block);
    if (!out.write(block))
      await new Promise((resolve) => out.once('drain', () => resolve(undefined)));
  }
  out.end();
  await finished(out);
  return { path, name, bytes, sha256: hash.digest('hex') };
}

/**
 * sha256 and size of a file, to verify a download.
 *
 * @param {string} path
 * @returns {Promise<{ sha256: string, bytes: number }>}
 */
export async function fileDigest(path) {
  const hash = createHash('sha256');
  const input = createReadStream(path, { highWaterMark: CHUNK });
  input.on('data', (chunk) => hash.update(chunk));
  await finished(input);
  return { sha256: hash.digest('hex'), bytes: (await stat(path)).size };
}
