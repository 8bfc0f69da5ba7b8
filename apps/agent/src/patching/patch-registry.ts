import type { Logger } from 'pino';
import { FreeLoaderError, MiB, type PatchSessionPlan } from '@freeloader/protocol';
import type { AdmitTransfer } from '../governor/governance.js';
import type { ManagerClient } from '../manager-client.js';
import { PeerClient } from './peer-client.js';
import { PatchSession } from './patch-session.js';
import type { SourcePolicy } from '@freeloader/sources';

/** Memory a patching node gives one session (bytes): seed 002 kept requests ≤ 256 MB for this. */
export const PATCH_BUDGET_BYTES = Number(process.env.FREELOADER_PATCH_BUDGET ?? 512 * MiB);
/** A session nobody read from or pushed to for this long is dropped (milliseconds). */
export const PATCH_IDLE_MS = Number(process.env.FREELOADER_PATCH_IDLE_MS ?? 60_000);
/** Session ids remembered after they closed, so a late shuffle does not revive one. */
const CLOSED_MEMORY = 1024;

export interface PatchRegistryDeps {
  manager: ManagerClient;
  agentId: () => string | undefined;
  log: Logger;
  allowFileUris?: boolean;
  sourcePolicy: SourcePolicy;
  budgetBytes?: number;
  idleMs?: number;
  admit?: AdmitTransfer;
}

/**
 * The patch sessions this agent takes part in. A session starts when the client (or a peer's
 * first shuffle) names it: the node then fetches the plan from the manager — the manager, not
 * the caller, decides what a node downloads — and joins the collective download.
 */
export class PatchRegistry {
  private readonly sessions = new Map<string, Promise<PatchSession>>();
  private readonly closed = new Set<string>();
  private readonly peers = new PeerClient();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly deps: PatchRegistryDeps) {
    const idle = deps.idleMs ?? PATCH_IDLE_MS;
    this.sweeper = setInterval(() => void this.sweep(idle), Math.min(idle, 5_000));
    this.sweeper.unref();
  }

  /** The running session `id` of `datasetId`, joining it first if needed. */
  ensure(datasetId: string, id: string): Promise<PatchSession> {
    if (this.closed.has(id)) {
      return Promise.reject(
        new FreeLoaderError('PATCH_SESSION_NOT_FOUND', `patch session ${id} has ended`),
      );
    }
    let s = this.sessions.get(id);
    if (!s) {
      s = this.join(datasetId, id);
      this.sessions.set(id, s);
      s.catch(() => {
        if (this.sessions.get(id) === s) this.sessions.delete(id);
      });
    }
    return s;
  }

  /** A session this node already runs, or PATCH_SESSION_NOT_FOUND. */
  async get(datasetId: string, id: string): Promise<PatchSession> {
    const s = this.sessions.get(id);
    const session = s ? await s : undefined;
    if (!session || session.plan.plan.datasetId !== datasetId) {
      throw new FreeLoaderError('PATCH_SESSION_NOT_FOUND', `no patch session ${id} here`);
    }
    return session;
  }

  async closeSession(id: string): Promise<void> {
    const s = this.sessions.get(id);
    if (s) await (await s.catch(() => undefined))?.close();
  }

  get active(): number {
    return this.sessions.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    await Promise.all(all.map(async (s) => (await s.catch(() => undefined))?.close()));
    await this.peers.close();
  }

  private async join(datasetId: string, id: string): Promise<PatchSession> {
    const me = this.deps.agentId();
    if (!me) throw new FreeLoaderError('UNAVAILABLE', 'this agent is not enrolled yet');
    const plan = await this.deps.manager.request<PatchSessionPlan>(
      'GET',
      `/patch-sessions/${id}/plan`,
    );
    if (plan.plan.datasetId !== datasetId) {
      throw new FreeLoaderError('BAD_REQUEST', `patch session ${id} is for another dataset`);
    }
    const session = new PatchSession(plan, {
      me,
      manager: this.deps.manager,
      peers: this.peers,
      log: this.deps.log,
      budgetBytes: this.deps.budgetBytes ?? PATCH_BUDGET_BYTES,
      allowFileUris: this.deps.allowFileUris,
      sourcePolicy: this.deps.sourcePolicy,
      ...(this.deps.admit ? { admit: this.deps.admit } : {}),
      onClosed: (sid) => this.forget(sid),
    });
    session.start();
    this.deps.log.info(
      { session: id, dataset: datasetId, slot: session.slot, nodes: plan.plan.nodes.length },
      'patch session joined',
    );
    return session;
  }

  private forget(id: string): void {
    this.sessions.delete(id);
    this.closed.add(id);
    if (this.closed.size > CLOSED_MEMORY) this.closed.delete(this.closed.values().next().value!);
  }

  private async sweep(idleMs: number): Promise<void> {
    const now = performance.now();
    for (const s of this.sessions.values()) {
      const session = await s.catch(() => undefined);
      if (session && now - session.lastActivity > idleMs) {
        this.deps.log.info({ session: session.id }, 'patch session idle; dropping it');
        await session.close();
      }
    }
  }
}
