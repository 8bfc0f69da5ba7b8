import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How often the metered state is asked for (it rarely changes; asking spawns a process). */
export const METERED_EVERY_MS = 30_000;

/**
 * Whether the active connection is metered, where the OS says so: NetworkManager on Linux
 * (`nmcli`, which reports the flag the user or the connection profile set). Elsewhere, or when
 * NetworkManager is absent, null — FreeLoader does not guess from interface names.
 */
export async function meteredConnection(): Promise<boolean | null> {
  if (process.platform !== 'linux') return null;
  try {
    const { stdout } = await run(
      'nmcli',
      ['-t', '-f', 'GENERAL.STATE,GENERAL.METERED', 'device', 'show'],
      {
        timeout: 2_000,
      },
    );
    return parseNmcliMetered(stdout);
  } catch {
    return null;
  }
}

/**
 * Parse `nmcli -t -f GENERAL.STATE,GENERAL.METERED device show` output: metered when any
 * connected device says yes, not metered when connected ones all say no, else null.
 *
 * @example parseNmcliMetered('GENERAL.STATE:100 (connected)\nGENERAL.METERED:yes\n') // → true
 */
export function parseNmcliMetered(text: string): boolean | null {
  let connected = false;
  let answer: boolean | null = null;
  for (const line of text.split('\n')) {
    const [key, value = ''] = line.split(/:(.*)/s, 2);
    if (key === 'GENERAL.STATE') connected = value.includes('(connected)');
    if (key === 'GENERAL.METERED' && connected) {
      if (value.startsWith('yes')) return true;
      if (value.startsWith('no')) answer = false;
    }
  }
  return answer;
}
