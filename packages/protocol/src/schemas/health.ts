import { Type, type Static } from '@sinclair/typebox';

/** `GET /api/v1/health`: answers without auth so probes and the CLI can tell the manager is up. */
export const HealthResponse = Type.Object({
  ok: Type.Literal(true),
  version: Type.String(),
});
export type HealthResponse = Static<typeof HealthResponse>;
