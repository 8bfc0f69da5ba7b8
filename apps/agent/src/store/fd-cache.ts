import { open, type FileHandle } from 'node:fs/promises';

/** A borrowed file handle; call `release()` exactly once when done. */
export interface HandleLease {
  fh: FileHandle;
  release(): void;
}

interface Entry {
  opening: Promise<FileHandle>;
  refs: number;
  /** Dropped from the cache: close as soon as the last lease is released. */
  doomed: boolean;
}

/**
 * A small LRU of open `r+` file handles keyed by path, so hot datasets keep their fds while a
 * donor holding thousands of datasets never runs out of them. Handles in use are never closed
 * under a reader; they close when their last lease is released.
 *
 * @example const lease = await cache.acquire(path); try { await lease.fh.read(...) } finally { lease.release() }
 */
export class HandleCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly maxOpen = 64) {}

  async acquire(path: string): Promise<HandleLease> {
    let entry = this.entries.get(path);
    if (entry) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.entries.delete(path);
      this.entries.set(path, entry);
    } else {
      entry = { opening: open(path, 'r+'), refs: 0, doomed: false };
      this.entries.set(path, entry);
    }
    // Count the lease before evicting so the entry being acquired is never the victim.
    entry.refs++;
    this.evict();
    let fh: FileHandle;
    try {
      fh = await entry.opening;
    } catch (err) {
      entry.refs--;
      if (this.entries.get(path) === entry) this.entries.delete(path);
      throw err;
    }
    const held = entry;
    let released = false;
    return {
      fh,
      release: () => {
        if (released) return;
        released = true;
        held.refs--;
        if (held.doomed && held.refs === 0) void closeQuietly(held);
      },
    };
  }

  /** Forget a path (file deleted or replaced); its handle closes once no lease holds it. */
  drop(path: string): void {
    const entry = this.entries.get(path);
    if (!entry) return;
    this.entries.delete(path);
    this.doom(entry);
  }

  async closeAll(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map(async (e) => {
        e.doomed = true;
        await closeQuietly(e);
      }),
    );
  }

  private evict(): void {
    if (this.entries.size <= this.maxOpen) return;
    for (const [path, entry] of this.entries) {
      if (this.entries.size <= this.maxOpen) break;
      if (entry.refs > 0) continue;
      this.entries.delete(path);
      this.doom(entry);
    }
  }

  private doom(entry: Entry): void {
    entry.doomed = true;
    if (entry.refs === 0) void closeQuietly(entry);
  }
}

async function closeQuietly(entry: Entry): Promise<void> {
  try {
    await (await entry.opening).close();
  } catch {
    // Open failed or already closed: nothing to release.
  }
}
