import { setTimeout as sleep } from 'node:timers/promises';
import { constants } from 'node:fs';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { type Agent, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { MAX_DIAGNOSTIC_PROBE_BYTES, type AgentDiagnostics } from '@freeloader/protocol';
import { managerDispatcher } from '../manager-tls.js';
import { timedDownload } from './download-probe.js';

/** Bytes written and read back to time the disk (sequential 1 MiB reads, as morsels are read). */
export const DISK_PROBE_BYTES = 32 * 1024 * 1024;
/** How long each network probe runs at most (milliseconds). */
export const NETWORK_PROBE_MS = 1_500;
/** Tries per part of the diagnostic before it is reported as not measured. */
const PROBE_ATTEMPTS = 3;
/** Pause before the next try, times the tries so far (milliseconds). */
const PROBE_RETRY_MS = 1_000;
const CHUNK = 1024 * 1024;
const FILE = 'diagnostics.json';

/**
 * The local disk read rate in bytes/s: write a scratch file, fsync it, read it back with O_DIRECT
 * so the page cache does not answer (`cached: false`). Where O_DIRECT is refused (tmpfs, some
 * platforms) the read is buffered and reported `cached: true` — an upper bound only.
 *
 * @example const { rate } = await measureDiskRead('/var/lib/freeloader'); // ≈ 5e8 on an SSD
 */
export async function measureDiskRead(
  dir: string,
  bytes = DISK_PROBE_BYTES,
): Promise<{ rate: number; cached: boolean }> {
  const path = join(dir, '.diagnostics-probe');
  const block = Buffer.alloc(CHUNK, 0x5a);
  const out = await open(path, 'w');
  try {
    for (let at = 0; at < bytes; at += CHUNK) await out.write(block, 0, CHUNK, at);
    await out.sync();
  } finally {
    await out.close();
  }
  try {
    const direct = await readTimed(path, bytes, true).catch(() => null);
    return direct ?? (await readTimed(path, bytes, false));
  } finally {
    await rm(path, { force: true });
  }
}

/** Read `bytes` sequentially; with `direct`, through O_DIRECT with an aligned buffer. */
async function readTimed(
  path: string,
  bytes: number,
  direct: boolean,
): Promise<{ rate: number; cached: boolean }> {
  const flags = constants.O_RDONLY | (direct ? (constants.O_DIRECT ?? 0) : 0);
  if (direct && !constants.O_DIRECT) throw new Error('no O_DIRECT here');
  const fd = await open(path, flags);
  try {
    // O_DIRECT wants a block-aligned buffer; JavaScript cannot ask for one, so find an offset
    // into a slightly larger buffer at which the kernel accepts the read.
    const buf = Buffer.allocUnsafeSlow(CHUNK + 4096);
    let offset = 0;
    if (direct) {
      offset = -1;
      for (let o = 0; o < 4096 && offset < 0; o += 16) {
        if (
          await fd.read(buf, o, CHUNK, 0).then(
            () => true,
            () => false,
          )
        )
          offset = o;
      }
      if (offset < 0) throw new Error('O_DIRECT refused every alignment');
    }
    const started = performance.now();
    let done = 0;
    while (done < bytes) {
      const { bytesRead } = await fd.read(buf, offset, CHUNK, done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    const seconds = Math.max((performance.now() - started) / 1000, 1e-6);
    return { rate: done / seconds, cached: !direct };
  } finally {
    await fd.close();
  }
}

/**
 * Download rate from the manager in bytes/s: stream its probe for up to `ms` and divide what
 * arrived by the time since the first byte (connection setup is not link rate).
 */
export async function measureDownload(
  managerUrl: string,
  authorization: string,
  ms = NETWORK_PROBE_MS,
  dispatcher?: Agent,
  signal?: AbortSignal,
): Promise<number> {
  const url = new URL(
    `${managerUrl}/api/v1/diagnostics/download?bytes=${MAX_DIAGNOSTIC_PROBE_BYTES}`,
  );
  if (url.protocol === 'http:') {
    // No garbage left behind (see timedDownload); https goes through fetch below.
    const { bytes, seconds } = await timedDownload(url, { authorization }, ms, signal);
    return bytes / Math.max(seconds, 1e-6);
  }
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), ms);
  let first = 0;
  let bytes = 0;
  try {
    const res = await undiciFetch(url, {
      headers: { authorization },
      signal: stop.signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (!res.ok || !res.body) throw new Error(`download probe: HTTP ${res.status}`);
    for await (const chunk of res.body) {
      if (first === 0) first = performance.now();
      else bytes += (chunk as Uint8Array).byteLength;
    }
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  const seconds = (performance.now() - first) / 1000;
  if (first === 0 || bytes === 0 || seconds <= 0) throw new Error('download probe got no data');
  return bytes / seconds;
}

/**
 * Upload rate to the manager in bytes/s: a 2 MiB trial sizes a second upload of about `ms`
 * (bounded by the manager's probe limit), which is the one timed.
 */
export async function measureUpload(
  managerUrl: string,
  authorization: string,
  ms = NETWORK_PROBE_MS,
  dispatcher?: Agent,
): Promise<number> {
  const send = async (bytes: number): Promise<number> => {
    const started = performance.now();
    // undici.request writes the stream's chunks as they are; fetch copied every 1 MiB chunk
    // into a web stream, leaving ~64 MB of garbage in a freshly enrolled agent.
    const res = await undiciRequest(`${managerUrl}/api/v1/diagnostics/upload`, {
      method: 'POST',
      headers: {
        authorization,
        'content-type': 'application/octet-stream',
        'content-length': String(bytes),
      },
      body: Readable.from(zeros(bytes)),
      signal: AbortSignal.timeout(ms * 10),
      ...(dispatcher ? { dispatcher } : {}),
    });
    await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299) {
      throw new Error(`upload probe: HTTP ${res.statusCode}`);
    }
    return bytes / Math.max((performance.now() - started) / 1000, 1e-6);
  };
  const trial = await send(2 * CHUNK);
  const size = Math.min(MAX_DIAGNOSTIC_PROBE_BYTES, Math.max(2 * CHUNK, (trial * ms) / 1000));
  return send(Math.round(size));
}

function* zeros(bytes: number): Generator<Buffer> {
  const block = Buffer.alloc(CHUNK);
  for (let left = bytes; left > 0; left -= CHUNK) yield block.subarray(0, Math.min(CHUNK, left));
}

export interface JoinDiagnosticsOptions {
  /** The agent's state directory: the probe file and the saved result live here. */
  dir: string;
  managerUrl: string;
  /** The agent's `Authorization` header once enrolled. */
  authorization: () => string | undefined;
  /** The manager's pinned CA (PEM) once enrolled, if the join token pinned one. */
  managerCa?: () => string | undefined;
  log: Logger;
  /** Default: on, unless FREELOADER_DIAGNOSTICS=off. */
  enabled?: boolean;
}

/**
 * The join-time diagnostic (seed 000 §5.2.1): once an agent is enrolled and online it measures
 * its disk read rate and its network rates, saves them in its directory (so a restart does not
 * measure again) and reports them in every heartbeat; the manager keeps them on the agent's row
 * for predictive and asymmetric placement. Runs in the background; a failed part reports null.
 */
export class JoinDiagnostics {
  private result: AgentDiagnostics | undefined;
  private started = false;
  private readonly abort = new AbortController();
  /**
   * The probe's own connection to the manager (trusting the pinned CA, known only once
   * enrolled): destroying it ends a transfer in flight.
   */
  private dispatcher: Agent | undefined;

  constructor(private readonly opts: JoinDiagnosticsOptions) {}

  /** Load the saved result or start measuring; idempotent, never throws. */
  ensure(): void {
    if (this.started) return;
    this.started = true;
    if (!(this.opts.enabled ?? process.env.FREELOADER_DIAGNOSTICS !== 'off')) return;
    void this.loadOrMeasure().catch((e: unknown) => {
      if (!this.abort.signal.aborted) {
        this.opts.log.warn({ err: String(e) }, 'join diagnostics failed');
      }
    });
  }

  /** Abandon a probe in progress (the agent is stopping); nothing is saved. */
  stop(): void {
    this.abort.abort();
    void this.dispatcher?.destroy().catch(() => undefined);
  }

  /** What to merge into a heartbeat. */
  heartbeatFields(): { diagnostics?: AgentDiagnostics } {
    return this.result ? { diagnostics: this.result } : {};
  }

  private async loadOrMeasure(): Promise<void> {
    const path = join(this.opts.dir, FILE);
    const saved = await readFile(path, 'utf8').then(
      (t) => JSON.parse(t) as AgentDiagnostics,
      () => undefined,
    );
    // A part that failed last time (null) is measured again: one bad moment at join time must
    // not leave the manager without a rate forever.
    const complete = (d: AgentDiagnostics) =>
      d.diskReadRate !== null && d.downloadRate !== null && d.uploadRate !== null;
    if (saved?.measuredAt && complete(saved)) {
      this.result = saved;
      return;
    }
    const auth = this.opts.authorization();
    if (!auth) throw new Error('not enrolled yet');
    // Each part gets a few tries: on a busy machine (load average 10+ on 2 cores) the manager's
    // answer can miss a 1.5 s probe window entirely ("got no data").
    const attempt = async <T>(what: string, f: () => Promise<T>): Promise<T | null> => {
      for (let i = 1; ; i++) {
        this.abort.signal.throwIfAborted();
        try {
          return await f();
        } catch (e) {
          this.abort.signal.throwIfAborted();
          if (i >= PROBE_ATTEMPTS) {
            this.opts.log.warn({ err: String(e) }, `join diagnostics: ${what} not measured`);
            return null;
          }
          await sleep(PROBE_RETRY_MS * i, undefined, { signal: this.abort.signal });
        }
      }
    };
    const dispatcher = managerDispatcher(this.opts.managerCa?.(), { connections: 1 });
    this.dispatcher = dispatcher;
    try {
      const disk = await attempt('disk read rate', () => measureDiskRead(this.opts.dir));
      const down = await attempt('download rate', () =>
        measureDownload(
          this.opts.managerUrl,
          auth,
          NETWORK_PROBE_MS,
          dispatcher,
          this.abort.signal,
        ),
      );
      const up = await attempt('upload rate', () =>
        measureUpload(this.opts.managerUrl, auth, NETWORK_PROBE_MS, dispatcher),
      );
      this.result = {
        diskReadRate: disk ? Math.round(disk.rate) : null,
        ...(disk ? { diskCached: disk.cached } : {}),
        downloadRate: down === null ? null : Math.round(down),
        uploadRate: up === null ? null : Math.round(up),
        measuredAt: new Date().toISOString(),
      };
    } finally {
      await dispatcher.destroy();
    }
    this.abort.signal.throwIfAborted();
    await writeFile(path, JSON.stringify(this.result, null, 2) + '\n', { mode: 0o600 });
    this.opts.log.info({ diagnostics: this.result }, 'join diagnostics measured');
  }
}

/** The `Authorization` header of an enrolled agent (undefined before enrollment). */
export function agentAuthorization(
  identity: { agentId: string; credential: string } | null,
): string | undefined {
  return identity ? `Bearer agent.${identity.agentId}.${identity.credential}` : undefined;
}
