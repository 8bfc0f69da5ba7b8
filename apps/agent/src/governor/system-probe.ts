import si from 'systeminformation';
import { CpuMeter } from './cpu-meter.js';
import { METERED_EVERY_MS, meteredConnection } from './metered.js';

/** Machine-wide figures, before the agent's own share is subtracted; null = unknown. */
export interface SystemFigures {
  /** CPU busy fraction of the whole machine 0..1. */
  cpu: number | null;
  /** This process's CPU as a fraction of the whole machine 0..1. */
  ownCpu: number | null;
  memory: number | null;
  diskReadBps: number | null;
  diskWriteBps: number | null;
  /** Receive + transmit over non-loopback interfaces. */
  netRxBps: number | null;
  netTxBps: number | null;
  onBattery: boolean | null;
  metered: boolean | null;
}

/** Something that measures the machine (the real one, or a test's). */
export interface SystemProbe {
  read(): Promise<SystemFigures>;
}

/**
 * The machine as `systeminformation` sees it: memory, disk and network throughput, battery —
 * for platforms other than Linux (there {@link ProcSystemProbe} reads the kernel's counters
 * directly: systeminformation spawns shells for disk and network figures every call).
 * CPU comes from `os.cpus()` deltas instead of `si.currentLoad()`, which on Linux runs a
 * synchronous child process and would stall the serving event loop for milliseconds each time.
 * Disk and network rates need two readings: the first read answers null for them.
 */
export class SiSystemProbe implements SystemProbe {
  private readonly cpu = new CpuMeter();
  private metered: { value: boolean | null; at: number } = { value: null, at: -Infinity };

  async read(): Promise<SystemFigures> {
    const [mem, fs, net, battery] = await Promise.all([
      si.mem().catch(() => null),
      si.fsStats().catch(() => null),
      si.networkStats('*').catch(() => []),
      si.battery().catch(() => null),
    ]);
    const { cpu, ownCpu } = this.cpu.read();
    const external = net.filter((n) => n.iface !== 'lo' && !n.iface.startsWith('lo'));
    const sumOf = (key: 'rx_sec' | 'tx_sec'): number | null => {
      const known = external.map((n) => n[key]).filter((v) => typeof v === 'number' && v >= 0);
      return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
    };
    return {
      cpu,
      ownCpu,
      memory: mem && mem.total > 0 ? 1 - mem.available / mem.total : null,
      diskReadBps: rate(fs?.rx_sec),
      diskWriteBps: rate(fs?.wx_sec),
      netRxBps: sumOf('rx_sec'),
      netTxBps: sumOf('tx_sec'),
      onBattery: battery?.hasBattery ? !battery.acConnected : null,
      metered: await this.meteredNow(),
    };
  }

  private async meteredNow(): Promise<boolean | null> {
    const at = performance.now();
    if (at - this.metered.at >= METERED_EVERY_MS) {
      this.metered = { value: await meteredConnection(), at };
    }
    return this.metered.value;
  }
}

function rate(v: number | null | undefined): number | null {
  return typeof v === 'number' && v >= 0 ? v : null;
}

/**
 * A machine whose load is not looked at: every figure unknown, so only owner input, schedules
 * and pauses govern serving. For test rigs and loopback benchmarks, where every process on the
 * box is FreeLoader itself (`FREELOADER_IGNORE_LOAD=1`).
 */
export class NullSystemProbe implements SystemProbe {
  async read(): Promise<SystemFigures> {
    return {
      cpu: null,
      ownCpu: null,
      memory: null,
      diskReadBps: null,
      diskWriteBps: null,
      netRxBps: null,
      netTxBps: null,
      onBattery: null,
      metered: null,
    };
  }
}
