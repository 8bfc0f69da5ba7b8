import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.js';

/**
 * What an agent measured about its workstation when it joined (bytes/s): how fast it reads its
 * own disk (the local I/O rate thpt_l asymmetric striping needs), and how fast it downloads from
 * and uploads to the manager (its network link). Null when a measurement was not possible.
 */
export const AgentDiagnostics = Type.Object({
  diskReadRate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  /** True when the disk read could not bypass the page cache (the rate is then optimistic). */
  diskCached: Type.Optional(Type.Boolean()),
  downloadRate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  uploadRate: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  measuredAt: Timestamp,
});
export type AgentDiagnostics = Static<typeof AgentDiagnostics>;

/** Largest probe the manager serves or accepts in one diagnostics request (bytes). */
export const MAX_DIAGNOSTIC_PROBE_BYTES = 64 * 1024 * 1024;
