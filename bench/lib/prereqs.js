import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { haveCommand, run } from './sh.js';

/** Command the benchmarks run → Debian package that provides it. */
export const REQUIRED = Object.freeze({
  ip: 'iproute2',
  tc: 'iproute2',
  nginx: 'nginx',
  aria2c: 'aria2',
  curl: 'curl',
  bash: 'bash',
});

/**
 * Debian packages to install so every command in `required` exists.
 *
 * @param {Record<string, string>} required command → package
 * @param {(cmd: string) => boolean} [have]
 * @returns {string[]} sorted, without duplicates
 * @example missingPackages({ curl: 'curl' }, () => false) // ['curl']
 */
export function missingPackages(required, have = haveCommand) {
  const pkgs = Object.entries(required)
    .filter(([cmd]) => !have(cmd))
    .map(([, pkg]) => pkg);
  return [...new Set(pkgs)].sort();
}

const POLICY = '/usr/sbin/policy-rc.d';

/**
 * Fail unless root (namespaces and tc need CAP_NET_ADMIN), then apt-get install whatever is
 * missing. While installing, a policy-rc.d (if none exists) stops Debian from starting the
 * packaged nginx on the host's port 80: the benchmarks start their own nginx in namespaces.
 *
 * @param {(msg: string) => void} log
 */
export async function ensurePrerequisites(log) {
  if (process.getuid?.() !== 0) {
    throw new Error('benchmarks need root (network namespaces, tc): run with sudo');
  }
  const pkgs = missingPackages(REQUIRED);
  if (pkgs.length === 0) return;
  log(`installing ${pkgs.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const ownPolicy = !existsSync(POLICY);
  if (ownPolicy) writeFileSync(POLICY, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    await run('apt-get', ['update', '-qq'], { env });
    await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env });
  } finally {
    if (ownPolicy) rmSync(POLICY, { force: true });
  }
  const still = missingPackages(REQUIRED);
  if (still.length) throw new Error(`still missing after apt-get: ${still.join(' ')}`);
}
