/** ISO-8601 text of a timestamptz column (pg returns Date objects). */
export function iso(value: Date | string): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

/** Like {@link iso} for nullable columns. */
export function isoOrNull(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** PostgreSQL's unique_violation SQLSTATE. */
export const UNIQUE_VIOLATION = '23505';

/** True when `e` is a pg error with SQLSTATE `code`. */
export function isPgError(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}
