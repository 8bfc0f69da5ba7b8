import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The agent's small native addon (`apps/agent/native/data-path`, built by `npm ci`'s
 * postinstall with node-gyp, against the OpenSSL Node itself is built with): what Node offers no
 * JavaScript API for, on the read path. Optional everywhere: without it (no compiler, another
 * platform, `FREELOADER_NATIVE=off`) every caller falls back to plain Node, only dearer.
 */
export interface NativeAddon {
  /** AES-256-GCM: decipher `data` in place; false when `tag` does not match (data unusable). */
  open(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    data: Uint8Array,
    tag: Uint8Array,
  ): boolean;
  /** AES-256-GCM: encipher `data` in place and write its tag into `tagOut` (16 bytes). */
  seal(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    data: Uint8Array,
    tagOut: Uint8Array,
  ): void;
  /** `setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, bytes)`; false when the kernel refused it. */
  setLowWater(fd: number, bytes: number): boolean;
  /** The socket's `SO_RCVLOWAT`; -1 when it cannot be read. */
  getLowWater(fd: number): number;
  /**
   * Send what is left of `head` + the file's [position, position + length) from byte `sent` on,
   * in a pool thread, until done or the socket is full; `callback(errno, sent)`. Absent from
   * addons built before it (a stale build): callers check.
   */
  sendFile?: (
    sockFd: number,
    head: Buffer,
    fileFd: number,
    position: number,
    length: number,
    sent: number,
    callback: (errno: number, sent: number) => void,
  ) => void;
  /** `callback(0)` once the socket is writable, `1` after `timeoutMs`, a libuv error (< 0). */
  waitWritable?: (sockFd: number, timeoutMs: number, callback: (status: number) => void) => void;
}

/** Where the addon is once built (the same path from `src/` and from `dist/`). */
export const NATIVE_ADDON_PATH = fileURLToPath(
  new URL('../../native/data-path/build/Release/data_path.node', import.meta.url),
);

/** The addon's path when it is built and not turned off: what a worker thread should load. */
export function nativeAddonPath(): string | undefined {
  if (process.env.FREELOADER_NATIVE === 'off') return undefined;
  return existsSync(NATIVE_ADDON_PATH) ? NATIVE_ADDON_PATH : undefined;
}

let loaded: NativeAddon | null | undefined;

/** The addon, loaded once; undefined when it is not there or does not load. */
export function nativeAddon(): NativeAddon | undefined {
  if (loaded === undefined) {
    const path = nativeAddonPath();
    try {
      loaded = path === undefined ? null : (createRequire(import.meta.url)(path) as NativeAddon);
    } catch {
      // Built for another Node ABI or platform: plain Node does the same work, only dearer.
      loaded = null;
    }
  }
  return loaded ?? undefined;
}
