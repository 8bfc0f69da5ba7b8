import { describe, expect, it } from 'vitest';
import { nativeSample } from './native-sample.js';
import type { SystemFigures } from './system-probe.js';

const figures: SystemFigures = {
  cpu: 0.6,
  ownCpu: 0.2,
  memory: 0.5,
  diskReadBps: 50e6,
  diskWriteBps: 10e6,
  netRxBps: 5e6,
  netTxBps: 45e6,
  onBattery: false,
  metered: null,
};

describe('nativeSample', () => {
  it.each([
    [
      'own CPU and served bytes come off',
      figures,
      40e6,
      0,
      { cpu: 0.4, diskBps: 20e6, netBps: 10e6 },
    ],
    // Served over loopback: not in the interface counters, so never below zero.
    ['own share larger than what was seen', figures, 100e6, 0, { diskBps: 10e6, netBps: 5e6 }],
    // An import pulling 4 MB/s: received on the network and written to disk by the agent.
    ['imported bytes come off rx and writes', figures, 0, 4e6, { diskBps: 56e6, netBps: 46e6 }],
    [
      'unknown stays unknown',
      {
        ...figures,
        cpu: null,
        diskReadBps: null,
        diskWriteBps: null,
        netRxBps: null,
        netTxBps: null,
      },
      0,
      0,
      { cpu: null, diskBps: null, netBps: null },
    ],
  ])('%s', (_name, f, served, received, expected) => {
    const s = nativeSample(f, served, received);
    for (const [k, v] of Object.entries(expected)) {
      if (v === null) expect(s[k as keyof typeof s]).toBeNull();
      else expect(s[k as keyof typeof s]).toBeCloseTo(v);
    }
  });

  it('before the first probe, everything is unknown', () => {
    expect(nativeSample(undefined, 5)).toMatchObject({ cpu: null, netBps: null, servedBps: 5 });
  });
});
