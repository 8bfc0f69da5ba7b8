import { SettingsClient } from '../control-api/settings-client.js';
import { waitFor, type SpawnedAgent } from './cluster-harness.js';

/**
 * The settings API of a spawned `freeloader agent`, from the `settings at …` line it prints
 * once its settings page is up (test helper).
 */
export async function settingsOf(agent: SpawnedAgent): Promise<SettingsClient> {
  const url = await waitFor(
    'the agent settings line',
    () => /^settings at (\S+)$/m.exec(agent.stderr())?.[1],
    60_000,
    20,
  );
  return SettingsClient.fromOpenUrl(url);
}
