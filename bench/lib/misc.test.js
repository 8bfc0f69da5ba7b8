import { describe, expect, it } from 'vitest';
import { runIdOf } from '../cleanup.js';
import { parseArgs } from '../run.js';
import { parseGetSummary } from './freeloader.js';
import { inNamespace } from './netns.js';
import { nginxConf } from './nginx.js';
import { gnuplotScript } from './plot.js';
import { missingPackages } from './prereqs.js';
import { busySeconds, clientCpuTimes, cpuSeconds, cpuTimes } from './proc-stat.js';
import { median } from './stats.js';

describe('median', () => {
  it.each([
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[7], 7],
  ])('%j → %d', (xs, m) => expect(median(xs)).toBe(m));
  it('rejects an empty list', () => expect(() => median([])).toThrow());
});

describe('runIdOf', () => {
  it.each([
    ['fl-3fa2-d1', '3fa2'],
    ['fl-3fa2-sw', '3fa2'],
    ['fl-d1', null],
    ['other-3fa2-d1', null],
  ])('%s → %s', (ns, id) => expect(runIdOf(ns)).toBe(id));
});

describe('parseArgs', () => {
  it.each([
    [[], { quick: false, keep: false, names: [] }],
    [['--quick', 'link-goodput'], { quick: true, keep: false, names: ['link-goodput'] }],
    [['a', '--keep', 'b'], { quick: false, keep: true, names: ['a', 'b'] }],
  ])('%j', (argv, parsed) => expect(parseArgs(argv)).toEqual(parsed));
  it('rejects unknown options', () => expect(() => parseArgs(['--fast'])).toThrow(/--fast/));
});

describe('inNamespace', () => {
  it.each([
    ['fl-1-cl', ['ip', ['netns', 'exec', 'fl-1-cl', 'curl', '-s']]],
    [null, ['curl', ['-s']]],
  ])('%s', (ns, argv) => expect(inNamespace(ns, 'curl', ['-s'])).toEqual(argv));
});

describe('missingPackages', () => {
  it.each([
    [{ ip: 'iproute2', tc: 'iproute2', curl: 'curl' }, [], ['curl', 'iproute2']],
    [{ ip: 'iproute2', curl: 'curl' }, ['ip'], ['curl']],
    [{ curl: 'curl' }, ['curl'], []],
  ])('%j with %j', (required, have, pkgs) => {
    expect(missingPackages(required, (c) => /** @type {string[]} */ (have).includes(c))).toEqual(
      pkgs,
    );
  });
});

describe('nginxConf', () => {
  it.each([
    [undefined, 'limit_rate 0;'],
    ['1m', 'limit_rate 1m;'],
  ])('limit_rate %s', (limitRate, line) => {
    const conf = nginxConf({ dir: '/w', root: '/r', ip: '10.77.1.1', port: 8080, limitRate });
    expect(conf).toContain(line);
    expect(conf).toContain('listen 10.77.1.1:8080');
    expect(conf).toContain('root /r;');
    expect(conf).toContain('pid /w/nginx.pid;');
  });
});

describe('gnuplotScript', () => {
  it('inlines every series and strips quotes from titles', () => {
    const s = gnuplotScript('/o.png', {
      title: 'a "b"',
      xlabel: 'W',
      ylabel: 'MB/s',
      series: [
        {
          title: 's1',
          points: [
            [1, 2],
            [3, 4],
          ],
        },
        { title: 's2', points: [[1, 5]] },
      ],
    });
    expect(s).toContain('set title "a b"');
    expect(s).toContain("'-' using 1:2 with linespoints title \"s1\", '-'");
    expect(s).toContain('1 2\n3 4\ne\n1 5\ne');
  });
});

describe('cpuSeconds', () => {
  it('grows while this process works and is 0 for a process that is gone', () => {
    const before = cpuSeconds(process.pid);
    const until = Date.now() + 150;
    while (Date.now() < until) Math.sqrt(Math.random());
    expect(cpuSeconds(process.pid)).toBeGreaterThan(before);
    expect(cpuSeconds(process.pid, { children: true })).toBeGreaterThanOrEqual(
      cpuSeconds(process.pid),
    );
    expect(cpuSeconds(2 ** 22 + 1)).toBe(0);
  });
});

describe('cpuTimes', () => {
  it('splits user from system time, adds up to cpuSeconds and is zeros for a gone process', () => {
    const before = cpuTimes(process.pid);
    // Work until the kernel has charged a tick of user time (no wall-clock window: load varies).
    while (cpuTimes(process.pid).user <= before.user) Math.sqrt(Math.random());
    const now = cpuTimes(process.pid);
    expect(now.system).toBeGreaterThanOrEqual(before.system);
    expect(cpuSeconds(process.pid)).toBeGreaterThanOrEqual(now.user + now.system - 1e-9);
    expect(cpuTimes(2 ** 22 + 1)).toEqual({ user: 0, system: 0 });
  });
});

describe('clientCpuTimes', () => {
  it('reads the user and system parts of get --stats, and refuses output without them', () => {
    const line = 'client CPU during the read 1.25 s (user 1.00, system 0.25)';
    expect(clientCpuTimes(`x\n${line}\ny`)).toEqual({ user: 1, system: 0.25 });
    expect(() => clientCpuTimes('1 GiB in 2 s')).toThrow(/no CPU line/);
  });
});

describe('busySeconds', () => {
  it.each([
    // user nice system idle iowait irq softirq steal guest guest_nice
    ['cpu  200 0 100 5000 10 0 0 0 0 0\ncpu0 100 0 50 2500 5 0 0 0 0 0', 3],
    ['cpu  100 20 30 999 999 4 5 6 0 0', 1.65],
  ])('counts every busy field of %j, not idle or iowait', (stat, seconds) => {
    expect(busySeconds(stat)).toBeCloseTo(seconds, 9);
  });
  it('reads this machine and only grows', () => {
    const a = busySeconds();
    expect(a).toBeGreaterThan(0);
    expect(busySeconds()).toBeGreaterThanOrEqual(a);
  });
});

describe('parseGetSummary', () => {
  const summary = '1 GiB (1073741824 bytes) in 89.86 s, 11.9 MB/s, 0 donor failure(s) → /tmp/out';
  it.each([
    // stderr, what is read from it
    { stderr: summary, want: { seconds: 89.86, mbps: 11.9 } },
    {
      stderr: `${summary}\nread time 89.8612 s, 11.949 MB/s\nfirst morsel after 0.090 s`,
      want: { seconds: 89.8612, mbps: 11.949 },
    },
  ])('$want.mbps MB/s', ({ stderr, want }) => {
    expect(parseGetSummary(stderr)).toEqual(want);
  });

  it('says what it got when there is no summary', () => {
    expect(() => parseGetSummary('error: dataset not found')).toThrow(/no summary.*not found/);
  });
});
