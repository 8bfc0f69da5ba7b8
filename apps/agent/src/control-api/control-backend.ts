import type { EnrollLocal, LocalState, PauseRequest, SettingsPatch } from './local-api.js';

/**
 * What the control API asks of the agent behind it (a running daemon, or a setup step). Defined
 * here so the API never imports the daemon: the daemon implements it (`daemon/daemon-backend.ts`).
 */
export interface SettingsBackend {
  state(): LocalState;
  update(patch: SettingsPatch): Promise<void>;
  pause(span: PauseRequest['span']): Promise<void>;
  resume(): Promise<void>;
  /** Owner input reported by the tray (or a test simulating the owner). */
  reportIdle(idleMs: number): Promise<void>;
  /**
   * Leave the cache gracefully (the manager moves this donor's copies, then releases it);
   * resolves once the manager accepted. Only an enrolled daemon offers it.
   */
  leave?(): Promise<void>;
  /** First-run enrollment; only a backend that is not enrolled yet offers it. */
  enroll?(req: EnrollLocal): Promise<void>;
}
