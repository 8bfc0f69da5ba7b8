import { cpus } from 'node:os';

/**
 * Machine and own-process CPU busy fractions between two calls, from `os.cpus()` tick counters
 * and `process.cpuUsage()`: no child process, no blocking (systeminformation's currentLoad runs
 * a synchronous command on Linux, which would stall the serving event loop).
 *
 * @example const m = new CpuMeter(); …; m.read() // → { cpu: 0.42, ownCpu: 0.03 }
 */
export class CpuMeter {
  private lastCpu = cpuTimes();
  private lastOwn = { usage: process.cpuUsage(), at: performance.now() };

  read(): { cpu: number | null; ownCpu: number | null } {
    // One os.cpus() per reading (it reads /proc/stat and /proc/cpuinfo: 73 µs of CPU here).
    const list = cpus();
    const now = cpuTimes(list);
    const total = now.total - this.lastCpu.total;
    const idle = now.idle - this.lastCpu.idle;
    this.lastCpu = now;
    const usage = process.cpuUsage();
    const at = performance.now();
    const ownMicros =
      usage.user - this.lastOwn.usage.user + (usage.system - this.lastOwn.usage.system);
    const wallMicros = (at - this.lastOwn.at) * 1000 * Math.max(1, list.length);
    this.lastOwn = { usage, at };
    return {
      cpu: total > 0 ? Math.min(1, Math.max(0, 1 - idle / total)) : null,
      ownCpu: wallMicros > 0 ? Math.min(1, ownMicros / wallMicros) : null,
    };
  }
}

function cpuTimes(list = cpus()): { total: number; idle: number } {
  let total = 0;
  let idle = 0;
  for (const c of list) {
    const t = c.times;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
    idle += t.idle;
  }
  return { total, idle };
}
