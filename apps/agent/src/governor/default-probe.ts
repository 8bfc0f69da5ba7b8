import { ProcSystemProbe } from './proc-probe.js';
import { NullSystemProbe, SiSystemProbe, type SystemProbe } from './system-probe.js';

/**
 * The probe the environment asks for: {@link NullSystemProbe} when FREELOADER_IGNORE_LOAD=1,
 * else the kernel's counters on Linux and systeminformation elsewhere.
 */
export function defaultProbe(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): SystemProbe {
  if (env.FREELOADER_IGNORE_LOAD === '1') return new NullSystemProbe();
  return platform === 'linux' ? new ProcSystemProbe() : new SiSystemProbe();
}
