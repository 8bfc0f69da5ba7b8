import type { MorselSealing } from './morsel-sealing.js';

/** What a map's hash page holds for a morsel the manager has no hash for. */
const ZERO_HASH = '0'.repeat(64);

/**
 * Whether the plain bytes of a suffix morsel now in the reader's buffer are right, given the
 * SHA-256 its downloader (a patching node) computed, or undefined for bytes read from the
 * source itself.
 */
export type SuffixCheck = (downloaderSha256: string | undefined) => Promise<boolean>;

/**
 * The check of patched morsel `index` (seed 002's collective download) for a dataset in clear
 * or encrypted. The reference is the manager's when it has one, else the downloader's hash:
 *  - in clear: the manager's SHA-256 of the morsel (imported before a cut, or patched before);
 *  - encrypted: the map's AES-GCM tag (every morsel ever stored has one): the plain text is
 *    sealed again (same key, same nonce, so the same tag) and the tags compared. The map's
 *    SHA-256 is of the ciphertext and never compared with plain text; patching nodes hold no
 *    key, serve the source's plain bytes (what they downloaded) and store nothing;
 *  - neither (the suffix of a dataset imported as a prefix, never stored): the SHA-256 the
 *    downloader computed, which catches corruption on the way from node to reader. Bytes read
 *    from the source with no reference are right by definition (the durable copy, pinned to
 *    the imported version).
 *
 * @example
 *   const check = suffixCheck({ index: 9, expected, hash, plain: () => target, sealing });
 *   await check(nodeSha256); // true when the node's bytes are morsel 9
 */
export function suffixCheck(opts: {
  index: number;
  /** The manager's SHA-256 from the map ('' or zeros when it has none). */
  expected: string;
  /** SHA-256 of the bytes now in the buffer. */
  hash: () => Promise<string>;
  /** The bytes now in the buffer. */
  plain: () => Buffer;
  sealing: MorselSealing | undefined;
}): SuffixCheck {
  const { index, sealing } = opts;
  const known =
    !sealing && opts.expected.length === 64 && opts.expected !== ZERO_HASH ? opts.expected : null;
  return async (downloader) => {
    // A tag, when the manager has one, decides whatever the node claims.
    if (sealing && (await sealing.hasTag(index))) return sealing.matchesPlain(index, opts.plain());
    const reference = known ?? downloader;
    return reference === undefined || (await opts.hash()) === reference;
  };
}
