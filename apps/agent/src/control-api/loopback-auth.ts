import { timingSafeEqual } from 'node:crypto';

/*
 * Who may call the control API: a caller holding the per-run token (`state/local-token.ts`),
 * addressing the server by a loopback name.
 */

/** Constant-time check of an `Authorization: Bearer …` header against the token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer (\S+)$/.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * Only loopback host names may address the settings server: a web page elsewhere cannot use
 * DNS rebinding to reach it under its own domain name.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.replace(/:\d+$/, '');
  return name === '127.0.0.1' || name === 'localhost' || name === '[::1]';
}
