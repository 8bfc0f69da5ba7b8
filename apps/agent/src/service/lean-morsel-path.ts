import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { morselResponseHead, parseMorselGet } from '@freeloader/protocol/wire';
import { sendFileSpan, type FileSpan } from '../native/send-file.js';

/** Largest request head the lean path reads (bytes); a longer one goes to node:http (431). */
const MAX_HEAD_BYTES = 16 * 1024;
/**
 * Unanswered request bytes a connection holds before it stops reading (bytes): a client pipelines
 * a few heads of ~200 bytes each, so this only bites a client that floods.
 */
const MAX_PENDING_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * A morsel the lean path may send as is: its bytes in memory (`data`) or in a file (`span`, sent
 * with sendfile: see native/send-file.ts); `release` once the socket is done with them.
 */
export type LeanMorsel = { sha256: string; release: () => void } & (
  { data: Buffer; span?: undefined } | { span: FileSpan; data?: undefined }
);

/**
 * Answers a morsel GET (`MORSEL_ROUTE`) on the lean path, or resolves undefined to have the
 * full service answer it instead (errors, paced bodies: anything but a plain 200). Never rejects.
 */
export type LeanMorselHandler = (
  dataset: string,
  index: number,
  authorization: string | undefined,
) => Promise<LeanMorsel | undefined>;

export interface LeanMorselPath {
  /** Stop accepting lean work: idle connections close now, busy ones after their response. */
  close(): void;
}

/**
 * Put a lean reader in front of `server`'s connections. A client reading a dataset sends
 * nothing but keep-alive morsel GETs, one head and one 1 MiB body each; node:http and Fastify
 * spent most of a donor's JavaScript per GiB on the objects, hooks and header handling around
 * them. Here each such request is one parse of its head (`parseMorselGet`, in the wire), `handler`, and one writev of the head and
 * body. The first request that is anything else (other routes and methods, bodies, HEAD,
 * `?cap=`, errors, paced bodies) hands the connection, with the bytes it has not answered, to
 * node:http for good, so every other behaviour is the full service's.
 *
 * @example
 *   const lean = installLeanMorselPath(app.server, serveMorsel, 65_000);
 *   app.addHook('preClose', () => lean.close());
 */
export function installLeanMorselPath(
  server: Server,
  handler: LeanMorselHandler,
  idleMs: number,
): LeanMorselPath {
  // node:http's own connection listener: what a connection handed off gets.
  const httpListeners = server.listeners('connection') as Array<(s: Socket) => void>;
  server.removeAllListeners('connection');
  const open = new Set<LeanConnection>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    if (closing) return socket.destroy();
    const conn = new LeanConnection(socket, handler, idleMs, (rest) => {
      open.delete(conn);
      if (!socket.readableEnded) {
        if (rest) socket.unshift(rest);
        for (const l of httpListeners) l.call(server, socket);
        return;
      }
      // The client half-closed already: node:http gets what is left, then the end it missed.
      for (const l of httpListeners) l.call(server, socket);
      if (rest) socket.emit('data', rest);
      socket.emit('end');
    });
    open.add(conn);
    socket.once('close', () => open.delete(conn));
  });
  return {
    close() {
      closing = true;
      for (const c of open) c.closeWhenIdle();
    },
  };
}

class LeanConnection {
  /** Bytes received and not yet answered. */
  private pending: Buffer | null = null;
  /** Reading stopped for MAX_PENDING_BYTES; resumed once answers have used them up. */
  private flooded = false;
  /** The last in-memory body's write, until the socket has taken it all (sendfile waits on it). */
  private written: Promise<void> | null = null;
  private busy = false;
  private closing = false;
  /** The client half-closed: answer what came, then close our side (as node:http does). */
  private ended = false;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onIdle = () => this.socket.destroy();
  private readonly onEnd = () => {
    this.ended = true;
    if (!this.busy) this.finish();
  };

  constructor(
    private readonly socket: Socket,
    private readonly handler: LeanMorselHandler,
    idleMs: number,
    private readonly handOff: (rest: Buffer | null) => void,
  ) {
    socket.setNoDelay(true);
    socket.setTimeout(idleMs, this.onIdle);
    // A reset client: nothing to answer; 'close' follows.
    socket.on('error', () => {});
    socket.on('data', this.onData);
    socket.once('end', this.onEnd);
  }

  closeWhenIdle(): void {
    this.closing = true;
    if (!this.busy) this.socket.destroy();
  }

  private received(chunk: Buffer): void {
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    if (this.pending.length > MAX_PENDING_BYTES && !this.socket.isPaused()) {
      this.socket.pause();
      this.flooded = true;
    }
    if (!this.busy) {
      // Nothing here may take the daemon down: a connection that breaks our assumptions is
      // dropped (its client retries elsewhere).
      this.answer().catch(() => this.socket.destroy());
    }
  }

  /** Answer complete requests in order until the bytes run out or one is not ours. */
  private async answer(): Promise<void> {
    this.busy = true;
    while (this.pending && !this.socket.destroyed) {
      const end = this.pending.indexOf(HEAD_END);
      if (end < 0) {
        if (this.pending.length > MAX_HEAD_BYTES) return this.giveUp();
        break;
      }
      const req = parseMorselGet(this.pending.toString('latin1', 0, end));
      const morsel = req && (await this.handler(req.dataset, req.index, req.authorization));
      if (this.socket.destroyed) {
        morsel?.release();
        return;
      }
      if (!morsel) return this.giveUp();
      const rest = end + HEAD_END.length;
      this.pending = rest < this.pending.length ? this.pending.subarray(rest) : null;
      if (this.flooded && (this.pending?.length ?? 0) <= MAX_PENDING_BYTES) {
        this.flooded = false;
        this.socket.resume();
      }
      if (morsel.span) await this.sendSpan(morsel, morsel.span);
      else this.send(morsel, morsel.data);
      if (this.socket.writableNeedDrain) await this.drained();
    }
    this.busy = false;
    this.finish();
  }

  /** After the last answer: close if the service is closing or the client has said all. */
  private finish(): void {
    if (this.closing) this.socket.destroy();
    else if (this.ended && !this.socket.destroyed) this.socket.end();
  }

  private send({ sha256, release }: LeanMorsel, data: Buffer): void {
    const head = morselResponseHead(data.length, sha256, httpDate());
    // One writev: head and body leave in the same segment train.
    this.socket.cork();
    this.socket.write(head, 'latin1');
    this.written = new Promise((resolve) =>
      this.socket.write(data, () => {
        release();
        resolve();
      }),
    );
    this.socket.uncork();
  }

  /** Head and body from the file, past Node's stream (which must have nothing queued). */
  private async sendSpan({ sha256, release }: LeanMorsel, span: FileSpan): Promise<void> {
    try {
      if (this.written) await this.written;
      this.written = null;
      const head = Buffer.from(morselResponseHead(span.length, sha256, httpDate()), 'latin1');
      await sendFileSpan(this.socket, head, span);
    } catch {
      // Half an answer cannot be taken back: the client sees the connection end and retries.
      this.socket.destroy();
    } finally {
      release();
    }
  }

  /** Until the socket takes more, read no further requests (a slow client bounds our memory). */
  private drained(): Promise<void> {
    this.socket.pause();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        this.socket.resume();
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private giveUp(): void {
    this.busy = false;
    // From here on the socket is node:http's: none of our listeners may act on it.
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.setTimeout(0);
    this.socket.off('timeout', this.onIdle);
    const rest = this.pending;
    this.pending = null;
    if (this.closing) return void this.socket.destroy();
    this.handOff(rest);
    // Stopped reading for a flood of requests: node:http reads the rest (its own listeners are
    // on now, so nothing flows past them).
    if (this.flooded) {
      this.flooded = false;
      this.socket.resume();
    }
  }
}

let dateSecond = 0;
let dateText = '';
/** The Date header's value, formatted once a second (as node:http does). */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}
