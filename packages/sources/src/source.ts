import type { Readable } from 'node:stream';
import type { SourcePolicy } from './source-policy.js';

/**
 * What a probe learns about a source object. It is also the expectation every later read is
 * checked against: a read that finds a different size or validator throws SOURCE_CHANGED, so an
 * import never stitches morsels from two versions of a dataset.
 */
export interface SourceInfo {
  /** The URI as given (may hold credentials: show it only through `redactUri`). */
  uri: string;
  /** Object size in bytes. */
  size: number;
  /** Entity tag as the server sent it, quotes and `W/` included; null when none. */
  etag: string | null;
  /** Last-Modified as an HTTP date; null when unknown. */
  lastModified: string | null;
  /** True when ranged reads work; false means read the object whole with `readAll`. */
  acceptsRanges: boolean;
}

/**
 * A dataset source FreeLoader imports from. One instance per URI; it may hold pooled
 * connections, so call `close()` when done. Errors are FreeLoaderErrors:
 * SOURCE_UNREACHABLE, SOURCE_ERROR, SOURCE_CHANGED, RANGE_NOT_SUPPORTED, TIMEOUT, and
 * SOURCE_FORBIDDEN when the source policy refuses the address connected to.
 * An aborted signal rejects with the signal's reason, untranslated.
 */
export interface Source {
  readonly uri: string;
  /** Size, validators and range support of the object. */
  probe(signal?: AbortSignal): Promise<SourceInfo>;
  /**
   * Bytes [start, end) as one buffer — exactly end − start bytes — for ranges up to a few MiB.
   * With `into` (at least end − start long) the bytes land there and the result is a view of
   * it, so a caller reading morsel after morsel allocates nothing. Throws SOURCE_CHANGED when
   * the object no longer matches `expect`, RANGE_NOT_SUPPORTED when `expect.acceptsRanges` is
   * false.
   */
  readRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
    into?: Buffer,
  ): Promise<Buffer>;
  /**
   * Bytes [start, end) as a stream for large ranges (patching reads 64–256 MiB at a time).
   * Resolves once the source accepted the request; the stream errors (SOURCE_ERROR) if it
   * would end short or long. Consume or destroy it.
   */
  streamRange(
    start: number,
    end: number,
    expect: SourceInfo,
    signal?: AbortSignal,
  ): Promise<Readable>;
  /** The whole object as a stream of exactly `expect.size` bytes (servers without ranges). */
  readAll(expect: SourceInfo, signal?: AbortSignal): Promise<Readable>;
  /** Release pooled connections; in-flight reads fail. */
  close(): Promise<void>;
}

/** Options every source implementation accepts (each ignores what does not apply). */
export interface SourceOptions {
  /** Parallel connections per origin (default 4). */
  connections?: number;
  /** Time allowed to establish a connection, ms (default 10 000). */
  connectTimeoutMs?: number;
  /**
   * Time allowed until response headers arrive, ms (default 30 000). This and the body idle
   * timeout run on undici's coarse timers: they fire up to ~1 s late.
   */
  headersTimeoutMs?: number;
  /** Longest silence while a body streams, ms (default 30 000). */
  bodyIdleTimeoutMs?: number;
  /** Redirects followed before giving up (default 5). */
  maxRedirects?: number;
  /** Extra trusted CA certificates (PEM) for https, e.g. a site's private CA. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Accept file:// URIs (agents reading local disks; never for URIs from remote users). */
  allowFile?: boolean;
  /**
   * Which addresses network sources may connect to (default: {@link SourcePolicy.fromEnv}, i.e.
   * no loopback, private, link-local … addresses unless `FREELOADER_SOURCE_ALLOW` names them).
   */
  policy?: SourcePolicy;
}
