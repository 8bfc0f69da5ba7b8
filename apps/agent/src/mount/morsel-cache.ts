/**
 * The mount's memory: verified morsels by key, least recently used evicted first, bounded in
 * bytes together with the loads in flight. Concurrent asks for one key share one load, so two
 * readers of a file (or a reader and the prefetcher) never fetch a morsel twice.
 *
 * @example
 *   const cache = new MorselCache(256 * MiB);
 *   const data = await cache.load(`${id}/${i}`, MiB, () => reader.readMorsel(i));
 */
export class MorselCache {
  private readonly entries = new Map<string, Buffer>();
  private readonly loading = new Map<string, { size: number; promise: Promise<Buffer> }>();
  private cachedBytes = 0;
  private loadingBytes = 0;

  constructor(readonly capacityBytes: number) {
    if (!(capacityBytes > 0)) throw new RangeError('cache capacity must be positive');
  }

  /** The cached morsel, now the most recently used; undefined when absent or still loading. */
  get(key: string): Buffer | undefined {
    const data = this.entries.get(key);
    if (data) {
      this.entries.delete(key);
      this.entries.set(key, data);
    }
    return data;
  }

  /** Cached or loading. */
  has(key: string): boolean {
    return this.entries.has(key) || this.loading.has(key);
  }

  /**
   * The morsel from memory, joining a load in flight, or loaded now with `fetch`. A failed load
   * is forgotten (the next ask tries again); a finished one is kept, evicting the oldest.
   */
  load(key: string, size: number, fetch: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.get(key);
    if (hit) return Promise.resolve(hit);
    const inFlight = this.loading.get(key);
    if (inFlight) return inFlight.promise;
    const promise = fetch().then(
      (data) => {
        this.finish(key, size);
        this.store(key, data);
        return data;
      },
      (e: unknown) => {
        this.finish(key, size);
        throw e;
      },
    );
    this.loading.set(key, { size, promise });
    this.loadingBytes += size;
    return promise;
  }

  /**
   * Start a load only if it fits beside what is cached-and-wanted: prefetches may use at most
   * `share` of the capacity in flight, so they never push out what demand reads just brought in
   * nor grow memory past the bound. Returns false when it did not start.
   */
  prefetch(key: string, size: number, fetch: () => Promise<Buffer>, share = 0.5): boolean {
    if (this.has(key)) return true;
    if (this.loadingBytes + size > this.capacityBytes * share) return false;
    this.load(key, size, fetch).catch(() => undefined); // a demand read will retry and report
    return true;
  }

  /** Bytes held plus bytes being loaded: never above the capacity for long. */
  get usedBytes(): number {
    return this.cachedBytes + this.loadingBytes;
  }

  get size(): number {
    return this.entries.size;
  }

  private finish(key: string, size: number): void {
    this.loading.delete(key);
    this.loadingBytes -= size;
  }

  private store(key: string, data: Buffer): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.cachedBytes -= old.length;
    }
    this.entries.set(key, data);
    this.cachedBytes += data.length;
    for (const [k, d] of this.entries) {
      if (this.cachedBytes + this.loadingBytes <= this.capacityBytes) break;
      if (k === key) continue; // keep what was just asked for even when it alone is too big
      this.entries.delete(k);
      this.cachedBytes -= d.length;
    }
  }
}
