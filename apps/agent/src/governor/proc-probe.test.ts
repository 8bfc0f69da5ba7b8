import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ProcSystemProbe,
  parseDiskstats,
  parseMeminfo,
  parseNetDev,
  powerSupplyOnBattery,
} from './proc-probe.js';

/** /proc/diskstats lines: major minor name, then reads, merged, sectors read (6th), …, sectors written (10th). */
const diskstats = (vdaRead: number, vdaWritten: number): string =>
  [
    `   7       0 loop0 9 0 999 0 9 0 999 0 0 0 0`,
    ` 254       0 vda 100 0 ${vdaRead} 10 200 0 ${vdaWritten} 20 0 30 30 0 0 0 0`,
    ` 254       1 vda1 100 0 ${vdaRead} 10 200 0 ${vdaWritten} 20 0 30 30 0 0 0 0`,
    ` 253       0 dm-0 1 0 777 1 1 0 777 1 0 1 1`,
  ].join('\n');

/** /proc/net/dev: two header lines, then `iface: rx bytes … (8 fields) tx bytes …`. */
const netdev = (ethRx: number, ethTx: number): string =>
  [
    'Inter-|   Receive                                                |  Transmit',
    ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed',
    `    lo: 5000 1 0 0 0 0 0 0 5000 1 0 0 0 0 0 0`,
    `  ifb0: 4000 1 0 0 0 0 0 0 4000 1 0 0 0 0 0 0`,
    `  eth0: ${ethRx} 1 0 0 0 0 0 0 ${ethTx} 1 0 0 0 0 0 0`,
  ].join('\n');

describe('/proc parsers', () => {
  it.each([
    [
      'whole disks only (no partitions, loop or dm)',
      diskstats(8, 16),
      ['vda'],
      { readBytes: 4096, writeBytes: 8192 },
    ],
    ['no disk named', diskstats(8, 16), [], null],
    ['garbage', 'not diskstats', ['vda'], null],
  ])('diskstats: %s', (_name, text, disks, expected) => {
    expect(parseDiskstats(text, new Set(disks))).toEqual(expected);
  });

  it.each([
    ['loopback and ifb mirrors left out', netdev(100, 200), { rxBytes: 100, txBytes: 200 }],
    ['only loopback', netdev(0, 0).split('\n').slice(0, 3).join('\n'), null],
  ])('net/dev: %s', (_name, text, expected) => {
    expect(parseNetDev(text)).toEqual(expected);
  });

  it.each([
    ['available counts as free', 'MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 250 kB\n', 0.75],
    ['no MemAvailable (old kernel): unknown', 'MemTotal: 1000 kB\nMemFree: 10 kB\n', null],
  ])('meminfo: %s', (_name, text, expected) => {
    expect(parseMeminfo(text)).toBe(expected);
  });
});

describe('ProcSystemProbe over a fake /proc and /sys', () => {
  let root: string;
  const proc = () => join(root, 'proc');
  const sys = () => join(root, 'sys');
  const supply = async (name: string, files: Record<string, string>) => {
    await mkdir(join(sys(), 'class/power_supply', name), { recursive: true });
    for (const [f, v] of Object.entries(files)) {
      await writeFile(join(sys(), 'class/power_supply', name, f), v + '\n');
    }
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fl-proc-'));
    await mkdir(join(proc(), 'net'), { recursive: true });
    for (const d of ['vda', 'loop0', 'dm-0'])
      await mkdir(join(sys(), 'block', d), { recursive: true });
    await writeFile(join(proc(), 'meminfo'), 'MemTotal: 2000 kB\nMemAvailable: 500 kB\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('turns counters into rates between two reads', async () => {
    let now = 0;
    const probe = new ProcSystemProbe({ proc: proc(), sys: sys(), clock: () => now });
    await writeFile(join(proc(), 'diskstats'), diskstats(0, 0));
    await writeFile(join(proc(), 'net/dev'), netdev(1_000, 2_000));
    const first = await probe.read();
    expect(first).toMatchObject({ memory: 0.75, diskReadBps: null, netRxBps: null });

    now += 2_000;
    // 2 s later: 4 MB read, 2 MB written (in sectors), 10 MB received, 1 MB sent.
    await writeFile(join(proc(), 'diskstats'), diskstats(8_000_000 / 512, 4_000_000 / 512));
    await writeFile(join(proc(), 'net/dev'), netdev(1_000 + 10e6, 2_000 + 1e6));
    expect(await probe.read()).toMatchObject({
      diskReadBps: 4e6,
      diskWriteBps: 2e6,
      netRxBps: 5e6,
      netTxBps: 0.5e6,
    });
  });

  it('answers unknown, not an error, for /proc files it cannot read (read in place)', async () => {
    // A /proc with meminfo only: no diskstats, no net/dev (a container's masked /proc).
    const bare = join(root, 'bare-proc');
    await mkdir(bare, { recursive: true });
    await writeFile(join(bare, 'meminfo'), 'MemTotal: 2000 kB\nMemAvailable: 1000 kB\n');
    let now = 0;
    const probe = new ProcSystemProbe({ proc: bare, sys: sys(), clock: () => now });
    await probe.read();
    now += 1_000;
    expect(await probe.read()).toMatchObject({
      memory: 0.5,
      diskReadBps: null,
      diskWriteBps: null,
      netRxBps: null,
      netTxBps: null,
    });
  });

  it.each([
    ['no battery: unknown', [], null],
    [
      'battery and mains online',
      [
        ['BAT0', 'Battery', 'Charging'],
        ['AC', 'Mains', '1'],
      ],
      false,
    ],
    [
      'battery and mains offline',
      [
        ['BAT0', 'Battery', 'Discharging'],
        ['AC', 'Mains', '0'],
      ],
      true,
    ],
    ['battery, no mains entry, discharging', [['BAT1', 'Battery', 'Discharging']], true],
  ])('power supply: %s', async (name, supplies, expected) => {
    const base = join(sys(), 'class/power_supply');
    await rm(base, { recursive: true, force: true });
    for (const [n, type, state] of supplies as string[][]) {
      await supply(
        n!,
        type === 'Battery' ? { type: type, status: state! } : { type: type!, online: state! },
      );
    }
    expect(await powerSupplyOnBattery(base), name).toBe(expected);
  });

  it.runIf(process.platform === 'linux')(
    'reads this machine without spawning anything',
    async () => {
      const probe = new ProcSystemProbe();
      await probe.read();
      await new Promise((r) => setTimeout(r, 50));
      const f = await probe.read();
      expect(f.memory).toBeGreaterThan(0);
      expect(f.diskReadBps).not.toBeNull();
      expect(f.cpu).not.toBeNull();
    },
  );
});
