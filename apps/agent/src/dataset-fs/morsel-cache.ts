/**
 * Memory one morsel lives in: its own SharedArrayBuffer, so the thread that fetches it writes
 * the bytes in place, the hash workers read them there, and the thread answering the kernel
 * copies straight out of it — no copy between threads, no allocation per morsel once the cache
 * has warmed up (a freed buffer is reused for the next morsel of its size). A new buffer has no
 * memory yet: the source allocates it where the bytes are written ({@link attach}), so the thread
 * answering the kernel never spends a millisecond zeroing and faulting in a fresh MiB.
 */
export class MorselBuffer {
  memory: SharedArrayBuffer | undefined;
  /** A view of the whole buffer (empty until attached). */
  bytes: Buffer = Buffer.alloc(0);

  constructor(
    /** Unique within the process: names the buffer to the fetching thread. */
    readonly id: number,
    readonly size: number,
  ) {}

  /** Give the buffer its memory (exactly `size` bytes). */
  attach(memory: SharedArrayBuffer): this {
    if (memory.byteLength !== this.size) {
      throw new RangeError(`buffer ${this.id} needs ${this.size} bytes, got ${memory.byteLength}`);
    }
    this.memory = memory;
    this.bytes = Buffer.from(memory);
    return this;
  }
}

/**
 * Fill `into` with the morsel from its start (attaching memory first when it has none); resolves
 * with the morsel's length.
 */
export type MorselFetch = (into: MorselBuffer) => Promise<number>;

interface Entry {
  file: string;
  index: number;
  buffer: MorselBuffer;
  /** The morsel's bytes once loaded (a view of `buffer`), undefined while loading. */
  data: Buffer | undefined;
  loading: Promise<Buffer> | undefined;
  /** Least recently used order among loaded entries (intrusive list: no allocation to touch). */
  older: Entry | undefined;
  newer: Entry | undefined;
}

let nextBufferId = 1;

/**
 * The mount's memory: verified morsels of every open file, least recently used evicted first,
 * bounded in bytes together with the loads in flight and the spare buffers kept for reuse.
 * Concurrent asks for one morsel share one load, so two readers of a file (or a reader and the
 * prefetcher) never fetch a morsel twice. A loading morsel's buffer is never reused before its
 * fetch settles, even when the reader that asked gave up: the fetching thread may still write.
 *
 * @example
 *   const cache = new MorselCache(256 * MiB);
 *   const data = await cache.load(id, 7, MiB, (into) => source.read(id, 7, into));
 *   cache.get(id, 7) === data; // true: loaded, and now the most recently used
 */
export class MorselCache {
  private readonly files = new Map<string, Map<number, Entry>>();
  /** Spare buffers by size. */
  private readonly spare = new Map<number, MorselBuffer[]>();
  private oldest: Entry | undefined;
  private newest: Entry | undefined;
  private cachedBytes = 0;
  private loadingBytes = 0;
  private spareBytes = 0;
  private loaded = 0;

  constructor(
    readonly capacityBytes: number,
    /** Told when a buffer is let go for good (the fetching thread may forget it too). */
    private readonly onDrop: (buffer: MorselBuffer) => void = () => undefined,
  ) {
    if (!(capacityBytes > 0)) throw new RangeError('cache capacity must be positive');
  }

  /**
   * Morsel `index` of `file` when it is in memory (now the most recently used); undefined when
   * absent or still loading. Allocates nothing: this is the kernel's fast path.
   */
  get(file: string, index: number): Buffer | undefined {
    const e = this.files.get(file)?.get(index);
    if (!e?.data) return undefined;
    if (e !== this.newest) {
      this.unlink(e);
      this.append(e);
    }
    return e.data;
  }

  /** Loaded or loading. */
  has(file: string, index: number): boolean {
    return this.files.get(file)?.has(index) ?? false;
  }

  /**
   * The morsel from memory, joining a load in flight, or loaded now with `fetch` into a buffer of
   * `size` bytes (a spare one when there is, else room is made by evicting the least recently
   * used). A failed load is forgotten (the next ask tries again).
   */
  load(file: string, index: number, size: number, fetch: MorselFetch): Promise<Buffer> {
    const hit = this.get(file, index);
    if (hit) return Promise.resolve(hit);
    const inFlight = this.files.get(file)?.get(index)?.loading;
    if (inFlight) return inFlight;
    const buffer = this.take(size);
    const entry: Entry = {
      file,
      index,
      buffer,
      data: undefined,
      loading: undefined,
      older: undefined,
      newer: undefined,
    };
    let morsels = this.files.get(file);
    if (!morsels) this.files.set(file, (morsels = new Map<number, Entry>()));
    morsels.set(index, entry);
    this.loadingBytes += size;
    let started: Promise<number>;
    try {
      started = fetch(buffer);
    } catch (e) {
      started = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const checked = started.then((length) => {
      if (buffer.bytes.length < length)
        throw new RangeError(`morsel ${index} overflows its buffer`);
      return length;
    });
    entry.loading = checked.then(
      (length) => {
        this.loadingBytes -= size;
        this.cachedBytes += size;
        entry.loading = undefined;
        entry.data = buffer.bytes.subarray(0, length);
        this.append(entry);
        this.loaded++;
        return entry.data;
      },
      (e: unknown) => {
        this.loadingBytes -= size;
        this.forget(entry);
        if (buffer.memory) this.putSpare(buffer);
        throw e;
      },
    );
    return entry.loading;
  }

  /**
   * Start a load only if it fits beside what is cached-and-wanted: prefetches may use at most
   * `share` of the capacity in flight, so they never push out what demand reads just brought in
   * nor grow memory past the bound. Returns false when it did not start.
   */
  prefetch(file: string, index: number, size: number, fetch: MorselFetch, share = 0.5): boolean {
    if (this.has(file, index)) return true;
    if (this.loadingBytes + size > this.capacityBytes * share) return false;
    this.load(file, index, size, fetch).catch(() => undefined); // a demand read retries, reports
    return true;
  }

  /** Bytes of loaded morsels plus bytes being loaded: never above the capacity for long. */
  get usedBytes(): number {
    return this.cachedBytes + this.loadingBytes;
  }

  /** All the memory held, spare buffers included. */
  get heldBytes(): number {
    return this.cachedBytes + this.loadingBytes + this.spareBytes;
  }

  /** Loaded morsels. */
  get size(): number {
    return this.loaded;
  }

  /** Let go of every loaded morsel and spare buffer (loads in flight finish on their own). */
  clear(): void {
    while (this.oldest) this.evict(this.oldest);
    for (const list of this.spare.values()) for (const b of list) this.onDrop(b);
    this.spare.clear();
    this.spareBytes = 0;
  }

  /** A buffer of `size` bytes for a new load: spare, freed by eviction, or new (no memory yet). */
  private take(size: number): MorselBuffer {
    for (;;) {
      const reuse = this.spare.get(size)?.pop();
      if (reuse) {
        this.spareBytes -= size;
        return reuse;
      }
      if (this.heldBytes + size <= this.capacityBytes) break;
      // Over the bound: spare buffers of other sizes go first, then the least recently used.
      if (!this.dropSpare()) {
        if (!this.oldest) break; // everything is loading: a demand read still gets its buffer
        this.evict(this.oldest);
      }
    }
    return new MorselBuffer(nextBufferId++, size);
  }

  private evict(e: Entry): void {
    this.unlink(e);
    this.loaded--;
    this.forget(e);
    this.cachedBytes -= e.buffer.size;
    this.putSpare(e.buffer);
  }

  private forget(e: Entry): void {
    const morsels = this.files.get(e.file);
    if (morsels?.get(e.index) !== e) return;
    morsels.delete(e.index);
    if (morsels.size === 0) this.files.delete(e.file);
  }

  private putSpare(b: MorselBuffer): void {
    let list = this.spare.get(b.size);
    if (!list) this.spare.set(b.size, (list = []));
    list.push(b);
    this.spareBytes += b.size;
  }

  /** Drop one spare buffer; false when there is none. */
  private dropSpare(): boolean {
    for (const [size, list] of this.spare) {
      const b = list.pop();
      if (list.length === 0) this.spare.delete(size);
      if (!b) continue;
      this.spareBytes -= size;
      this.onDrop(b);
      return true;
    }
    return false;
  }

  private append(e: Entry): void {
    e.older = this.newest;
    e.newer = undefined;
    if (this.newest) this.newest.newer = e;
    else this.oldest = e;
    this.newest = e;
  }

  private unlink(e: Entry): void {
    if (e.older) e.older.newer = e.newer;
    else if (this.oldest === e) this.oldest = e.newer;
    if (e.newer) e.newer.older = e.older;
    else if (this.newest === e) this.newest = e.older;
    e.older = e.newer = undefined;
  }
}
