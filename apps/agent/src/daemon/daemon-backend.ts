import type { SettingsBackend } from '../control-api/control-backend.js';
import type { LocalState, PauseRequest, SettingsPatch } from '../control-api/local-api.js';
import { loadSettings, saveSettings } from '../state/settings-file.js';
import { changeQuota } from '../relocation/change-quota.js';
import type { AgentDaemon } from './agent-daemon.js';

export interface DaemonInfo {
  dir: string;
  managerUrl: string;
  bandwidthOnly: boolean;
}

/** The control API over a running {@link AgentDaemon}: the daemon's side of the interface. */
export class DaemonBackend implements SettingsBackend {
  constructor(
    private readonly daemon: AgentDaemon,
    private readonly info: DaemonInfo,
  ) {}

  /** Start leaving; the moves run in the background, their progress shows in the state. */
  async leave(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.daemon.leave(() => resolve()).catch(reject);
    });
  }

  state(): LocalState {
    const d = this.daemon;
    const g = d.governance.status();
    return {
      enrolled: d.identity !== null,
      agentId: d.identity?.agentId ?? null,
      name: d.identity?.name ?? null,
      status: d.status,
      managerUrl: d.identity?.managerUrl ?? this.info.managerUrl,
      serviceUrl: d.url || null,
      dir: this.info.dir,
      bandwidthOnly: this.info.bandwidthOnly,
      quota: d.store.usage(),
      servingBps: Math.round(g.sample.servedBps),
      governor: {
        state: g.decision.state,
        capBps: g.decision.capBps,
        reasons: g.decision.reasons,
        pause: g.pause,
        ownerIdleMs: g.sample.ownerIdleMs,
        sample: {
          cpu: g.sample.cpu,
          memory: g.sample.memory,
          diskBps: g.sample.diskBps,
          netBps: g.sample.netBps,
          onBattery: g.sample.onBattery,
          metered: g.sample.metered,
        },
        settings: g.settings,
      },
      relocation: { ...d.relocation.snapshot(), retainedBytes: d.store.retiredBytes },
      ...(d.leaveProgress ? { leave: d.leaveProgress } : {}),
    };
  }

  async update(patch: SettingsPatch): Promise<void> {
    // Governor first: it cannot fail halfway, while a quota cut talks to the manager.
    if (patch.governor) {
      await this.daemon.governance.updateSettings(patch.governor);
    }
    if (
      patch.quotaBytes !== undefined &&
      patch.quotaBytes !== this.daemon.store.usage().quotaBytes
    ) {
      await changeQuota(
        {
          dir: this.info.dir,
          store: this.daemon.store,
          manager: this.daemon.manager,
          tracker: this.daemon.relocation,
          quotaVersion: this.daemon.quotaVersion,
          bandwidthOnly: this.info.bandwidthOnly,
          rememberQuota: async (quotaBytes) =>
            saveSettings(this.info.dir, { ...(await loadSettings(this.info.dir)), quotaBytes }),
        },
        patch.quotaBytes,
      );
    }
  }

  async pause(span: PauseRequest['span']): Promise<void> {
    await this.daemon.governance.pauseFor(span);
  }

  async resume(): Promise<void> {
    await this.daemon.governance.resume();
  }

  async reportIdle(idleMs: number): Promise<void> {
    await this.daemon.governance.reportIdle(idleMs);
  }
}
