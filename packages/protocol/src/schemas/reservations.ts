import { Type, type Static } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';

export const ReservationRequest = Type.Object({
  agentId: Uuid,
  bytes: Type.Integer({ minimum: 1 }),
  datasetId: Type.Optional(Uuid),
  /** Lifetime in seconds before an uncommitted reservation lapses (default RESERVATION_TTL_S). */
  ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 })),
});
export type ReservationRequest = Static<typeof ReservationRequest>;

export const ReservationView = Type.Object({
  id: Uuid,
  agentId: Uuid,
  datasetId: Type.Union([Uuid, Type.Null()]),
  bytes: Bytes,
  state: Type.Union([
    Type.Literal('active'),
    Type.Literal('committed'),
    Type.Literal('released'),
    Type.Literal('expired'),
  ]),
  expiresAt: Timestamp,
});
export type ReservationView = Static<typeof ReservationView>;
