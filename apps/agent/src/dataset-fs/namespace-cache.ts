import type { DatasetView, Listing } from '@freeloader/protocol';
import { FsError, errnoOf } from './file-system.js';

export type NamespaceEntry =
  { kind: 'dir'; path: string; createdAt: Date } | { kind: 'file'; dataset: DatasetView };

/**
 * Which datasets appear as files: ready ones. A partially cached dataset (prefix on donors,
 * suffix from the source) is `ready` with `cachedBytes < sizeBytes` and is shown at its full
 * size: the reader patches the rest from the source, so applications cannot tell.
 */
export function isVisible(d: DatasetView): boolean {
  return d.state === 'ready';
}

/** Folders remembered at most (oldest forgotten first). */
const MAX_FOLDERS = 1024;

/**
 * The manager's namespace as a tree of paths, one listing per folder, each kept for `ttlMs` so
 * `ls -R` and the kernel's lookups cost one manager call per folder, not per name. When the
 * manager cannot be reached an older listing is served rather than failing `ls`.
 *
 * @example
 *   const ns = new NamespaceCache((p) => manager.request('GET', `/namespace?path=${p}`), 5000);
 *   await ns.lookup('/climate/tas.nc'); // { kind: 'file', dataset }
 */
export class NamespaceCache {
  private readonly listings = new Map<string, { at: number; listing: Listing }>();
  private readonly pending = new Map<string, Promise<Listing>>();
  private readonly mountedAt = new Date();

  constructor(
    private readonly list: (folder: string) => Promise<Listing>,
    private readonly ttlMs = 5_000,
  ) {}

  /** The folder or dataset at a mount path (`/`, `/a`, `/a/b.nc`); ENOENT when there is none. */
  async lookup(mountPath: string): Promise<NamespaceEntry> {
    const path = toNamespacePath(mountPath);
    if (path === '') return { kind: 'dir', path: '', createdAt: this.mountedAt };
    const slash = path.lastIndexOf('/');
    const parent = slash < 0 ? '' : path.slice(0, slash);
    const name = path.slice(slash + 1);
    const listing = await this.listing(parent);
    const folder = listing.folders.find((f) => basename(f.path) === name);
    if (folder) return { kind: 'dir', path, createdAt: new Date(folder.createdAt) };
    const dataset = listing.datasets.find((d) => basename(d.path) === name && isVisible(d));
    if (dataset) return { kind: 'file', dataset };
    throw new FsError('ENOENT', `${mountPath}: no such folder or dataset`);
  }

  /** Names directly under a mount path: folders, then visible datasets. */
  async children(mountPath: string): Promise<string[]> {
    const entry = await this.lookup(mountPath);
    if (entry.kind !== 'dir') throw new FsError('ENOTDIR', `${mountPath} is a dataset`);
    const listing = await this.listing(entry.path);
    return [
      ...listing.folders.map((f) => basename(f.path)),
      ...listing.datasets.filter(isVisible).map((d) => basename(d.path)),
    ];
  }

  /** Every listing fetched so far (for statfs's totals). */
  knownDatasets(): DatasetView[] {
    return [...this.listings.values()].flatMap((l) => l.listing.datasets.filter(isVisible));
  }

  private async listing(folder: string): Promise<Listing> {
    const cached = this.listings.get(folder);
    if (cached && performance.now() - cached.at < this.ttlMs) return cached.listing;
    let p = this.pending.get(folder);
    if (!p) {
      p = this.list(folder).finally(() => this.pending.delete(folder));
      this.pending.set(folder, p);
    }
    try {
      const listing = await p;
      this.listings.delete(folder);
      this.listings.set(folder, { at: performance.now(), listing });
      if (this.listings.size > MAX_FOLDERS) {
        this.listings.delete(this.listings.keys().next().value!);
      }
      return listing;
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') {
        this.listings.delete(folder);
        throw new FsError('ENOENT', `${folder}: no such folder`, e);
      }
      // Manager unreachable: an older listing beats failing `ls`.
      if (cached) return cached.listing;
      throw e;
    }
  }
}

/** `/a/b/` → `a/b`; `/` → ``. */
export function toNamespacePath(mountPath: string): string {
  return mountPath.replace(/^\/+|\/+$/g, '');
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
