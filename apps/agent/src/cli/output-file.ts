import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { constants as os } from 'node:os';

/** Signals that end `get` early; the temp file is removed before the process goes. */
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Where `get -o FILE` writes: a temporary file beside FILE (`.FILE.freeloader-<random>.part`,
 * same directory so the final rename is atomic), fsynced and renamed over FILE only when the
 * whole dataset is in and verified. A failed, interrupted (SIGINT/SIGTERM/SIGHUP) or crashed
 * read removes the temp file, so FILE is never left partial or zero-filled and an existing FILE
 * stays untouched. A target that exists and is not a regular file (`/dev/null`, a FIFO) is
 * written directly: it cannot be replaced, and nothing is left behind in it.
 *
 * @example
 *   const out = await OutputFile.open('tas.nc');
 *   try { await getDataset({ …, sink: out.handle }); await out.commit(); }
 *   finally { await out.discard(); } // a no-op after commit
 */
export class OutputFile {
  private done = false;
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.removeTempSync();
    // The shell convention for "ended by signal N".
    process.exit(128 + (os.signals[signal] ?? 1));
  };
  private readonly onExit = (): void => this.removeTempSync();

  private fileHandle: FileHandle | undefined;

  private constructor(
    readonly target: string,
    /** Where the bytes go until commit; null when the target is written directly. */
    readonly tempPath: string | null,
  ) {
    if (tempPath === null) return;
    // Before the temp file exists: a signal that lands while it is being created must not
    // leave it behind (seen on a busy machine: the file was there, the handlers not yet).
    for (const s of SIGNALS) process.on(s, this.onSignal);
    process.on('exit', this.onExit);
  }

  get handle(): FileHandle {
    if (!this.fileHandle) throw new Error('output file not open');
    return this.fileHandle;
  }

  static async open(target: string): Promise<OutputFile> {
    const existing = await stat(target).catch(() => null);
    if (existing && !existing.isFile()) {
      const direct = new OutputFile(target, null);
      direct.fileHandle = await open(target, 'w');
      return direct;
    }
    const tempPath = join(
      dirname(target),
      `.${basename(target)}.freeloader-${randomBytes(6).toString('hex')}.part`,
    );
    const out = new OutputFile(target, tempPath);
    try {
      // Exclusive: never write through a name someone else made. An existing FILE keeps its mode.
      out.fileHandle = await open(tempPath, 'wx', existing ? existing.mode & 0o7777 : 0o666);
    } catch (e) {
      out.finish();
      throw e;
    }
    return out;
  }

  /** Flush to disk and move the finished file into place. */
  async commit(): Promise<void> {
    if (this.done) return;
    if (!this.tempPath) {
      // A device or FIFO: nothing to move, and fsync is not theirs to answer (EINVAL).
      await this.handle.close();
      return this.finish();
    }
    await this.handle.sync();
    await this.handle.close();
    await rename(this.tempPath, this.target);
    this.finish();
    // The rename itself must survive a crash too: sync the directory entry.
    await syncDir(dirname(this.target));
  }

  /** Close and remove the temp file; does nothing after {@link commit}. */
  async discard(): Promise<void> {
    if (this.done) return;
    await this.fileHandle?.close().catch(() => undefined);
    if (this.tempPath) await unlink(this.tempPath).catch(() => undefined);
    this.finish();
  }

  private finish(): void {
    this.done = true;
    for (const s of SIGNALS) process.off(s, this.onSignal);
    process.off('exit', this.onExit);
  }

  private removeTempSync(): void {
    if (this.done || !this.tempPath) return;
    try {
      unlinkSync(this.tempPath);
    } catch {
      // Already gone.
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, 'r').catch(() => null);
  await fd
    ?.sync()
    .catch(() => undefined)
    .finally(() => void fd.close());
}
