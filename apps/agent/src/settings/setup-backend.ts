import { FreeLoaderError } from '@freeloader/protocol';
import { DEFAULT_GOVERNOR_SETTINGS } from '../governor/governor-settings.js';
import type { SettingsBackend } from './daemon-backend.js';
import type { EnrollLocal, LocalState } from './local-api.js';

/**
 * The settings API before this computer has joined a cache: it shows "not enrolled" and offers
 * enrollment (manager URL + join token + quota); `onEnroll` starts the daemon, after which the
 * caller swaps in a DaemonBackend.
 */
export class SetupBackend implements SettingsBackend {
  private error: string | null = null;

  constructor(
    private readonly dir: string,
    private readonly onEnroll: (req: EnrollLocal) => Promise<void>,
  ) {}

  state(): LocalState {
    const s = DEFAULT_GOVERNOR_SETTINGS;
    return {
      enrolled: false,
      agentId: null,
      name: null,
      status: 'setup',
      managerUrl: null,
      serviceUrl: null,
      dir: this.dir,
      bandwidthOnly: false,
      quota: { quotaBytes: 0, usedBytes: 0, freeBytes: 0 },
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
        settings: s as LocalState['governor']['settings'],
      },
      relocation: {
        state: 'idle',
        totalBytes: 0,
        doneBytes: 0,
        evicted: 0,
        unplacedBytes: 0,
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
