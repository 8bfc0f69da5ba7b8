import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Uuid } from './common.js';

/**
 * `POST /api/v1/rates`: what a client observed while reading a dataset — bytes and busy seconds
 * per donor (the predictive placement learns from them) and which donors failed.
 */
export const RateReport = Type.Object({
  datasetId: Uuid,
  samples: Type.Array(
    Type.Object({ agentId: Uuid, bytes: Bytes, seconds: Type.Number({ exclusiveMinimum: 0 }) }),
    { maxItems: 1024 },
  ),
  failures: Type.Array(Type.Object({ donor: Uuid, error: Type.String({ maxLength: 64 }) }), {
    maxItems: 1024,
  }),
});
export type RateReport = Static<typeof RateReport>;

export const DonorRateView = Type.Object({
  agentId: Uuid,
  /** Decaying average of observed delivery to clients (bytes/s). */
  rate: Type.Number(),
  samples: Type.Integer(),
  failures: Type.Integer(),
});
export type DonorRateView = Static<typeof DonorRateView>;
