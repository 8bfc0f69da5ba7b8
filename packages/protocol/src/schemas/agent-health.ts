import { Type, type Static } from '@sinclair/typebox';
import { Bytes } from './common.js';

/**
 * `GET /v1/health` on an agent's morsel service: no auth, so clients and probes can tell a donor
 * is up. `agentId` is null until the agent has enrolled (it then refuses morsel requests with 503).
 */
export const AgentHealthResponse = Type.Object({
  ok: Type.Literal(true),
  agentId: Type.Union([Type.String(), Type.Null()]),
  usedBytes: Bytes,
  quotaBytes: Bytes,
});
export type AgentHealthResponse = Static<typeof AgentHealthResponse>;
