/**
 * The prefix-size model of seed 002 §3.1. A client reads a cached dataset sequentially at
 * `clientRate`; the uncached suffix is patched from the source in parallel, costing a startup
 * latency L plus (S − S_prefix) / R_patch. Equating the two times gives the smallest prefix
 * whose read hides the patch:
 *
 *   S / R_client = L + (S − S_prefix) / R_patch
 *   S_prefix     = S · (1 − R_patch / R_client) + L · R_patch
 *
 * The seed assumes R_patch < R_client. For a faster source the end of the read is never the
 * problem, its start is: the prefix must keep the client busy for L, so the answer is at least
 * L · R_client (for R_patch < R_client that bound is implied whenever S / R_client ≥ L).
 * The answer is clamped to [0, S] and rounded up to whole morsels (a partial morsel cannot be
 * cached, and caching slightly more only makes the patch easier to hide).
 */

export interface PrefixModelInput {
  /** Dataset size S (bytes). */
  sizeBytes: number;
  /** R_client: the client's in-cache read rate (bytes/s). */
  clientRate: number;
  /** R_patch: aggregate patch rate of the patching nodes from this source (bytes/s). */
  patchRate: number;
  /** L: the source's size-independent startup latency (seconds). */
  startupLatencyS: number;
}

/**
 * The model's prefix in bytes, not rounded: max(S·(1 − R_patch/R_client) + L·R_patch, L·R_client)
 * in [0, S].
 * An unknown or zero patch rate cannot hide anything: the whole dataset.
 *
 * @example
 *   // seed Table 2, TeraGrid-ORNL: 2500 MB, R_client 52.2 MB/s, R_patch 42 MB/s, L 3 s
 *   modelPrefixBytes({ sizeBytes: 2500e6, clientRate: 52.2e6, patchRate: 42e6, startupLatencyS: 3 })
 *   // → 614.5e6 (24.6 %)
 */
export function modelPrefixBytes(input: PrefixModelInput): number {
  const { sizeBytes: s, clientRate, patchRate, startupLatencyS } = input;
  if (!(s > 0)) return 0;
  if (!(patchRate > 0) || !(clientRate > 0) || !Number.isFinite(startupLatencyS)) return s;
  const latency = Math.max(0, startupLatencyS);
  const raw = Math.max(
    s * (1 - patchRate / clientRate) + latency * patchRate,
    latency * clientRate,
  );
  return Math.min(s, Math.max(0, raw));
}

/**
 * The model's prefix as the cache stores it: whole morsels (rounded up), never more than S.
 *
 * @example prefixBytes({ sizeBytes: 10 * MiB, clientRate: 100, patchRate: 50, startupLatencyS: 0 }, MiB) // → 5 MiB
 */
export function prefixBytes(input: PrefixModelInput, morselSize: number): number {
  if (!(morselSize > 0)) throw new RangeError(`morsel size must be > 0, got ${morselSize}`);
  const raw = modelPrefixBytes(input);
  return Math.min(input.sizeBytes, Math.ceil(raw / morselSize) * morselSize);
}

/** The model's prefix as a fraction of the dataset (0…1, unrounded); 0 for an empty dataset. */
export function prefixRatio(input: PrefixModelInput): number {
  return input.sizeBytes > 0 ? modelPrefixBytes(input) / input.sizeBytes : 0;
}
