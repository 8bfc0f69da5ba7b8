/**
 * The version of this agent's quota, sent with every heartbeat and quota change: the wall clock
 * in ms when the quota was last set (at start, the start), never below a version sent before.
 * The manager keeps the quota of the higher version, so a heartbeat built just before a change
 * and delivered just after it cannot put the old quota back (issue: a raise followed by an
 * import failed with NO_SPACE until the next heartbeat, 5 s later). A restart needs nothing
 * persisted: it starts later than any change it made. (A clock set back across a restart makes
 * the manager ignore heartbeat quotas until it catches up; a quota change still goes through.)
 *
 * @example const v = new QuotaVersion(() => 5); v.current // 5; v.bump() // 6 (same ms: +1)
 */
export class QuotaVersion {
  private value: number;

  constructor(private readonly clock: () => number = Date.now) {
    this.value = Math.floor(clock());
  }

  get current(): number {
    return this.value;
  }

  /** A new version for a quota being set now; above every earlier one. */
  bump(): number {
    this.value = Math.max(this.value + 1, Math.floor(this.clock()));
    return this.value;
  }
}
