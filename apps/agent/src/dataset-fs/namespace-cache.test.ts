import { describe, expect, it } from 'vitest';
import { FreeLoaderError, type DatasetView, type Listing } from '@freeloader/protocol';
import { NamespaceCache, toNamespacePath } from './namespace-cache.js';

const dataset = (path: string, state: DatasetView['state'] = 'ready'): DatasetView => ({
  id: '00000000-0000-4000-8000-000000000001',
  path,
  sourceUri: null,
  sizeBytes: 10,
  morselSize: 1 << 20,
  etag: null,
  lastModified: null,
  state,
  cachedBytes: 10,
  error: null,
  createdAt: '2026-01-02T03:04:05.000Z',
  lastAccessAt: null,
});
const folder = (path: string): Listing['folders'][number] => ({
  id: '00000000-0000-4000-8000-000000000002',
  path,
  createdAt: '2026-01-01T00:00:00.000Z',
});

/** A namespace held in a map, standing in for the manager's listing route. */
function tree(): { calls: string[]; down: boolean; list: (f: string) => Promise<Listing> } {
  const folders: Record<string, Listing> = {
    '': { path: '', folders: [folder('a')], datasets: [dataset('top.bin')] },
    a: {
      path: 'a',
      folders: [],
      datasets: [dataset('a/x.nc'), dataset('a/busy.nc', 'importing')],
    },
  };
  const t = {
    calls: [] as string[],
    down: false,
    list: async (f: string): Promise<Listing> => {
      t.calls.push(f);
      if (t.down) throw new FreeLoaderError('UNAVAILABLE', 'manager down');
      const l = folders[f];
      if (!l) throw new FreeLoaderError('FOLDER_NOT_FOUND', `no folder ${f}`);
      return l;
    },
  };
  return t;
}

describe('NamespaceCache', () => {
  it.each([
    ['/', 'dir'],
    ['/a', 'dir'],
    ['/a/', 'dir'],
    ['/top.bin', 'file'],
    ['/a/x.nc', 'file'],
    ['/a/busy.nc', 'ENOENT'], // not ready: not shown
    ['/nope', 'ENOENT'],
    ['/a/x.nc/deeper', 'ENOENT'],
    ['/b/c', 'ENOENT'],
  ])('lookup(%s) → %s', async (path, expected) => {
    const ns = new NamespaceCache(tree().list);
    const got = await ns.lookup(path).then(
      (e) => e.kind,
      (e: { errno?: string }) => e.errno,
    );
    expect(got).toBe(expected);
  });

  it.each([
    ['/', ['a', 'top.bin']],
    ['/a', ['x.nc']],
  ])('children(%s) → %j', async (path, names) => {
    expect(await new NamespaceCache(tree().list).children(path)).toEqual(names);
  });

  it('refuses to list a dataset as a folder', async () => {
    await expect(new NamespaceCache(tree().list).children('/top.bin')).rejects.toMatchObject({
      errno: 'ENOTDIR',
    });
  });

  it('asks the manager once per folder within the TTL, again after it', async () => {
    const t = tree();
    const ns = new NamespaceCache(t.list, 50);
    await Promise.all([ns.lookup('/a/x.nc'), ns.lookup('/a/x.nc'), ns.children('/a')]);
    expect(t.calls.sort()).toEqual(['', 'a']);
    await new Promise((r) => setTimeout(r, 60));
    await ns.lookup('/a/x.nc'); // only its folder's listing is needed
    expect(t.calls).toEqual(['', 'a', 'a']);
  });

  it('serves an old listing while the manager is unreachable, EIO without one', async () => {
    const t = tree();
    const ns = new NamespaceCache(t.list, 0);
    expect((await ns.lookup('/top.bin')).kind).toBe('file');
    t.down = true;
    expect((await ns.lookup('/top.bin')).kind).toBe('file');
    await expect(ns.lookup('/a/x.nc')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it.each([
    ['/', ''],
    ['/a/b/', 'a/b'],
    ['//a', 'a'],
  ])('toNamespacePath(%s) = %s', (p, expected) => {
    expect(toNamespacePath(p)).toBe(expected);
  });
});
