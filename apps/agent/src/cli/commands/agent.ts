import type { Command } from 'commander';
import {
  DEFAULT_AGENT_PORT,
  FreeLoaderError,
  formatSize,
  parseSize,
  type LeaveProgress,
} from '@freeloader/protocol';
import type { AgentDaemon } from '../../daemon/agent-daemon.js';
import { defaultManagerUrl } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';
import { fileUrisAllowed, parseAllowList, SOURCE_ALLOW_ENV } from '@freeloader/sources';
import type { AgentHost } from '../../daemon/agent-host.js';
import { DEFAULT_SETTINGS_PORT } from '../../control-api/settings-port.js';
import type { ScrubSettings } from '../../store/scrub-rate.js';
import { parseDuration } from './duration.js';
import { parseListen } from './listen.js';
import { AGENT_NODE_OPTIONS_HELP } from '../agent-node-flags.js';

export function registerAgent(program: Command): void {
  program
    .command('agent')
    .description('run the donor daemon: store morsels in a quota and serve them on the LAN')
    .addHelpText('after', AGENT_NODE_OPTIONS_HELP)
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option(
      '--token <token>',
      'join token, or FREELOADER_JOIN_TOKEN (first start only; later starts reuse the identity; without one, enroll on the settings page)',
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
    .option(
      '--leave',
      'leave the cache gracefully: serve until the manager re-created every copy elsewhere, then exit',
    )
    .option(
      '--scrub-period <duration>',
      're-hash everything stored once per this period, e.g. 14d (the default; remembered)',
    )
    .option(
      '--scrub-rate <size>',
      'scrub at a fixed rate per second instead, e.g. 4MiB, or max (remembered)',
    )
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
      // The daemon (Fastify, pino, prom-client, systeminformation: 746 modules against get's 417)
      // loads only when an agent runs: every other command started in 0.7 s of CPU on the AMD VM
      // of issue 19 because this command's imports were static.
      const [{ AgentHost }, { createLogger }] = await Promise.all([
        import('../../daemon/agent-host.js'),
        import('../logger.js'),
      ]);
      const logger = createLogger(opts.logLevel);
      const announce = (daemon: AgentDaemon): void => {
        daemon.on('status', (s: string) => console.error(`agent: ${s}`));
        console.error(
          `agent ${daemon.identity?.agentId ?? '?'} serving at ${daemon.url} (${daemon.status})`,
        );
      };
      // Signals are handled from before the start: a stop while the daemon or the settings page
      // starts (the daemon heartbeats before the page listens) must still be a clean stop.
      const started: { host?: AgentHost } = {};
      let stopRequested = false;
      const stopped = runUntilSignal(async () => {
        stopRequested = true;
        await started.host?.stop();
      });
      const host = await AgentHost.start({
        agent: {
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
          // The same admin opt-in as the manager's: without it the manager would accept a
          // file:// import that every donor then refuses.
          allowFileUris: fileUrisAllowed(),
          ...scrubOption(opts),
          sourceAllow: parseAllowList(process.env[SOURCE_ALLOW_ENV]),
          logger,
        },
        settings: opts.settings === false ? false : parseListen(opts.settings, '--settings'),
        onDaemon: announce,
      });
      started.host = host;
      if (stopRequested) await host.stop();
      else if (host.settings) console.error(`settings at ${host.settings.openUrl}`);
      if (!stopRequested && !host.daemon) {
        console.error('agent: not enrolled yet; open the settings page to join a cache');
      }
      if (opts.leave && !stopRequested) {
        if (!host.daemon) {
          await host.stop();
          throw new FreeLoaderError(
            'VALIDATION_FAILED',
            '--leave: this agent never joined a cache',
          );
        }
        await host.daemon.leave((p) => console.error(leaveLine(p)));
        await host.stop();
        return;
      }
      await stopped;
    });
}

/**
 * One progress line of `agent --leave`.
 *
 * @example leaveLine({ leaving: true, released: false, remainingMorsels: 3, remainingBytes: 3145728 })
 *   // → 'leaving: 3 morsels (3.0 MiB) still to move elsewhere'
 */
export function leaveLine(p: LeaveProgress): string {
  return p.released
    ? 'left: every copy lives elsewhere; released by the manager, local store emptied'
    : `leaving: ${p.remainingMorsels} morsels (${formatSize(p.remainingBytes)}) still to move elsewhere`;
}

interface AgentCliOptions {
  leave?: boolean;
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
  scrubPeriod?: string;
  scrubRate?: string;
}

/** `--scrub-period` / `--scrub-rate` as daemon options (none given: the remembered pace). */
function scrubOption(opts: AgentCliOptions): { scrub?: ScrubSettings } {
  if (opts.scrubPeriod === undefined && opts.scrubRate === undefined) return {};
  const scrub: ScrubSettings = {};
  if (opts.scrubPeriod !== undefined) scrub.periodMs = parseDuration(opts.scrubPeriod) * 1000;
  if (opts.scrubRate !== undefined) {
    scrub.bytesPerSecond = opts.scrubRate === 'max' ? Infinity : parseSize(opts.scrubRate);
    if (!(scrub.bytesPerSecond > 0)) {
      throw new FreeLoaderError('VALIDATION_FAILED', '--scrub-rate must be more than 0 (or max)');
    }
  }
  return { scrub };
}
