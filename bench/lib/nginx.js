import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { descendants } from './process-tree.js';
import { spawnLogged, stop, waitForPort } from './processes.js';

/** Longest wait for nginx to accept connections (milliseconds). */
const NGINX_START_TIMEOUT_MS = 60_000;

/**
 * @typedef {object} NginxServer
 * @property {string} base URL prefix, e.g. http://10.77.1.1:8080
 * @property {(name: string) => string} url URL of a file under the served root
 * @property {string} logPath
 * @property {() => number[]} pids the master's and its workers' process ids (for their CPU)
 * @property {() => Promise<void>} stop
 */

/**
 * nginx.conf for a static file server: one worker (the machine has 2 cores), sendfile,
 * keep-alive for range-request clients (aria2c), no access log, everything in `dir`.
 *
 * @param {{ dir: string, root: string, ip: string, port: number, limitRate?: string }} o
 * @returns {string}
 */
export function nginxConf(o) {
  return `worker_processes 1;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65s;
  keepalive_requests 100000;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;
  server {
    listen ${o.ip}:${o.port} reuseport;
    root ${o.root};
    location / { limit_rate ${o.limitRate ?? '0'}; }
  }
}
`;
}

/**
 * Start nginx in `host`'s namespace serving the files of `root` (the directory must be readable
 * by nginx's `nobody` workers) and wait until it listens. Per-connection `limitRate` uses
 * nginx's syntax (`1m` = 1 MiB/s); omitted = unlimited.
 *
 * @param {import('./processes.js').Host} host
 * @param {{ root: string, workDir: string, port?: number, limitRate?: string }} opts
 * @returns {Promise<NginxServer>}
 * @example
 *   const web = await startNginx(tb.source, { root: ds.dir, workDir: `${tmp}/nginx-src` });
 *   // curl web.url(ds.name) from the client ...
 *   await web.stop();
 */
export async function startNginx(host, opts) {
  const port = opts.port ?? 8080;
  const dir = opts.workDir;
  await mkdir(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  await writeFile(
    conf,
    nginxConf({ dir, root: opts.root, ip: host.ip, port, limitRate: opts.limitRate }),
  );
  const logPath = join(dir, 'stderr.log');
  const proc = spawnLogged(host, 'nginx', ['-c', conf, '-p', dir, '-g', 'daemon off;'], {
    logPath,
  });
  await waitForPort(host, host.ip, port, {
    what: `nginx on ${host.name}`,
    logPath,
    // 10 s was too short on a shared machine: at load 29 nginx took longer to listen.
    timeoutMs: NGINX_START_TIMEOUT_MS,
  });
  const base = `http://${host.ip}:${port}`;
  const master = proc.child.pid;
  const pids = () => (master === undefined ? [] : [master, ...descendants(master)]);
  return { base, url: (name) => `${base}/${name}`, logPath, pids, stop: () => stop(proc) };
}
