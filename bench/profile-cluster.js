#!/usr/bin/env node
// A loopback cluster left running for profiling reads (perf, strace, --cpu-prof): 4 donors, a
// dataset imported encrypted and in clear, then it prints the agent pids and the get command and
// waits for SIGUSR2 (`kill -USR2 <pid>`), which stops the cluster and nginx: Ctrl-C's cleanup
// hooks would exit before the cluster's own shutdown. `node bench/profile-cluster.js [MiB]`
// after `npm run build`; BENCH_FREELOADER_ROOT profiles another build.
import { chmod, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDataset } from './lib/dataset.js';
import { freePortBlock } from './lib/free-ports.js';
import { FREELOADER_CLI } from './lib/freeloader.js';
import { startLoopbackCluster } from './lib/loopback-cluster.js';
import { startNginx } from './lib/nginx.js';
import { LOOPBACK } from './lib/processes.js';

const mib = Number(process.argv[2] ?? 256);
const work = await mkdtemp(join(tmpdir(), 'fl-profile-'));
await chmod(work, 0o755);
const home = join(work, 'home');
await mkdir(home, { recursive: true });
await chmod(home, 0o711);
const data = join(work, 'data');
await mkdir(data, { mode: 0o755 });
const ds = await makeDataset(data, mib * 2 ** 20);
const [webPort] = await freePortBlock([7690]);
const web = await startNginx(LOOPBACK, { root: data, workDir: join(work, 'nginx'), port: webPort });
const cluster = await startLoopbackCluster({
  home,
  agents: 4,
  quota: '2GiB',
  port: 7680,
  agentBasePort: 7681,
});
const stop = async () => {
  await cluster.stop();
  await web.stop();
  process.exit(0);
};
try {
  const help = await cluster.cli(['import', '--help'], 60_000);
  const clear = help.stdout.includes('--no-encrypt') ? ['--no-encrypt'] : [];
  const common = ['--width', '4', '--wait'];
  await cluster.cli(['import', web.url(ds.name), '--name', 'p/sealed.bin', ...common], 600_000);
  await cluster.cli(
    ['import', web.url(ds.name), '--name', 'p/clear.bin', ...clear, ...common],
    600_000,
  );
} catch (e) {
  console.error(e);
  await stop();
}
console.log(`agents ${cluster.agentPids().join(' ')}`);
console.log(
  `FREELOADER_HOME=${home} node ${FREELOADER_CLI} get p/sealed.bin -o /dev/null --stats ` +
    `--manager ${cluster.url}`,
);
console.log(`stop with: kill -USR2 ${process.pid}`);
process.on('SIGUSR2', stop);
setInterval(() => {}, 1 << 30);
