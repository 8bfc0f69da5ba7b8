import { connect, type Socket } from 'node:net';
import { FreeLoaderError } from '@freeloader/protocol';

/** Socket read buffer, reused for every read of a connection (bytes). */
const READ_BUFFER_BYTES = 256 * 1024;
/** Largest header block or error body we accept (bytes). */
const MAX_SMALL = 64 * 1024;
const CRLFCRLF = Buffer.from('\r\n\r\n');

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
  head: Buffer[];
  headBytes: number;
  status: number;
  contentLength: number;
  received: number;
  error: Buffer[];
  close: boolean;
  timer: NodeJS.Timeout;
}

/**
 * One keep-alive HTTP/1.1 connection to a donor's morsel service, tuned for the read path:
 * socket data lands in one static buffer and the body is copied straight into the caller's slot,
 * so a 1 GB/s read allocates nothing per morsel. One request at a time (no pipelining); the
 * donor speaks plain HTTP, so curl still works against it.
 */
export class MorselConnection {
  private socket: Socket | null = null;
  private current: InFlight | null = null;
  private readonly readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  closed = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly hostHeader: string,
    private readonly stallMs: number,
  ) {}

  get busy(): boolean {
    return this.current !== null;
  }

  /** GET `path`; a 200 body is copied into `target` (which must be large enough). */
  get(path: string, authorization: string, target: Buffer): Promise<MorselResponse> {
    if (this.current) return Promise.reject(new Error('connection busy'));
    const socket = this.ensureSocket();
    return new Promise((resolve, reject) => {
      const req: InFlight = {
        target,
        resolve,
        reject,
        head: [],
        headBytes: 0,
        status: 0,
        contentLength: -1,
        received: 0,
        error: [],
        close: false,
        timer: setTimeout(
          () => this.fail(new FreeLoaderError('TIMEOUT', `donor ${this.hostHeader} stalled`)),
          this.stallMs,
        ),
      };
      this.current = req;
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\nAuthorization: ${authorization}\r\n` +
          'Accept: application/octet-stream\r\n\r\n',
      );
    });
  }

  destroy(): void {
    this.closed = true;
    this.socket?.destroy();
    this.socket = null;
  }

  private ensureSocket(): Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    // Handlers act only while their socket is the current one: a socket replaced after a
    // failure must not fail the request its successor carries.
    const socket: Socket = connect({
      host: this.host,
      port: this.port,
      noDelay: true,
      onread: {
        buffer: this.readBuffer,
        callback: (n: number, buf: Uint8Array) =>
          this.socket === socket ? this.onData(n, buf) : false,
      },
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (this.socket !== socket) return;
      this.fail(
        new FreeLoaderError(
          'UNAVAILABLE',
          `donor ${this.hostHeader} unreachable (${e.code ?? e.message})`,
        ),
      );
    });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} closed the connection`),
      );
    });
    this.socket = socket;
    return socket;
  }

  /** Called with the static buffer: everything must be consumed before returning. */
  private onData(n: number, buf: Uint8Array): boolean {
    const req = this.current;
    if (!req) {
      // Bytes with no request outstanding: the stream is out of step; drop the connection.
      this.destroy();
      return false;
    }
    req.timer.refresh();
    let chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
    if (req.status === 0) {
      req.head.push(Buffer.from(chunk)); // headers are small: copy out of the static buffer
      req.headBytes += chunk.length;
      const head = req.head.length === 1 ? req.head[0]! : Buffer.concat(req.head);
      const end = head.indexOf(CRLFCRLF);
      if (end < 0) {
        if (req.headBytes > MAX_SMALL)
          this.fail(new FreeLoaderError('SOURCE_ERROR', 'donor sent oversized headers'));
        return true;
      }
      if (!this.parseHead(req, head.subarray(0, end).toString('latin1'))) return false;
      chunk = head.subarray(end + 4);
    }
    this.onBody(req, chunk);
    return true;
  }

  private parseHead(req: InFlight, head: string): boolean {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!m) {
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent a malformed response`),
      );
      return false;
    }
    req.status = Number(m[1]);
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      const name = line.slice(0, i).trim().toLowerCase();
      const value = line.slice(i + 1).trim();
      if (name === 'content-length') req.contentLength = Number(value);
      else if (name === 'connection' && value.toLowerCase() === 'close') req.close = true;
      else if (name === 'transfer-encoding') {
        this.fail(
          new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent ${value} encoding`),
        );
        return false;
      }
    }
    if (req.contentLength < 0) req.contentLength = 0;
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

  private onBody(req: InFlight, chunk: Buffer): void {
    const take = Math.min(chunk.length, req.contentLength - req.received);
    if (req.status === 200) chunk.copy(req.target, req.received, 0, take);
    else if (req.received < MAX_SMALL) req.error.push(Buffer.from(chunk.subarray(0, take)));
    req.received += take;
    if (take < chunk.length) {
      this.fail(
        new FreeLoaderError('UNAVAILABLE', `donor ${this.hostHeader} sent bytes past the response`),
      );
      return;
    }
    if (req.received < req.contentLength) return;
    clearTimeout(req.timer);
    this.current = null;
    if (req.close) this.destroy();
    req.resolve({
      status: req.status,
      length: req.status === 200 ? req.received : 0,
      errorBody: req.status === 200 ? '' : Buffer.concat(req.error).toString('utf8'),
    });
  }

  private fail(e: Error): void {
    const req = this.current;
    this.current = null;
    this.socket?.destroy();
    this.socket = null;
    if (req) {
      clearTimeout(req.timer);
      req.reject(e);
    }
  }
}
