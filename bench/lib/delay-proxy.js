#!/usr/bin/env node
// A delaying HTTP proxy: waits `delayMs` before forwarding each request (keep-alive both ways).
// It stands in for a source's per-request startup cost (tape mount, GridFTP/HSI session
// commands) on kernels without netem; the per-connection rate comes from nginx's limit_rate.
//   node bench/lib/delay-proxy.js <listen-ip> <listen-port> <target-ip> <target-port> <delay-ms>
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { spawnLogged, waitForPort } from './processes.js';

/**
 * Start the proxy in `host`'s namespace in front of `target` (an http://ip:port base).
 *
 * @param {import('./processes.js').Host} host
 * @param {{ target: string, port: number, delayMs: number, workDir: string }} opts
 * @returns {Promise<{ base: string, url: (name: string) => string, stop: () => void }>}
 * @example const src = await startDelayProxy(tb.source, { target: nginx.base, port: 8081, delayMs: 500, workDir });
 */
export async function startDelayProxy(host, opts) {
  const t = new URL(opts.target);
  const logPath = join(opts.workDir, `delay-proxy-${opts.port}.log`);
  const proc = spawnLogged(
    host,
    'node',
    [
      new URL(import.meta.url).pathname,
      host.ip,
      String(opts.port),
      t.hostname,
      t.port,
      String(opts.delayMs),
    ],
    { logPath },
  );
  await waitForPort(host, host.ip, opts.port, { what: 'delay proxy', logPath });
  const base = `http://${host.ip}:${opts.port}`;
  return { base, url: (name) => `${base}/${name}`, stop: () => void proc.child.kill('SIGTERM') };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [ip, port, targetIp, targetPort, delay] = process.argv.slice(2);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });
  http
    .createServer((req, res) => {
      setTimeout(() => {
        const up = http.request(
          {
            host: targetIp,
            port: Number(targetPort),
            method: req.method,
            path: req.url,
            headers: req.headers,
            agent,
          },
          (r) => {
            res.writeHead(r.statusCode ?? 502, r.headers);
            r.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        req.pipe(up);
      }, Number(delay));
    })
    .listen(Number(port), ip);
}
