import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Bytes, Timestamp, Uuid } from './common.js';
import { ImportJobPayload } from './imports.js';
import { JOB_CURSOR_MAX_CHARS } from '../limits.js';
import { RelocateJobPayload } from './relocation.js';
import { RepairJobPayload } from './repair.js';

export const JobKind = Type.Union([
  Type.Literal('import'),
  Type.Literal('patch'),
  Type.Literal('delete'),
  Type.Literal('relocate'),
  Type.Literal('repair'),
]);
export type JobKind = Static<typeof JobKind>;

export const JobState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('done'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type JobState = Static<typeof JobState>;

/** What every job carries, whatever its kind. */
const jobFields = {
  id: Uuid,
  state: JobState,
  datasetId: Type.Union([Uuid, Type.Null()]),
  agentId: Type.Union([Uuid, Type.Null()]),
  doneBytes: Bytes,
  totalBytes: Bytes,
  error: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer({ minimum: 0 }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

/**
 * Payload of a `delete` job: drop the dataset's morsels on this donor, or with `fromMorsel` only
 * the tail from that morsel on (a trim, or an abandoned prefix extension).
 */
export const DeleteJobPayload = Type.Object({
  datasetId: Uuid,
  fromMorsel: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Only these morsels (copies made surplus by repair: the donor came back or left). */
  morsels: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
});
export type DeleteJobPayload = Static<typeof DeleteJobPayload>;

/** Payload of a `patch` job: no agent runs these yet, so its instructions are open. */
export const PatchJobPayload = Type.Record(Type.String(), Type.Unknown());
export type PatchJobPayload = Static<typeof PatchJobPayload>;

/** The view of a job of one kind: the common fields, the kind, and that kind's payload. */
function jobViewOf<K extends string, P extends TSchema>(kind: K, payload: P) {
  return Type.Object({ ...jobFields, kind: Type.Literal(kind), payload });
}

export const ImportJobView = jobViewOf('import', ImportJobPayload);
export type ImportJobView = Static<typeof ImportJobView>;

export const DeleteJobView = jobViewOf('delete', DeleteJobPayload);
export type DeleteJobView = Static<typeof DeleteJobView>;

export const RelocateJobView = jobViewOf('relocate', RelocateJobPayload);
export type RelocateJobView = Static<typeof RelocateJobView>;

export const RepairJobView = jobViewOf('repair', RepairJobPayload);
export type RepairJobView = Static<typeof RepairJobView>;

export const PatchJobView = jobViewOf('patch', PatchJobPayload);
export type PatchJobView = Static<typeof PatchJobView>;

/**
 * A job as the manager hands it out: one schema per kind, so a handler narrows on `kind` and
 * gets its payload typed (no casts between the queue and the code that runs the job).
 */
export const JobView = Type.Union([
  ImportJobView,
  DeleteJobView,
  RelocateJobView,
  RepairJobView,
  PatchJobView,
]);
export type JobView = Static<typeof JobView>;
/** The job of one kind. */
export type JobOfKind<K extends JobKind> = Extract<JobView, { kind: K }>;

/**
 * What the job routes answer with: a {@link JobView} of its kind, or, for a payload its kind's
 * schema does not describe (a row written by an older manager, a test's bare job), the job with
 * its payload as stored. The agent that claims such a job fails that one job; without this
 * last member the response could not be written and every claim of that agent would fail.
 */
export const JobViewResponse = Type.Union([
  ...JobView.anyOf,
  Type.Object({ ...jobFields, kind: JobKind, payload: Type.Record(Type.String(), Type.Unknown()) }),
]);

export const JobClaimRequest = Type.Object({
  kinds: Type.Optional(Type.Array(Type.String())),
  max: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
  /** First claim after the agent restarted: also return the jobs it was running. */
  resume: Type.Optional(Type.Boolean()),
});

/**
 * The agent's job channel, `GET /jobs/wait`: held by the manager until a job is queued for the
 * agent or JOB_WAIT_MS pass. `cursor` is the one the previous answer carried: a job announced
 * after it answers at once, so nothing announced between two waits is missed. `check` (and a
 * cursor the manager cannot judge: none, another manager's, a restarted one's) makes the
 * manager look in the jobs table before it holds the request.
 */
export const JobWaitQuery = Type.Object({
  check: Type.Optional(Type.Boolean()),
  cursor: Type.Optional(Type.String({ maxLength: JOB_CURSOR_MAX_CHARS })),
});
export type JobWaitQuery = Static<typeof JobWaitQuery>;

/**
 * `jobsPending`: claim now (POST /jobs/claim); false: nothing new, wait again. `cursor`: send it
 * with the next wait (opaque).
 */
export const JobWaitResponse = Type.Object({
  jobsPending: Type.Boolean(),
  cursor: Type.String({ maxLength: JOB_CURSOR_MAX_CHARS }),
});
export type JobWaitResponse = Static<typeof JobWaitResponse>;

export const JobProgress = Type.Object({
  doneBytes: Bytes,
  /** Bytes/s over the last report interval. */
  rate: Type.Optional(Type.Number({ minimum: 0 })),
  /** Hashes of morsels stored since the last report (import jobs). */
  hashes: Type.Optional(
    Type.Array(
      Type.Object({
        index: Type.Integer({ minimum: 0 }),
        sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
      }),
      { maxItems: 8192 },
    ),
  ),
  /** Per-donor bytes stored so far (stream imports distribute to several donors). */
  perDonor: Type.Optional(Type.Record(Type.String(), Bytes)),
});
export type JobProgress = Static<typeof JobProgress>;

export const JobFinish = Type.Object({
  state: Type.Union([Type.Literal('done'), Type.Literal('failed')]),
  error: Type.Optional(Type.String({ maxLength: 2000 })),
  errorCode: Type.Optional(Type.String({ maxLength: 64 })),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
export type JobFinish = Static<typeof JobFinish>;
