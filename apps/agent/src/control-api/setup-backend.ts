import { FreeLoaderError } from '@freeloader/protocol';
import { DEFAULT_GOVERNOR_SETTINGS } from '../governor/governor-settings.js';
import type { SettingsBackend } from './control-backend.js';
import type { EnrollLocal, LocalState } from './local-api.js';

/** What the enrollment form starts with (from the command line), all optional. */
export interface SetupDefaults {
  managerUrl?: string | null;
  quotaBytes?: number | null;
  bandwidthOnly?: boolean;
}

/**
 * The settings API before this computer has joined a cache: it shows "not enrolled" and offers
 * enrollment (manager URL + join token + quota); `onEnroll` starts the daemon, after which the
 * caller swaps in a DaemonBackend. The defaults show up in the form (state's managerUrl, quota).
 */
export class SetupBackend implements SettingsBackend {
  private error: string | null = null;

  constructor(
    private readonly dir: string,
    private readonly onEnroll: (req: EnrollLocal) => Promise<void>,
    private readonly defaults: SetupDefaults = {},
  ) {}

  state(): LocalState {
    const s = DEFAULT_GOVERNOR_SETTINGS;
    return {
      enrolled: false,
      agentId: null,
      name: null,
      status: 'setup',
      managerUrl: this.defaults.managerUrl ?? null,
      serviceUrl: null,
      dir: this.dir,
      bandwidthOnly: this.defaults.bandwidthOnly ?? false,
      quota: { quotaBytes: this.defaults.quotaBytes ?? 0, usedBytes: 0, freeBytes: 0 },
      servingBps: 0,
      governor: {
        state: 'paused',
        capBps: 0,
        reasons: ['not enrolled'],
        pause: null,
        ownerIdleMs: null,
        sample: {
          cpu: null,
          memory: null,
          diskBps: null,
          netBps: null,
          onBattery: null,
          metered: null,
        },
        settings: s,
      },
      relocation: {
        state: 'idle',
        totalBytes: 0,
        doneBytes: 0,
        evicted: 0,
        unplacedBytes: 0,
        retainedBytes: 0,
        error: this.error,
      },
    };
  }

  async enroll(req: EnrollLocal): Promise<void> {
    try {
      await this.onEnroll(req);
      this.error = null;
    } catch (e) {
      this.error = e instanceof Error ? e.message : String(e);
      throw e;
    }
  }

  async update(): Promise<void> {
    throw notYet();
  }

  async pause(): Promise<void> {
    throw notYet();
  }

  async resume(): Promise<void> {
    throw notYet();
  }

  /** Nothing is served yet, so owner input changes nothing. */
  async reportIdle(): Promise<void> {}
}

function notYet(): FreeLoaderError {
  return new FreeLoaderError('CONFLICT', 'join a FreeLoader cache first (manager URL and token)');
}
