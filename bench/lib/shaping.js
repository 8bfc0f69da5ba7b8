import { run } from './sh.js';

/**
 * How one host's access link is shaped. Rates are symmetric: the host's upload is shaped on its
 * own veth end, its download on the switch's end, so both directions are limited.
 *
 * @typedef {object} LinkSpec
 * @property {number | null} rateMbit line rate in Mbit/s (10^6 bit/s); null leaves the link unshaped
 * @property {number} [delayMs] extra round-trip time, split evenly over both directions (netem)
 * @property {number} [burstBytes] tbf bucket size; default {@link defaultBurstBytes}
 * @property {number} [queueMs] tbf queue bound expressed as time at line rate; default 20 ms
 */

/** tbf needs this many bytes at least: one GSO/TSO super-packet from a veth (64 KiB) plus headers. */
export const MIN_BURST_BYTES = 64 * 1024 + 1514;

/** Bucket refill the burst must cover, in ms of line rate (see bench/README.md "Shaping"). */
export const BURST_MS = 1;

/**
 * Default tbf bucket: the larger of one 64 KiB GSO packet and {@link BURST_MS} of line rate.
 * Smaller buckets cap goodput at high rates because the kernel refills the bucket only on timer
 * ticks/dequeues; larger ones let bursts exceed the rate for longer (measured in link-goodput).
 *
 * @param {number} rateMbit
 * @returns {number}
 * @example defaultBurstBytes(1000) // 125000: 1 ms of 1 Gbit/s
 */
export function defaultBurstBytes(rateMbit) {
  return Math.max(MIN_BURST_BYTES, Math.ceil((rateMbit * 1e6 * BURST_MS) / 1000 / 8));
}

/**
 * tbf queue limit in bytes: `queueMs` of line rate plus one burst, at least 100 full frames, so
 * that W senders converging on one port do not drop on every synchronised burst.
 *
 * @param {number} rateMbit
 * @param {number} burstBytes
 * @param {number} queueMs
 * @returns {number}
 */
export function queueLimitBytes(rateMbit, burstBytes, queueMs) {
  return Math.max(100 * 1514, Math.ceil((rateMbit * 1e6 * queueMs) / 1000 / 8) + burstBytes);
}

/**
 * The `tc` argument vectors that shape egress of `dev` in namespace `ns` to `spec`, for one
 * direction (`delayMs` is halved: the other end adds the other half). Pure, so it is unit-tested.
 *
 * @param {string} ns
 * @param {string} dev
 * @param {LinkSpec} spec
 * @param {boolean} withNetem whether the kernel has sch_netem (checked by {@link netemAvailable})
 * @returns {string[][]}
 */
export function shapeCommands(ns, dev, spec, withNetem) {
  const base = ['-n', ns, 'qdisc'];
  const cmds = [[...base, 'del', 'dev', dev, 'root']];
  if (spec.rateMbit === null) return cmds;
  const burst = spec.burstBytes ?? defaultBurstBytes(spec.rateMbit);
  const limit = queueLimitBytes(spec.rateMbit, burst, spec.queueMs ?? 20);
  cmds.push([
    ...base,
    'add',
    'dev',
    dev,
    'root',
    'handle',
    '1:',
    'tbf',
    'rate',
    `${spec.rateMbit}mbit`,
    'burst',
    String(burst),
    'limit',
    String(limit),
  ]);
  const oneWayMs = (spec.delayMs ?? 0) / 2;
  if (oneWayMs > 0 && withNetem) {
    // netem under tbf: the rate limiter sees no delay, the delay line holds a BDP of packets.
    const bdpPackets = Math.ceil((spec.rateMbit * 1e6 * oneWayMs) / 1000 / 8 / 1514);
    const args = ['delay', `${oneWayMs}ms`, 'limit', String(Math.max(1000, 4 * bdpPackets))];
    cmds.push([...base, 'add', 'dev', dev, 'parent', '1:1', 'handle', '10:', 'netem', ...args]);
  }
  return cmds;
}

/**
 * Apply {@link shapeCommands}; deleting a root qdisc that is not there is not an error.
 *
 * @param {string} ns
 * @param {string} dev
 * @param {LinkSpec} spec
 * @param {boolean} withNetem
 */
export async function shapeDevice(ns, dev, spec, withNetem) {
  const [del = [], ...adds] = shapeCommands(ns, dev, spec, withNetem);
  await run('tc', del, { allowFail: true });
  for (const args of adds) await run('tc', args);
}

/**
 * Whether this kernel can delay packets (sch_netem); probed on the loopback of a scratch
 * namespace we own. Some VM kernels ship without it: delays are then reported as not emulated.
 *
 * @param {string} ns a namespace of ours whose `lo` may be touched
 * @returns {Promise<boolean>}
 */
export async function netemAvailable(ns) {
  const probe = await run('tc', ['-n', ns, 'qdisc', 'add', 'dev', 'lo', 'root', 'netem'], {
    allowFail: true,
  });
  if (probe.code !== 0) return false;
  await run('tc', ['-n', ns, 'qdisc', 'del', 'dev', 'lo', 'root'], { allowFail: true });
  return true;
}

/**
 * The switch namespace's `sysctl` settings, as an argument vector for `ip`: a switch does not
 * pass frames through the host's netfilter. With the kernel's default (`bridge-nf-call-*tables`
 * = 1, per namespace) every bridged packet of the emulated LAN ran br_nf_pre_routing,
 * br_validate_ipv4 and the IP hooks in softirq, charged to whichever process was on the CPU
 * (often the client: `perf record -a` during a W=12 read). At W=12 that is every one of the
 * ≈ 550,000 skbs per GiB (1.6–2.1 KB each: see docs/performance.md, fifth session).
 * `BENCH_BRIDGE_NETFILTER=1` keeps the default, for A/B runs against the earlier testbed.
 *
 * @param {string} switchNs
 * @returns {string[]}
 */
export function switchSysctlCommand(switchNs) {
  return [
    'netns',
    'exec',
    switchNs,
    'sysctl',
    '-q',
    '-w',
    'net.bridge.bridge-nf-call-iptables=0',
    'net.bridge.bridge-nf-call-ip6tables=0',
    'net.bridge.bridge-nf-call-arptables=0',
  ];
}

/**
 * Whether bridged frames skip netfilter (unless BENCH_BRIDGE_NETFILTER=1).
 *
 * @param {Record<string, string | undefined>} [env]
 * @returns {boolean}
 */
export function bridgeSkipsNetfilter(env = process.env) {
  return env.BENCH_BRIDGE_NETFILTER !== '1';
}
