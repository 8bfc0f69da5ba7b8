import {
  FreeLoaderError,
  LOGIN_FAILURES_PER_ADDRESS,
  LOGIN_FAILURES_PER_USER,
  LOGIN_WINDOW_S,
} from '@freeloader/protocol';
import type { LoginFailuresRepo } from '../repositories/login-failures.js';

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

/** Failures counted between two prunes of ended windows (a name scan must not grow the table). */
const PRUNE_EVERY_FAILURES = 1_000;

/**
 * Slows password guessing: failed logins are counted per client address and per user name in
 * fixed windows (a window starts at the first failure and lasts `windowMs`). Once a key has
 * used up its failures, every login attempt for it gets 429 RATE_LIMITED with the seconds until
 * the window ends, right or wrong password, so guessing stops paying. The per-user limit is
 * the higher one: a guesser at one address locks out that address, not the user, who still
 * logs in from elsewhere. Counts live in the database (`login_failures`), so several managers
 * on one database share them: spreading guesses over managers does not multiply the rate, and
 * a manager restart forgets nothing. (Attempts in flight at once are all let through before the
 * first of them fails: the slack is the concurrency of one guesser, as it was in memory.)
 *
 * @example
 *   const t = new LoginThrottle(createLoginFailuresRepo(pool), { perAddress: 2, perUser: 5, windowMs: 60_000 });
 *   await t.failed('ada', '10.0.0.9'); await t.failed('ada', '10.0.0.9');
 *   await t.check('ada', '10.0.0.9');  // throws RATE_LIMITED, details.retryAfterS === 60
 *   await t.check('ada', '10.0.0.7');  // passes: another address, the user's count is 2 of 5
 */
export class LoginThrottle {
  private failuresSincePrune = 0;

  constructor(
    private readonly store: Pick<LoginFailuresRepo, 'live' | 'count' | 'pruneEnded'>,
    private readonly limits: LoginThrottleLimits = LOGIN_LIMITS,
  ) {}

  /** Throw RATE_LIMITED when this user name or this address has no failures left. */
  async check(username: string, address: string): Promise<void> {
    const [addr, user] = keysOf(username, address);
    const live = await this.store.live([addr, user]);
    const blockedFor = (key: string, limit: number): number => {
      const w = live.get(key);
      return w && w.failures >= limit ? w.leftMs : 0;
    };
    const wait = Math.max(
      blockedFor(addr, this.limits.perAddress),
      blockedFor(user, this.limits.perUser),
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
  async failed(username: string, address: string): Promise<void> {
    await this.store.count(keysOf(username, address), this.limits.windowMs);
    if (++this.failuresSincePrune >= PRUNE_EVERY_FAILURES) {
      this.failuresSincePrune = 0;
      await this.store.pruneEnded();
    }
  }
}

/** The throttled keys of one attempt: its address and its user name (case-folded). */
function keysOf(username: string, address: string): [string, string] {
  return [`addr ${address}`, `user ${username.toLowerCase()}`];
}
