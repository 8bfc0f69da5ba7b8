/** A repair job as channels see it: its destination, the donors it reads, whether it seeds. */
export interface ChannelJob {
  agentId: string;
  sourceAgents: readonly string[];
}

/**
 * Repair channels: a sender feeding one receiver only, that receiver fed by this sender only
 * and by one job, may take one more job queued behind the running one. The destination runs
 * its repair jobs one after the other (the agent's receive slot), so the pair still moves at
 * most b each way, and the next job starts when the last morsel of the previous one is stored
 * instead of after its commit, its finish report and a scheduler pass: that hand-over left
 * every donor of the repair benchmark idle 0.25–1.1 s between its two jobs (one per dataset),
 * a third of a 3 s repair.
 *
 * @example
 *   const ch = new RepairChannels([{ agentId: 'r', sourceAgents: ['s'] }]);
 *   ch.chainTo('s') // 'r'
 *   ch.add({ agentId: 'r', sourceAgents: ['s'] });
 *   ch.chainTo('s') // undefined: one job waits behind the running one at most
 */
export class RepairChannels {
  private readonly jobsTo = new Map<string, number>();
  private readonly sourcesTo = new Map<string, Set<string>>();
  private readonly targetsOf = new Map<string, Set<string>>();

  constructor(jobs: Iterable<ChannelJob> = []) {
    for (const j of jobs) this.add(j);
  }

  /** A job queued (or running) for `agentId`, reading from `sourceAgents` (none: the source). */
  add(job: ChannelJob): void {
    this.jobsTo.set(job.agentId, (this.jobsTo.get(job.agentId) ?? 0) + 1);
    const sources = this.sourcesTo.get(job.agentId) ?? new Set<string>();
    for (const s of job.sourceAgents) {
      sources.add(s);
      const targets = this.targetsOf.get(s) ?? new Set<string>();
      targets.add(job.agentId);
      this.targetsOf.set(s, targets);
    }
    // A job reading the source only (no sender) makes the receiver no channel's end.
    if (job.sourceAgents.length === 0) sources.add('');
    this.sourcesTo.set(job.agentId, sources);
  }

  /** The receiver a job reading only from `sender` may be queued behind, if any. */
  chainTo(sender: string): string | undefined {
    const targets = this.targetsOf.get(sender);
    if (targets?.size !== 1) return undefined;
    const [to] = targets;
    const sources = this.sourcesTo.get(to!);
    if (this.jobsTo.get(to!) !== 1 || sources?.size !== 1 || !sources.has(sender)) return undefined;
    return to;
  }
}
