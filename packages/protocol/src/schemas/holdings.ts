import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { DatasetState } from './datasets.js';

/**
 * `GET /api/v1/agents/me/datasets`: what the manager's placement says this agent holds, so an
 * agent can reconcile its store at startup (drop what is not listed, report what is missing).
 */
export const AgentHolding = Type.Object({
  /** Dataset id. */
  id: Uuid,
  /** The dataset's state: `deleting` and `failed` ones are to be freed. */
  state: DatasetState,
  morselSize: Type.Integer({ minimum: 1 }),
  /** Morsel indices placed on this agent, ascending, every copy merged. */
  morsels: Type.Array(Type.Integer({ minimum: 0 })),
});
export type AgentHolding = Static<typeof AgentHolding>;

export const AgentHoldings = Type.Object({ datasets: Type.Array(AgentHolding) });
export type AgentHoldings = Static<typeof AgentHoldings>;
