import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Milliseconds since the owner's last input, or null when this platform cannot tell. */
export type OwnerIdleSource = () => Promise<number | null>;

/** A report (from the tray, or a test) counts over the platform's own answer for this long. */
export const REPORT_FRESH_MS = 30_000;

/** The platform source where the platform cannot tell: always unknown. */
export const NO_OWNER_INPUT: OwnerIdleSource = async () => null;

/**
 * Owner idle time from the platform where it really knows: X11's screensaver extension through
 * `xprintidle` (when DISPLAY is set), macOS's HID system through `ioreg`. Anything else (Wayland,
 * a headless server, Windows without the tray) is unknown: no heuristics from interrupt counts.
 * A tool that is missing is not asked again.
 */
export function platformIdleSource(env: NodeJS.ProcessEnv = process.env): OwnerIdleSource {
  let broken = false;
  const ask = async (cmd: string, args: string[], parse: (out: string) => number | null) => {
    if (broken) return null;
    try {
      const { stdout } = await run(cmd, args, { timeout: 1_000 });
      return parse(stdout);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') broken = true;
      return null;
    }
  };
  if (process.platform === 'darwin') {
    return () => ask('ioreg', ['-c', 'IOHIDSystem', '-d', '4'], parseIoregIdle);
  }
  if (process.platform === 'linux' && env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return () => ask('xprintidle', [], parseXprintidle);
  }
  return NO_OWNER_INPUT;
}

/** `xprintidle` prints milliseconds on one line. */
export function parseXprintidle(out: string): number | null {
  const ms = Number(out.trim());
  return out.trim() !== '' && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** `ioreg -c IOHIDSystem` has `"HIDIdleTime" = <nanoseconds>`. */
export function parseIoregIdle(out: string): number | null {
  const m = /"HIDIdleTime"\s*=\s*(\d+)/.exec(out);
  return m ? Math.floor(Number(m[1]) / 1e6) : null;
}

/**
 * Combines pushed reports (the Electron tray's `powerMonitor.getSystemIdleTime()`, or a test
 * simulating the owner) with a platform source. A report ages with time (idle keeps growing
 * after it) and wins while fresher than REPORT_FRESH_MS; after that the platform answers.
 *
 * @example
 *   const idle = new OwnerIdle(platformIdleSource(), () => performance.now());
 *   idle.report(0); await idle.read(); // → 0: the owner just touched the keyboard
 */
export class OwnerIdle {
  private reported: { idleMs: number; at: number } | undefined;
  private asked: { idleMs: number | null; at: number } | undefined;

  /**
   * @param platformEveryMs the platform is asked at most this often (each ask may spawn a
   *   process); in between its last answer is aged. 500 ms keeps a drop within a second.
   */
  constructor(
    private readonly platform: OwnerIdleSource,
    private readonly clock: () => number,
    private readonly freshMs = REPORT_FRESH_MS,
    private readonly platformEveryMs = 500,
  ) {}

  report(idleMs: number): void {
    this.reported = { idleMs: Math.max(0, idleMs), at: this.clock() };
  }

  async read(): Promise<number | null> {
    const r = this.reported;
    if (r) {
      const age = this.clock() - r.at;
      if (age < this.freshMs) return r.idleMs + age;
    }
    const now = this.clock();
    const a = this.asked;
    if (a && now - a.at < this.platformEveryMs) {
      return a.idleMs === null ? null : a.idleMs + (now - a.at);
    }
    const idleMs = await this.platform();
    this.asked = { idleMs, at: this.clock() };
    return idleMs;
  }
}
