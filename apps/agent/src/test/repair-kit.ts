import {
  donorsOfMorsel,
  morselCount,
  type AgentView,
  type DatasetMap,
  type FailureClass,
} from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { internalsOf, waitFor, type TestManager } from './cluster-harness.js';

/** Test helpers for repair (issue 15): copies per morsel, failure classes, raw queue rows. */
export interface RepairKit {
  /** Wanted copies of a dataset, set directly (no route changes n): repair makes the rest. */
  setReplicas(datasetId: string, n: number): Promise<void>;
  /** Donors of each morsel over every copy, from the read map. */
  copies(datasetId: string): Promise<string[][]>;
  /** Wait until every morsel has `n` copies on distinct donors, none of them in `avoid`. */
  waitForCopies(
    datasetId: string,
    n: number,
    avoid?: readonly string[],
    timeoutMs?: number,
  ): Promise<string[][]>;
  failureClass(agentId: string): Promise<FailureClass | undefined>;
  waitForClass(agentId: string, cls: FailureClass, timeoutMs?: number): Promise<AgentView>;
  /** One SQL query on the manager's database (arranging state no route makes, and checks). */
  query<R extends Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

/**
 * The kit over an in-process test manager.
 *
 * @example const k = repairKit(c.tm); await k.setReplicas(id, 2); await k.waitForCopies(id, 2);
 */
export function repairKit(tm: TestManager): RepairKit {
  return repairKitOver({
    admin: () => tm.admin,
    query: async (sql, params = []) => {
      const pg = internalsOf(tm.manager).pg as unknown as {
        query(sql: string, params: unknown[]): Promise<{ rows: never[] }>;
      };
      return (await pg.query(sql, params)).rows;
    },
  });
}

/** The kit over any manager: an admin client (looked up per call) and its database. */
export function repairKitOver(m: {
  admin: () => ManagerClient;
  query: RepairKit['query'];
}): RepairKit {
  const query = m.query;
  const tm = {
    get admin() {
      return m.admin();
    },
    agents: () => m.admin().request<AgentView[]>('GET', '/agents'),
  };
  const copies = async (datasetId: string): Promise<string[][]> => {
    const map = await tm.admin.request<DatasetMap>('GET', `/datasets/${datasetId}/map`);
    const n = morselCount(map.dataset.cachedBytes, map.dataset.morselSize);
    return Array.from({ length: n }, (_, m) => donorsOfMorsel(map.extents, m));
  };
  const failureClass = async (agentId: string) =>
    (await tm.agents()).find((a) => a.id === agentId)?.failureClass;
  return {
    async setReplicas(datasetId, n) {
      await query('UPDATE datasets SET replicas = $2 WHERE id = $1', [datasetId, n]);
    },
    copies,
    waitForCopies: (datasetId, n, avoid = [], timeoutMs = 120_000) =>
      waitFor(
        `every morsel of ${datasetId} to have ${n} copies on distinct donors`,
        async () => {
          const all = await copies(datasetId);
          const ok = all.every(
            (ds) => ds.length === n && new Set(ds).size === n && !ds.some((d) => avoid.includes(d)),
          );
          return ok ? all : undefined;
        },
        timeoutMs,
        250,
      ),
    failureClass,
    waitForClass: (agentId, cls, timeoutMs = 60_000) =>
      waitFor(
        `agent ${agentId} to be ${cls}`,
        async () => (await tm.agents()).find((a) => a.id === agentId && a.failureClass === cls),
        timeoutMs,
        100,
      ),
    query,
  };
}
