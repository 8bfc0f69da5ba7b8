import { describe, expect, it } from 'vitest';
import {
  defaultBurstBytes,
  bridgeSkipsNetfilter,
  MIN_BURST_BYTES,
  queueLimitBytes,
  shapeCommands,
  switchSysctlCommand,
} from './shaping.js';

describe('defaultBurstBytes', () => {
  it.each([
    [1, MIN_BURST_BYTES],
    [100, MIN_BURST_BYTES],
    [1000, 125000],
    [10000, 1250000],
  ])('%d Mbit/s → %d bytes', (rate, burst) => {
    expect(defaultBurstBytes(rate)).toBe(burst);
  });
});

describe('queueLimitBytes', () => {
  it.each([
    [100, 67050, 20, 250000 + 67050],
    [1000, 125000, 20, 2500000 + 125000],
    [1, 67050, 20, 151400],
  ])('%d Mbit/s, burst %d, %d ms → %d', (rate, burst, ms, limit) => {
    expect(queueLimitBytes(rate, burst, ms)).toBe(limit);
  });
});

describe('shapeCommands', () => {
  const del = ['-n', 'ns', 'qdisc', 'del', 'dev', 'eth0', 'root'];
  it.each([
    ['unshaped', { rateMbit: null }, true, [del]],
    [
      'rate only',
      { rateMbit: 100, burstBytes: 70000, queueMs: 10 },
      true,
      [
        del,
        [
          '-n',
          'ns',
          'qdisc',
          'add',
          'dev',
          'eth0',
          'root',
          'handle',
          '1:',
          'tbf',
          'rate',
          '100mbit',
          'burst',
          '70000',
          'limit',
          '195000',
        ],
      ],
    ],
    [
      'delay, no netem',
      { rateMbit: 100, burstBytes: 70000, queueMs: 10, delayMs: 20 },
      false,
      [
        del,
        [
          '-n',
          'ns',
          'qdisc',
          'add',
          'dev',
          'eth0',
          'root',
          'handle',
          '1:',
          'tbf',
          'rate',
          '100mbit',
          'burst',
          '70000',
          'limit',
          '195000',
        ],
      ],
    ],
    [
      'delay with netem: half each way',
      { rateMbit: 100, burstBytes: 70000, queueMs: 10, delayMs: 20 },
      true,
      [
        del,
        [
          '-n',
          'ns',
          'qdisc',
          'add',
          'dev',
          'eth0',
          'root',
          'handle',
          '1:',
          'tbf',
          'rate',
          '100mbit',
          'burst',
          '70000',
          'limit',
          '195000',
        ],
        [
          '-n',
          'ns',
          'qdisc',
          'add',
          'dev',
          'eth0',
          'parent',
          '1:1',
          'handle',
          '10:',
          'netem',
          'delay',
          '10ms',
          'limit',
          '1000',
        ],
      ],
    ],
  ])('%s', (_name, spec, netem, expected) => {
    expect(shapeCommands('ns', 'eth0', spec, netem)).toEqual(expected);
  });
});

describe('the switch namespace', () => {
  it('keeps bridged frames out of netfilter there, and only there', () => {
    const cmd = switchSysctlCommand('fl-x-sw');
    expect(cmd.slice(0, 3)).toEqual(['netns', 'exec', 'fl-x-sw']);
    for (const table of ['iptables', 'ip6tables', 'arptables']) {
      expect(cmd).toContain(`net.bridge.bridge-nf-call-${table}=0`);
    }
  });
  it.each([
    [{}, true],
    [{ BENCH_BRIDGE_NETFILTER: '0' }, true],
    [{ BENCH_BRIDGE_NETFILTER: '1' }, false],
  ])('%j → netfilter skipped %s', (env, skipped) => {
    expect(bridgeSkipsNetfilter(env)).toBe(skipped);
  });
});
