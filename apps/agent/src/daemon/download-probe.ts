import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

/** Socket read buffer of the probe, reused for every read (bytes). */
const READ_BUFFER_BYTES = 64 * 1024;
/** Largest response head we accept (bytes). */
const MAX_HEAD = 16 * 1024;

/** What a timed download saw: body bytes after the first one, and the seconds they took. */
export interface DownloadSample {
  bytes: number;
  seconds: number;
}

/**
 * GET an `http:` URL for at most `ms` and count its body, reading every socket chunk into one
 * reused buffer. The join probe pulls up to 64 MiB from the manager once; through fetch that
 * left ~64 MB of socket chunks for the collector and a freshly enrolled agent resident ~60 MB
 * above its steady size. Timing starts at the first body byte (connection setup is not link
 * rate); the first read's bytes are not counted. Rejects on a non-200 answer or a dead socket.
 *
 * @example const { bytes, seconds } = await timedDownload(new URL(u), { authorization }, 1500);
 */
export function timedDownload(
  url: URL,
  headers: Record<string, string>,
  ms: number,
  signal?: AbortSignal,
): Promise<DownloadSample> {
  if (url.protocol !== 'http:') return Promise.reject(new Error('timedDownload: http only'));
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  return new Promise((resolve, reject) => {
    let head = '';
    let inBody = false;
    let first = 0;
    let bytes = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) reject(err);
      else if (first === 0 || bytes === 0) reject(new Error('download probe got no data'));
      else resolve({ bytes, seconds: (performance.now() - first) / 1000 });
    };
    const onAbort = () => finish(signal?.reason as Error);
    const timer = setTimeout(() => finish(), ms);
    const socket = connect({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 80),
      onread: {
        buffer,
        callback: (n: number) => {
          if (inBody) {
            if (first === 0) first = performance.now();
            else bytes += n;
            return true;
          }
          head += buffer.toString('latin1', 0, n);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) {
            if (head.length > MAX_HEAD) finish(new Error('download probe: oversized headers'));
            return true;
          }
          const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
          if (status !== '200') {
            finish(new Error(`download probe: HTTP ${status ?? 'malformed answer'}`));
            return false;
          }
          inBody = true;
          if (head.length > end + 4) first = performance.now();
          return true;
        },
      },
    });
    socket.on('error', (e) => finish(e));
    // The server ended the body before time was up: what arrived is the sample.
    socket.on('close', () => finish());
    signal?.addEventListener('abort', onAbort, { once: true });
    let request = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
    for (const [name, value] of Object.entries(headers)) request += `${name}: ${value}\r\n`;
    socket.write(`${request}Connection: close\r\n\r\n`);
  });
}
