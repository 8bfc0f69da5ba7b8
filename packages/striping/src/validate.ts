import { FreeLoaderError } from '@freeloader/protocol';

/** A morsel count must be a safe integer ≥ 0. */
export function checkCount(what: string, morsels: number): void {
  if (!Number.isSafeInteger(morsels) || morsels < 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', `${what}: morsels must be ≥ 0, got ${morsels}`);
  }
}

/** Donor ids unique, free space a safe integer ≥ 0. */
export function checkDonors(
  what: string,
  donors: readonly { id: string; freeMorsels: number }[],
): void {
  const seen = new Set<string>();
  for (const d of donors) {
    if (seen.has(d.id)) {
      throw new FreeLoaderError('VALIDATION_FAILED', `${what}: donor ${d.id} listed twice`);
    }
    seen.add(d.id);
    if (!Number.isSafeInteger(d.freeMorsels) || d.freeMorsels < 0) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `${what}: donor ${d.id} free space must be ≥ 0 morsels, got ${d.freeMorsels}`,
      );
    }
  }
}

/** The one NO_SPACE error every placement throws, before planning anything. */
export function noSpace(needed: number, available: number): never {
  throw new FreeLoaderError(
    'NO_SPACE',
    `cannot place ${needed} morsels: donors have ${available} morsels free in total`,
    { needed, available },
  );
}
