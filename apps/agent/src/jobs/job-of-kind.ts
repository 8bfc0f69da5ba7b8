import { FreeLoaderError, type JobKind, type JobOfKind, type JobView } from '@freeloader/protocol';

/**
 * The claimed job as the kind its handler runs, with that kind's payload typed. The runner picks
 * handlers by kind, so only a handler registered under the wrong kind ever sees another one.
 *
 * @example const job = jobOfKind(claimed, 'import'); // job.payload: ImportJobPayload
 */
export function jobOfKind<K extends JobKind>(job: JobView, kind: K): JobOfKind<K> {
  if (!isKind(job, kind)) {
    throw new FreeLoaderError('BAD_REQUEST', `a ${kind} handler cannot run a ${job.kind} job`);
  }
  return job;
}

function isKind<K extends JobKind>(job: JobView, kind: K): job is JobOfKind<K> {
  return job.kind === kind;
}
