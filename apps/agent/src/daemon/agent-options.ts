import type { Logger } from 'pino';
import type { OwnerIdleSource } from '../governor/owner-idle.js';
import type { SystemProbe } from '../governor/system-probe.js';
import type { ScrubSettings } from '../store/scrub-rate.js';

/** What a donor daemon is started with (the CLI's flags, the tray's settings, a test's choice). */
export interface AgentOptions {
  managerUrl: string;
  /** Join token; needed only for the first start (later starts reuse the stored identity). */
  token?: string;
  /** State directory: identity, settings and the morsel store live here. */
  dir: string;
  /** Donated space in bytes; remembered, so later starts may omit it. */
  quotaBytes?: number;
  listenHost?: string;
  /** 0 picks a free port. */
  listenPort?: number;
  /** URL clients use to reach this agent's morsel service; defaults to the listen address. */
  advertiseUrl?: string;
  name?: string;
  bandwidthOnly?: boolean;
  heartbeatIntervalMs?: number;
  /** Accept file:// sources in import jobs (the manager must allow them too). */
  allowFileUris?: boolean;
  /**
   * Hosts and CIDRs sources may reach although loopback, private … (`FREELOADER_SOURCE_ALLOW`);
   * the manager's list, from every heartbeat, is added to it.
   */
  sourceAllow?: readonly string[];
  /** Owner idle time from the host (the tray's powerMonitor); default: the platform's. */
  idleSource?: OwnerIdleSource;
  /** Machine measurements for the governor; default systeminformation. */
  systemProbe?: SystemProbe;
  /** The scrub's pace (default: a full pass per SCRUB_PERIOD_MS); remembered across starts. */
  scrub?: ScrubSettings;
  logger: Logger;
}
