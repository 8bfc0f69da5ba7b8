import type { Socket } from 'node:net';
import { FreeLoaderError } from '@freeloader/protocol';
import {
  connectDirect,
  HeadReader,
  LEAN_READ_BUFFER_BYTES,
  MAX_RESPONSE_HEAD_BYTES,
  parseResponseHead,
} from '@freeloader/protocol/wire';
import { READ_LOW_WATER_BYTES, setLowWater } from '../native/socket-low-water.js';

export interface MorselResponse {
  status: number;
  /** Body bytes copied into the target (status 200), else 0. */
  length: number;
  /** Error body text for non-200 answers. */
  errorBody: string;
}

interface InFlight {
  target: Buffer;
  resolve: (r: MorselResponse) => void;
  reject: (e: Error) => void;
  head: HeadReader;
  status: number;
  contentLength: number;
  received: number;
  error: Buffer[];
  close: boolean;
}

/**
 * One keep-alive HTTP/1.1 connection to a donor's morsel service, tuned for the read path:
 * socket data lands in one static buffer and bodies are copied straight into the callers'
 * slots, so a 1 GB/s read allocates nothing per morsel. Requests are pipelined (answered in
 * order), so one connection keeps a donor's link busy without several TCP flows fighting over a
 * slow link's queue. The donor speaks plain HTTP, so curl still works against it.
 */
export class MorselConnection {
  private socket: Socket | null = null;
  /** Requests sent and not yet answered, oldest first (HTTP/1.1 answers in order). */
  private readonly queue: InFlight[] = [];
  /** Fires when the oldest request has seen no byte for `stallMs`. */
  private stallTimer: NodeJS.Timeout | null = null;
  /** The socket's receive low-water mark as last set (1: woken for every byte, the default). */
  private lowWater = 1;
  /** False once setting the mark failed: this process or socket cannot, so stop asking. */
  private tunesLowWater = true;
  closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly hostHeader: string,
    private readonly stallMs: number,
    /** Told before each TCP connection attempt (the reader counts them per donor). */
    private readonly onConnect?: () => void,
  ) {}

  /** Requests on the wire, answered or not yet. */
  get inFlight(): number {
    return this.queue.length;
  }

  /** GET `path`; a 200 body is copied into `target` (which must be large enough). */
  get(path: string, authorization: string, target: Buffer): Promise<MorselResponse> {
    const socket = this.ensureSocket();
    return new Promise((resolve, reject) => {
      this.queue.push({
        target,
        resolve,
        reject,
        head: new HeadReader(MAX_RESPONSE_HEAD_BYTES),
        status: 0,
        contentLength: -1,
        received: 0,
        error: [],
        close: false,
      });
      if (this.queue.length === 1) this.armStallTimer();
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nAuthorization: ${authorization}\r\n` +
          'Accept: application/octet-stream\r\n\r\n',
      );
    });
  }

  /** Close the connection; every request on it fails with `error` (a late answer is never read). */
  destroy(error?: Error): void {
    this.closed = true;
    this.fail(error ?? new FreeLoaderError('UNAVAILABLE', 'connection closed by the client'));
  }

  private armStallTimer(): void {
    if (this.stallTimer) this.stallTimer.refresh();
    else {
      this.stallTimer = setTimeout(
        () => this.fail(new FreeLoaderError('TIMEOUT', `donor ${this.hostHeader} stalled`)),
        this.stallMs,
      );
    }
  }

  private ensureSocket(): Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    // Handlers act only while their socket is the current one: a socket replaced after a
    // failure must not fail the requests its successor carries.
    // While a 200 body is arriving, reads land straight in the caller's slot (no copy).
    this.onConnect?.();
    const socket = connectDirect({
      host: this.host,
      port: this.port,
      bufferBytes: LEAN_READ_BUFFER_BYTES,
      bodyTarget: () => this.bodyTarget(),
      onBody: (n) => this.onBody(n),
      onBytes: (chunk) => this.onBytes(chunk),
      isCurrent: (s) => this.socket === s,
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (this.socket !== socket) return;
      this.fail(
        new FreeLoaderError(
          'UNAVAILABLE',
          `donor ${this.hostHeader} unreachable (${e.code ?? e.message})`,
          // What isUnreachable needs to tell a dead donor from a reset keep-alive connection.
          { errno: e.code, bytesRead: socket.bytesRead },
        ),
      );
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} closed the connection`),
      );
    });
    this.socket = socket;
    this.lowWater = 1;
    return socket;
  }

  /**
   * Wake for a body's bytes in steps of {@link READ_LOW_WATER_BYTES} (never more than the body
   * has left, so its last bytes are read as they come), and for every byte of a head.
   */
  private tuneLowWater(): void {
    if (!this.tunesLowWater || !this.socket) return;
    const req = this.queue[0];
    const left = req && req.status === 200 ? req.contentLength - req.received : 0;
    const want = Math.max(1, Math.min(READ_LOW_WATER_BYTES, left));
    if (want === this.lowWater) return;
    if (setLowWater(this.socket, want)) this.lowWater = want;
    else this.tunesLowWater = false;
  }

  /** Where the next socket read lands: the rest of the current 200 body, else null. */
  private bodyTarget(): Uint8Array | null {
    const req = this.queue[0];
    if (req && req.status === 200 && req.received < req.contentLength) {
      return req.target.subarray(req.received, req.contentLength);
    }
    return null;
  }

  /** Bytes already in place in the oldest request's slot; the read could not run past it. */
  private onBody(n: number): boolean {
    const req = this.queue[0]!;
    this.armStallTimer();
    req.received += n;
    if (req.received === req.contentLength) this.complete(req);
    this.tuneLowWater();
    return true;
  }

  /** Bytes in the reused buffer: everything must be consumed before returning. */
  private onBytes(input: Buffer): boolean {
    let chunk = input;
    // One read may finish one response and start the next: consume all of it.
    while (chunk.length > 0) {
      const req = this.queue[0];
      if (!req) {
        this.fail(
          new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent an unasked response`),
        );
        return false;
      }
      this.armStallTimer();
      const rest = this.consume(req, chunk);
      if (rest === null) return false;
      chunk = rest;
    }
    this.tuneLowWater();
    return true;
  }

  /** Feed bytes to the oldest request; returns what belongs to the next one, null on failure. */
  private consume(req: InFlight, input: Buffer): Buffer | null {
    let chunk = input;
    if (req.status === 0) {
      const got = req.head.feed(chunk);
      if (got === undefined) return Buffer.alloc(0);
      if (got === 'oversized') {
        this.fail(
          new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent oversized headers`),
        );
        return null;
      }
      if (!this.parseHead(req, got.text)) return null;
      chunk = got.rest;
    }
    const take = Math.min(chunk.length, req.contentLength - req.received);
    if (req.status === 200) chunk.copy(req.target, req.received, 0, take);
    else if (req.received < MAX_RESPONSE_HEAD_BYTES)
      req.error.push(Buffer.from(chunk.subarray(0, take)));
    req.received += take;
    if (req.received < req.contentLength) return chunk.subarray(take);
    this.complete(req);
    return req.close ? null : chunk.subarray(take);
  }

  private complete(req: InFlight): void {
    this.queue.shift();
    if (this.queue.length === 0 && this.stallTimer) {
      clearTimeout(this.stallTimer);
      this.stallTimer = null;
    } else {
      // The next request's clock starts now that it is at the head of the line.
      this.armStallTimer();
    }
    req.resolve({
      status: req.status,
      length: req.status === 200 ? req.received : 0,
      errorBody: req.status === 200 ? '' : Buffer.concat(req.error).toString('utf8'),
    });
    if (req.close) {
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} closed the connection`),
      );
    }
  }

  private parseHead(req: InFlight, text: string): boolean {
    const head = parseResponseHead(text);
    if (!head) {
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent a malformed response`),
      );
      return false;
    }
    req.status = head.status;
    req.close = head.close;
    if (head.framed) {
      const how = String(head.headers['transfer-encoding']);
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent ${how} encoding`),
      );
      return false;
    }
    req.contentLength = head.contentLength ?? 0;
    if (req.status === 200 && req.contentLength > req.target.length) {
      this.fail(
        new FreeLoaderError(
          'HASH_MISMATCH',
          `donor sent ${req.contentLength} bytes, more than a morsel`,
        ),
      );
      return false;
    }
    return true;
  }

  /** Drop the connection and every request on it (their callers retry elsewhere). */
  private fail(e: Error): void {
    const pending = this.queue.splice(0);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.destroy();
    for (const req of pending) req.reject(e);
  }
}
