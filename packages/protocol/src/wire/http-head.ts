import type { IncomingHttpHeaders } from 'node:http';

const CRLFCRLF = Buffer.from('\r\n\r\n');

/**
 * Socket read buffer of the lean HTTP clients, reused for every read of a connection (bytes).
 * Heads land here, and body bytes read with a head are copied out: at 256 KiB that was up to a
 * quarter of every morsel on loopback; 16 KiB cost ~2 % on the 12-donor LAN (one more read per
 * morsel); 64 KiB matches 256 KiB there.
 */
export const LEAN_READ_BUFFER_BYTES = 64 * 1024;
/** Largest response head, and largest error body kept, that the lean clients accept (bytes). */
export const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;

/** An HTTP/1.x response head as the lean clients need it. */
export interface ResponseHead {
  status: number;
  /** Lower-cased names; repeated headers become arrays (as Node's IncomingHttpHeaders). */
  headers: IncomingHttpHeaders;
  /** Content-Length, or null when absent or malformed. */
  contentLength: number | null;
  /** A Transfer-Encoding was sent (the body is framed, not sized). */
  framed: boolean;
  /** The server will close the connection after this answer (HTTP/1.0 or Connection: close). */
  close: boolean;
}

/**
 * Parse a response head (status line and header lines, without the blank line); null when the
 * status line is not HTTP/1.x.
 *
 * @example parseResponseHead('HTTP/1.1 206 Partial Content\r\nContent-Length: 5')
 *   // → { status: 206, contentLength: 5, framed: false, close: false, headers: {…} }
 */
export function parseResponseHead(text: string): ResponseHead | null {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) return null;
  const headers: Record<string, string | string[]> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    const prev = headers[name];
    headers[name] = prev === undefined ? value : [prev, value].flat();
  }
  const length = headers['content-length'];
  const connection = String(headers.connection ?? '').toLowerCase();
  return {
    status: Number(m[2]),
    headers: headers,
    contentLength: typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : null,
    framed: headers['transfer-encoding'] !== undefined,
    close: connection.includes('close') || (m[1] === '0' && !connection.includes('keep-alive')),
  };
}

/**
 * Collects a response head from socket reads that may split it anywhere (even inside its blank
 * line). Reads usually land in a reused buffer, so partial heads are copied; a head that comes
 * whole in one read is never copied.
 *
 * @example
 *   const r = new HeadReader(64 * 1024);
 *   const got = r.feed(chunk); // undefined: need more; else { text, rest } (rest = body bytes)
 */
export class HeadReader {
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  /** The last three bytes held (a blank line may begin in them). */
  private tail = Buffer.alloc(0);

  constructor(private readonly max: number) {}

  /** Bytes held of an unfinished head (0 before the first byte). */
  get pending(): number {
    return this.bytes;
  }

  /**
   * Feed one read. Returns the head text (without the blank line) and the bytes after it once
   * the head is complete, undefined while it is not, 'oversized' past `max` bytes.
   */
  feed(chunk: Buffer): { text: string; rest: Buffer } | undefined | 'oversized' {
    const end = this.endIn(chunk);
    if (end < 0) {
      this.bytes += chunk.length;
      if (this.bytes > this.max) return 'oversized';
      this.parts.push(Buffer.from(chunk));
      this.tail = Buffer.from(Buffer.concat([this.tail, chunk.subarray(-3)]).subarray(-3));
      return undefined;
    }
    const head =
      this.parts.length > 0
        ? Buffer.concat([...this.parts, chunk.subarray(0, end)])
        : chunk.subarray(0, end);
    this.parts.length = 0;
    this.bytes = 0;
    this.tail = Buffer.alloc(0);
    return { text: head.toString('latin1', 0, head.length - 4), rest: chunk.subarray(end) };
  }

  /** Where the head ends in `chunk` (just past its blank line), or -1. */
  private endIn(chunk: Buffer): number {
    if (this.tail.length > 0) {
      const at = Buffer.concat([this.tail, chunk.subarray(0, 4)]).indexOf(CRLFCRLF);
      if (at >= 0) return at + 4 - this.tail.length;
    }
    const at = chunk.indexOf(CRLFCRLF);
    return at < 0 ? -1 : at + 4;
  }
}
