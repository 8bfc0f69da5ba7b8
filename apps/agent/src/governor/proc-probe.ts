import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CpuMeter } from './cpu-meter.js';
import { METERED_EVERY_MS, meteredConnection } from './metered.js';
import type { SystemFigures, SystemProbe } from './system-probe.js';

/** Bytes per sector in /proc/diskstats, whatever the device's real sector size. */
const SECTOR_BYTES = 512;
/** How often the list of disks and the power supplies are looked at again (ms). */
const DEVICES_EVERY_MS = 60_000;
/**
 * Block devices that are not physical disks: loop files, RAM disks, and stacked devices (device
 * mapper, md RAID) whose I/O the disks under them count already.
 */
const NOT_A_DISK = /^(loop|ram|zram|dm-|md|nbd|sr)/;
/** Network interfaces not to count: loopback, and ifb mirrors of shaped traffic. */
const NOT_AN_INTERFACE = /^(lo|ifb)/;

/** Cumulative counters a rate is taken from. */
interface Counters {
  at: number;
  diskRead: number;
  diskWrite: number;
  rx: number;
  tx: number;
}

/**
 * The machine's figures straight from the Linux kernel: /proc/meminfo, /proc/diskstats (whole
 * physical disks), /proc/net/dev (loopback excluded) and /sys/class/power_supply — a few file
 * reads per sample. systeminformation spawns shells (lsblk, cat) for the disk and network
 * figures on every call: about 30 ms of CPU and five processes a second, which is itself load
 * on the owner's machine. The first read answers null for the rates (they need two readings).
 *
 * @example const f = await new ProcSystemProbe().read(); // f.memory → 0.41
 */
export class ProcSystemProbe implements SystemProbe {
  private readonly cpu = new CpuMeter();
  private last: Counters | undefined;
  private disks: { names: Set<string>; at: number } = { names: new Set(), at: -Infinity };
  private battery: { value: boolean | null; at: number } = { value: null, at: -Infinity };
  private metered: { value: boolean | null; at: number } = { value: null, at: -Infinity };

  private readonly proc: string;
  private readonly sys: string;
  private readonly clock: () => number;

  /** Roots and clock are injectable so tests can feed their own counters. */
  constructor(opts: { proc?: string; sys?: string; clock?: () => number } = {}) {
    this.proc = opts.proc ?? '/proc';
    this.sys = opts.sys ?? '/sys';
    this.clock = opts.clock ?? (() => performance.now());
  }

  async read(): Promise<SystemFigures> {
    const now = this.clock();
    // Read in place, not through the thread pool: procfs text is made in memory and never waits
    // on a disk, and fs.promises.readFile of a size-0 /proc file is five pool round trips (open,
    // fstat, read, read, close). A donor pays this every second, serving or not; on the AMD VM
    // (4 alternating rounds of 400 reads) a probe cost 0.52-1.13 ms of CPU, 0.16-0.22 ms now.
    const meminfo = readProcText(join(this.proc, 'meminfo'));
    const diskstats = readProcText(join(this.proc, 'diskstats'));
    const netdev = readProcText(join(this.proc, 'net/dev'));
    const [disks, onBattery, metered] = await Promise.all([
      this.diskNames(now),
      this.onBattery(now),
      this.meteredNow(now),
    ]);
    const disk = diskstats === null ? null : parseDiskstats(diskstats, disks);
    const net = netdev === null ? null : parseNetDev(netdev);
    const prev = this.last;
    const seconds = prev ? (now - prev.at) / 1000 : 0;
    const rate = (cur: number | undefined, before: number | undefined): number | null =>
      cur === undefined || before === undefined || seconds <= 0
        ? null
        : Math.max(0, cur - before) / seconds;
    this.last = {
      at: now,
      diskRead: disk?.readBytes ?? NaN,
      diskWrite: disk?.writeBytes ?? NaN,
      rx: net?.rxBytes ?? NaN,
      tx: net?.txBytes ?? NaN,
    };
    const known = (v: number | null): number | null => (v === null || Number.isNaN(v) ? null : v);
    return {
      ...this.cpu.read(),
      memory: meminfo === null ? null : parseMeminfo(meminfo),
      diskReadBps: known(rate(disk?.readBytes, prev?.diskRead)),
      diskWriteBps: known(rate(disk?.writeBytes, prev?.diskWrite)),
      netRxBps: known(rate(net?.rxBytes, prev?.rx)),
      netTxBps: known(rate(net?.txBytes, prev?.tx)),
      onBattery,
      metered,
    };
  }

  private async diskNames(now: number): Promise<Set<string>> {
    if (now - this.disks.at >= DEVICES_EVERY_MS) {
      const names = await readdir(join(this.sys, 'block')).catch(() => [] as string[]);
      // /sys/block writes '/' in a name as '!' (cciss!c0d0); /proc/diskstats does not.
      this.disks = {
        names: new Set(names.filter((n) => !NOT_A_DISK.test(n)).map((n) => n.replace(/!/g, '/'))),
        at: now,
      };
    }
    return this.disks.names;
  }

  private async onBattery(now: number): Promise<boolean | null> {
    if (now - this.battery.at >= DEVICES_EVERY_MS) {
      this.battery = {
        value: await powerSupplyOnBattery(join(this.sys, 'class/power_supply')),
        at: now,
      };
    }
    return this.battery.value;
  }

  private async meteredNow(now: number): Promise<boolean | null> {
    if (now - this.metered.at >= METERED_EVERY_MS) {
      this.metered = { value: await meteredConnection(), at: now };
    }
    return this.metered.value;
  }
}

/** A /proc file's text, or null when it cannot be read (not Linux, a hidden /proc). */
function readProcText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Bytes read and written so far by the named disks (/proc/diskstats: sectors read is field 6,
 * sectors written field 10, counted in 512-byte units). Partitions are left out by the names.
 *
 * @example parseDiskstats(' 254 0 vda 5 0 8 0 7 0 16 0 0 0 0', new Set(['vda'])) // → { readBytes: 4096, writeBytes: 8192 }
 */
export function parseDiskstats(
  text: string,
  disks: ReadonlySet<string>,
): { readBytes: number; writeBytes: number } | null {
  let readBytes = 0;
  let writeBytes = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !disks.has(f[2]!)) continue;
    const read = Number(f[5]);
    const written = Number(f[9]);
    if (!Number.isFinite(read) || !Number.isFinite(written)) continue;
    readBytes += read * SECTOR_BYTES;
    writeBytes += written * SECTOR_BYTES;
    seen = true;
  }
  return seen ? { readBytes, writeBytes } : null;
}

/**
 * Bytes received and sent so far on every interface but loopback and ifb mirrors
 * (/proc/net/dev: receive bytes is the first column after the name, transmit bytes the ninth).
 *
 * @example parseNetDev('  eth0: 100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0') // → { rxBytes: 100, txBytes: 200 }
 */
export function parseNetDev(text: string): { rxBytes: number; txBytes: number } | null {
  let rxBytes = 0;
  let txBytes = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m || NOT_AN_INTERFACE.test(m[1]!)) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    if (f.length < 9 || !Number.isFinite(f[0]) || !Number.isFinite(f[8])) continue;
    rxBytes += f[0]!;
    txBytes += f[8]!;
    seen = true;
  }
  return seen ? { rxBytes, txBytes } : null;
}

/**
 * Memory in use, 0..1, as 1 − MemAvailable / MemTotal (page cache the kernel can drop counts
 * as available, which is what the owner's programs can still get).
 *
 * @example parseMeminfo('MemTotal: 1000 kB\nMemAvailable: 250 kB\n') // → 0.75
 */
export function parseMeminfo(text: string): number | null {
  const kb = (key: string): number | undefined => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const total = kb('MemTotal');
  const available = kb('MemAvailable');
  if (!total || available === undefined) return null;
  return Math.min(1, Math.max(0, 1 - available / total));
}

/**
 * On battery per /sys/class/power_supply: null when the machine has no battery; true when no
 * mains supply is online (or, with no mains entry at all, when a battery is discharging).
 */
export async function powerSupplyOnBattery(dir: string): Promise<boolean | null> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const read = (name: string, file: string) =>
    readFile(join(dir, name, file), 'utf8').then(
      (t) => t.trim(),
      () => '',
    );
  let battery = false;
  let discharging = false;
  let mains: boolean | undefined;
  for (const name of names) {
    const type = await read(name, 'type');
    if (type === 'Battery') {
      battery = true;
      if ((await read(name, 'status')) === 'Discharging') discharging = true;
    } else if (type === 'Mains') {
      mains = (mains ?? false) || (await read(name, 'online')) === '1';
    }
  }
  if (!battery) return null;
  return mains === undefined ? discharging : !mains;
}
