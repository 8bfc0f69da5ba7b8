import { createReadStream, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Readable } from 'node:stream';
import { FreeLoaderError } from '@freeloader/protocol';
import { exactStream } from './exact-stream.js';
import { checkRange } from './range.js';
import type { Source, SourceInfo } from './source.js';
import { redactUri } from './uri.js';

/**
 * file:// source for agents importing from a local or mounted disk. The "etag" is built from
 * inode, size and mtime, so a rewrite in place is noticed like an HTTP ETag change.
 */
export class FileSource implements Source {
  readonly uri: string;
  private readonly path: string;
  private readonly where: string;

  constructor(url: URL) {
    this.uri = url.href;
    this.path = fileURLToPath(url);
    this.where = redactUri(url);
  }

  async probe(signal?: AbortSignal): Promise<SourceInfo> {
    signal?.throwIfAborted();
    let st: Stats;
    try {
      st = await stat(this.path);
    } catch (err) {
      throw this.mapError(err);
    }
    if (!st.isFile()) throw new FreeLoaderError('SOURCE_ERROR', `${this.where}: not a file`);
    return this.infoOf(st);
  }

  async readRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
    into?: Buffer,
  ): Promise<Buffer> {
    checkRange(start, end, expect.size);
    if (into && into.length < end - start) {
      throw new RangeError(`readRange: a ${into.length}-byte buffer cannot hold ${end - start}`);
    }
    signal?.throwIfAborted();
    const fh = await this.openChecked(expect);
    try {
      const out = into ? into.subarray(0, end - start) : Buffer.allocUnsafe(end - start);
      let at = 0;
      while (at < out.length) {
        signal?.throwIfAborted();
        const { bytesRead } = await fh.read(out, at, out.length - at, start + at);
        if (bytesRead === 0) this.changed('file ended early');
        at += bytesRead;
      }
      await this.assertUnchanged(fh, expect);
      return out;
    } finally {
      await fh.close();
    }
  }

  async streamRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
  ): Promise<Readable> {
    checkRange(start, end, expect.size);
    signal?.throwIfAborted();
    const fh = await this.openChecked(expect);
    if (start === end) {
      await fh.close();
      return Readable.from([]);
    }
    const raw = createReadStream('', { fd: fh, start, end: end - 1, signal });
    return exactStream(raw, end - start, this.where, (err) =>
      signal?.aborted ? signal.reason : this.mapError(err),
    );
  }

  async readAll(expect: SourceInfo, signal?: AbortSignal): Promise<Readable> {
    return this.streamRange(0, expect.size, expect, signal);
  }

  async close(): Promise<void> {}

  private infoOf(st: Stats): SourceInfo {
    return {
      uri: this.uri,
      size: st.size,
      etag: `"${st.ino.toString(16)}-${st.size.toString(16)}-${Math.round(st.mtimeMs * 1000).toString(16)}"`,
      lastModified: st.mtime.toUTCString(),
      acceptsRanges: true,
    };
  }

  private async openChecked(expect: SourceInfo): Promise<FileHandle> {
    let fh: FileHandle;
    try {
      fh = await open(this.path, 'r');
    } catch (err) {
      throw this.mapError(err);
    }
    try {
      await this.assertUnchanged(fh, expect);
    } catch (err) {
      await fh.close();
      throw err;
    }
    return fh;
  }

  private async assertUnchanged(fh: FileHandle, expect: SourceInfo): Promise<void> {
    const now = this.infoOf(await fh.stat());
    if (now.size !== expect.size || now.etag !== expect.etag) this.changed('size or mtime differ');
  }

  private changed(why: string): never {
    throw new FreeLoaderError(
      'SOURCE_CHANGED',
      `${this.where}: source changed during import (${why})`,
    );
  }

  private mapError(err: unknown): unknown {
    const code = (err as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return new FreeLoaderError('SOURCE_ERROR', `${this.where}: not found`, { code }, err);
    }
    if (code === 'EACCES' || code === 'EPERM') {
      return new FreeLoaderError('SOURCE_ERROR', `${this.where}: access denied`, { code }, err);
    }
    return new FreeLoaderError('SOURCE_ERROR', `${this.where}: ${String(err)}`, { code }, err);
  }
}
