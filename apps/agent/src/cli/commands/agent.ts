import type { Command } from 'commander';
import { DEFAULT_AGENT_PORT, FreeLoaderError, parseSize } from '@freeloader/protocol';
import { AgentDaemon } from '../../daemon/agent-daemon.js';
import { createLogger } from '../logger.js';
import { defaultManagerUrl } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';
import { serveDaemonSettings } from '../../settings/daemon-settings.js';
import { DEFAULT_SETTINGS_PORT, type SettingsServer } from '../../settings/settings-server.js';
import { parseListen } from './listen.js';

export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('run the donor daemon: store morsels in a quota and serve them on the LAN')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option(
      '--token <token>',
      'join token, or FREELOADER_JOIN_TOKEN (first start only; later starts reuse the identity)',
    )
    .requiredOption('--dir <path>', 'state directory (identity, settings, morsel store)')
    .option('--quota <size>', 'donated space, e.g. 20GiB (remembered after the first start)')
    .option('--listen <host:port>', 'morsel service address', `0.0.0.0:${DEFAULT_AGENT_PORT}`)
    .option('--advertise <url>', 'URL clients use to reach this agent (default: from --listen)')
    .option('--name <name>', 'display name (default: host name)')
    .option('--bandwidth-only', 'give bandwidth for patching but no disk')
    .option(
      '--settings <host:port>',
      'local settings page (loopback; a busy default port falls back to a free one)',
      `127.0.0.1:${DEFAULT_SETTINGS_PORT}`,
    )
    .option('--no-settings', 'do not serve the local settings page')
    .option('--log-level <level>', 'log level', process.env.LOG_LEVEL ?? 'info')
    .action(async (opts: AgentCliOptions) => {
      const listen = parseListen(opts.listen);
      const quotaBytes = opts.quota !== undefined ? parseSize(opts.quota) : undefined;
      if (opts.bandwidthOnly && quotaBytes) {
        throw new FreeLoaderError(
          'VALIDATION_FAILED',
          '--bandwidth-only agents donate no disk: drop --quota',
        );
      }
      const daemon = await AgentDaemon.start({
        managerUrl: opts.manager,
        // From the environment, the secret stays out of the process list.
        token: opts.token ?? (process.env.FREELOADER_JOIN_TOKEN || undefined),
        dir: opts.dir,
        quotaBytes: opts.bandwidthOnly ? 0 : quotaBytes,
        listenHost: listen.host,
        listenPort: listen.port,
        advertiseUrl: opts.advertise,
        name: opts.name,
        bandwidthOnly: opts.bandwidthOnly,
        logger: createLogger(opts.logLevel),
      });
      daemon.on('status', (s: string) => console.error(`agent: ${s}`));
      console.error(
        `agent ${daemon.identity?.agentId ?? '?'} serving at ${daemon.url} (${daemon.status})`,
      );
      // Signals are handled from here on: a stop while the settings page starts is clean too.
      let settings: SettingsServer | undefined;
      let stopping = false;
      const stopped = runUntilSignal(async () => {
        stopping = true;
        await settings?.close();
        await daemon.stop();
      });
      if (opts.settings !== false) {
        try {
          settings = await serveDaemonSettings(daemon, {
            dir: opts.dir,
            managerUrl: opts.manager,
            bandwidthOnly: opts.bandwidthOnly ?? false,
            ...parseListen(opts.settings),
          });
        } catch (e) {
          await daemon.stop();
          throw e;
        }
        if (stopping) await settings.close();
        else console.error(`settings at ${settings.openUrl}`);
      }
      await stopped;
    });
}

interface AgentCliOptions {
  manager: string;
  token?: string;
  dir: string;
  quota?: string;
  listen: string;
  advertise?: string;
  name?: string;
  bandwidthOnly?: boolean;
  /** `host:port` of the settings page, or false for --no-settings. */
  settings: string | false;
  logLevel: string;
}
