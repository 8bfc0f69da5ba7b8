import { FreeLoaderError } from '@freeloader/protocol';
import type { MountAdapter } from './adapter.js';
import { FuseAdapter } from './fuse-adapter.js';

/** A platform without an adapter yet: says so instead of failing obscurely. */
class UnsupportedAdapter implements MountAdapter {
  constructor(
    readonly name: string,
    private readonly why: string,
  ) {}
  unavailable(): string {
    return this.why;
  }
  mount(): never {
    throw new FreeLoaderError('UNAVAILABLE', this.why);
  }
}

/**
 * The mount adapter for a platform. Linux uses libfuse 2; macOS the same adapter over macFUSE
 * (untested); Windows needs a WinFsp adapter that does not exist yet.
 *
 * @example const adapter = mountAdapterFor(); const why = adapter.unavailable();
 */
export function mountAdapterFor(platform: NodeJS.Platform = process.platform): MountAdapter {
  switch (platform) {
    case 'linux':
    case 'darwin':
      return new FuseAdapter();
    case 'win32':
      return new UnsupportedAdapter(
        'winfsp',
        'mounting on Windows needs a WinFsp adapter, which FreeLoader does not have yet: use `freeloader get`',
      );
    default:
      return new UnsupportedAdapter(
        'none',
        `mounting is not supported on ${platform}: use \`freeloader get\``,
      );
  }
}
