/**
 * One look at the machine. Every native figure has the agent's own share subtracted; null means
 * "not known on this platform" and is never replaced by a guess.
 */
export interface MonitorSample {
  /** Milliseconds since the owner's last keyboard/mouse input; null = unknown. */
  ownerIdleMs: number | null;
  /** Native CPU busy fraction 0..1. */
  cpu: number | null;
  /** Memory in use fraction 0..1. */
  memory: number | null;
  /** Native disk bytes/s (reads + writes). */
  diskBps: number | null;
  /** Native network bytes/s (receive + transmit, loopback excluded). */
  netBps: number | null;
  /** Running on battery; null = unknown or no battery. */
  onBattery: boolean | null;
  /** On a metered connection; null = the OS does not say. */
  metered: boolean | null;
  /** What this agent sent over the sample's interval (bytes/s): serving, relocation pushes. */
  servedBps: number;
  /** What this agent pulled in over the interval (bytes/s): imports, patch downloads. */
  receivedBps: number;
}

/** A sample with nothing known, for before the first real one. */
export const UNKNOWN_SAMPLE: MonitorSample = {
  ownerIdleMs: null,
  cpu: null,
  memory: null,
  diskBps: null,
  netBps: null,
  onBattery: null,
  metered: null,
  servedBps: 0,
  receivedBps: 0,
};
