import {
  FreeLoaderError,
  MAX_REPLICAS,
  type ImportRequest,
  type ImportResponse,
} from '@freeloader/protocol';

export interface ReplicaOptions {
  replicas?: string;
  availability?: string;
}

/**
 * The copy-count fields of an import request from `--replicas N` (1…MAX_REPLICAS) or
 * `--availability P` (0 < P < 1, turned into N by the manager); not both.
 *
 * @example replicaFields({ replicas: '3' })        // → { replicas: 3 }
 *          replicaFields({ availability: '0.999' }) // → { availability: 0.999 }
 */
export function replicaFields(opts: ReplicaOptions): Partial<ImportRequest> {
  if (opts.replicas !== undefined && opts.availability !== undefined) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      '--replicas and --availability exclude each other: give a copy count or a target',
    );
  }
  if (opts.replicas !== undefined) {
    const n = Number(opts.replicas.trim());
    if (!Number.isInteger(n) || n < 1 || n > MAX_REPLICAS || opts.replicas.trim() === '') {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `--replicas must be a whole number from 1 to ${MAX_REPLICAS}, not "${opts.replicas}"`,
      );
    }
    return { replicas: n };
  }
  if (opts.availability !== undefined) {
    const p = Number(opts.availability.trim());
    if (!(p > 0 && p < 1) || opts.availability.trim() === '') {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `--availability must be a probability between 0 and 1 (e.g. 0.999), not "${opts.availability}"`,
      );
    }
    return { availability: p };
  }
  return {};
}

/**
 * One line about the copies an import got, e.g. "copies: 2 — manager default (REPLICAS_DEFAULT=2)"
 * or "copies: 1 of 2 placed (too few donors with room; the dataset is under-replicated)".
 */
export function describeCopies(plan: ImportResponse['plan'] | undefined): string | null {
  if (plan?.replicas === undefined) return null;
  const placed = plan.placedCopies ?? plan.replicas;
  const head =
    placed < plan.replicas
      ? `copies: ${placed} of ${plan.replicas} placed (too few donors with room; the dataset is under-replicated until repair adds the rest)`
      : `copies: ${plan.replicas}`;
  return `${head}${plan.replicasReason ? ` — ${plan.replicasReason}` : ''}`;
}
