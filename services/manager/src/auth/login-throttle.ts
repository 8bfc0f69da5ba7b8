import {
  FreeLoaderError,
  LOGIN_FAILURES_PER_ADDRESS,
  LOGIN_FAILURES_PER_USER,
  LOGIN_WINDOW_S,
} from '@freeloader/protocol';

interface Window {
  /** When this window ends (ms, the throttle's clock). */
  endsAt: number;
  failures: number;
}

export interface LoginThrottleLimits {
  perAddress: number;
  perUser: number;
  windowMs: number;
}

/** The manager's limits (see limits.ts). */
export const LOGIN_LIMITS: LoginThrottleLimits = {
  perAddress: LOGIN_FAILURES_PER_ADDRESS,
  perUser: LOGIN_FAILURES_PER_USER,
  windowMs: LOGIN_WINDOW_S * 1000,
};

/**
 * Slows password guessing: failed logins are counted per client address and per user name in
 * fixed windows (a window starts at the first failure and lasts `windowMs`). Once a key has
 * used up its failures, every login attempt for it gets 429 RATE_LIMITED with the seconds until
 * the window ends, right or wrong password, so guessing stops paying. The per-user limit is
 * the higher one: a guesser at one address locks out that address, not the user, who still
 * logs in from elsewhere. Counts live in this manager's memory (a restart forgets them).
 *
 * @example
 *   const t = new LoginThrottle({ perAddress: 2, perUser: 5, windowMs: 60_000 }, () => now);
 *   t.failed('ada', '10.0.0.9'); t.failed('ada', '10.0.0.9');
 *   t.check('ada', '10.0.0.9');  // throws RATE_LIMITED, details.retryAfterS === 60
 *   t.check('ada', '10.0.0.7');  // passes: another address, the user's count is 2 of 5
 */
export class LoginThrottle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limits: LoginThrottleLimits = LOGIN_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Throw RATE_LIMITED when this user name or this address has no failures left. */
  check(username: string, address: string): void {
    const wait = Math.max(
      this.blockedFor(`addr ${address}`, this.limits.perAddress),
      this.blockedFor(`user ${username.toLowerCase()}`, this.limits.perUser),
    );
    if (wait > 0) {
      const retryAfterS = Math.ceil(wait / 1000);
      throw new FreeLoaderError(
        'RATE_LIMITED',
        `too many failed logins; try again in ${retryAfterS} s`,
        { retryAfterS },
      );
    }
  }

  /** Count a failed login against the address and the user name. */
  failed(username: string, address: string): void {
    this.count(`addr ${address}`);
    this.count(`user ${username.toLowerCase()}`);
  }

  private blockedFor(key: string, limit: number): number {
    const w = this.live(key);
    return w && w.failures >= limit ? w.endsAt - this.now() : 0;
  }

  private count(key: string): void {
    const w = this.live(key);
    if (w) w.failures++;
    else this.windows.set(key, { endsAt: this.now() + this.limits.windowMs, failures: 1 });
    this.sweep();
  }

  private live(key: string): Window | undefined {
    const w = this.windows.get(key);
    if (w && w.endsAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  /** Drop ended windows now and then, so a scan of many names cannot grow the map forever. */
  private sweep(): void {
    if (this.windows.size < 10_000) return;
    const now = this.now();
    for (const [k, w] of this.windows) if (w.endsAt <= now) this.windows.delete(k);
  }
}
