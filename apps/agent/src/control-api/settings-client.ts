import { FreeLoaderError } from '@freeloader/protocol';
import type { LocalState, PauseRequest, SettingsPatch } from './local-api.js';

/**
 * A client of the agent's local settings API (the tray, tests, scripts).
 *
 * @example
 *   const s = new SettingsClient('http://127.0.0.1:7402/', token);
 *   await s.pause('1h'); (await s.state()).governor.state // 'paused'
 */
export class SettingsClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** Parse the `settings at http://…/#token=…` line `freeloader agent` prints. */
  static fromOpenUrl(openUrl: string): SettingsClient {
    const u = new URL(openUrl);
    const token = new URLSearchParams(u.hash.slice(1)).get('token');
    if (!token) throw new FreeLoaderError('VALIDATION_FAILED', 'the settings URL has no token');
    u.hash = '';
    return new SettingsClient(u.toString(), token);
  }

  state(): Promise<LocalState> {
    return this.call('GET', 'api/state');
  }

  update(patch: SettingsPatch): Promise<LocalState> {
    return this.call('PATCH', 'api/settings', patch);
  }

  pause(span: PauseRequest['span']): Promise<LocalState> {
    return this.call('POST', 'api/pause', { span });
  }

  resume(): Promise<LocalState> {
    return this.call('POST', 'api/resume');
  }

  /** Report owner input: 0 = the owner just used the machine. */
  async reportIdle(idleMs: number): Promise<void> {
    await this.call('POST', 'api/owner-activity', { idleMs: Math.round(idleMs) });
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status === 204) return undefined as T;
    const json: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw FreeLoaderError.fromResponse(res.status, json);
    return json as T;
  }
}
