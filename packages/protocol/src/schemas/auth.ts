import { Type, type Static } from '@sinclair/typebox';
import { MAX_AGENT_NAME_LENGTH } from '../limits.js';
import { Bytes, Timestamp, Uuid } from './common.js';

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('scientist')]);
export type Role = Static<typeof Role>;

export const LoginRequest = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});
export type LoginRequest = Static<typeof LoginRequest>;

export const LoginResponse = Type.Object({
  /** Bearer token for CLI use; browsers get the same session as an httpOnly cookie. */
  token: Type.String(),
  user: Type.Object({ id: Uuid, username: Type.String(), role: Role }),
  expiresAt: Timestamp,
});
export type LoginResponse = Static<typeof LoginResponse>;

export const JoinTokenCreate = Type.Object({
  /** Lifetime in seconds (default JOIN_TOKEN_TTL_S). */
  ttlSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600 })),
  /** How many agents may enroll with it (default 1). */
  maxUses: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  note: Type.Optional(Type.String({ maxLength: 200 })),
});
export type JoinTokenCreate = Static<typeof JoinTokenCreate>;

export const JoinTokenView = Type.Object({
  id: Uuid,
  note: Type.Union([Type.String(), Type.Null()]),
  maxUses: Type.Integer(),
  uses: Type.Integer(),
  expiresAt: Timestamp,
  revoked: Type.Boolean(),
  createdAt: Timestamp,
});
export type JoinTokenView = Static<typeof JoinTokenView>;

/** Returned once at creation: the secret token is never shown again. */
export const JoinTokenCreated = Type.Intersect([
  JoinTokenView,
  Type.Object({ token: Type.String() }),
]);
export type JoinTokenCreated = Static<typeof JoinTokenCreated>;

/** `GET /tls/ca`: the CA agents and the CLI pin; checked against a token's fingerprint. */
export const ManagerCaView = Type.Object({
  /** `sha256:<hex>` of the CA certificate's DER encoding. */
  fingerprint: Type.String(),
  /** The CA certificate (PEM). */
  caPem: Type.String(),
  /** Whether this manager serves HTTPS (false: plain HTTP on loopback). */
  https: Type.Boolean(),
});
export type ManagerCaView = Static<typeof ManagerCaView>;

export const EnrollRequest = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 256 }),
  name: Type.String({ minLength: 1, maxLength: MAX_AGENT_NAME_LENGTH }),
  /** Where the agent's morsel service listens, as seen by clients (`http://host:port`). */
  url: Type.String({ minLength: 1, maxLength: 512 }),
  quotaBytes: Bytes,
  /** Agent gives bandwidth (patching) but no disk. */
  bandwidthOnly: Type.Optional(Type.Boolean()),
});
export type EnrollRequest = Static<typeof EnrollRequest>;

export const EnrollResponse = Type.Object({
  agentId: Uuid,
  /** Secret the agent presents as `Authorization: Bearer <agentId>.<credential>`; store it 0600. */
  credential: Type.String(),
  /** Manager's Ed25519 public key (PEM) for verifying capabilities. */
  managerPublicKey: Type.String(),
  heartbeatIntervalMs: Type.Integer(),
});
export type EnrollResponse = Static<typeof EnrollResponse>;
