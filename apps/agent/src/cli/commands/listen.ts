import { FreeLoaderError } from '@freeloader/protocol';

/**
 * Parse `host:port` (IPv6 in brackets) for a listener; `flag` names the option in the error.
 *
 * @example parseListen('0.0.0.0:7401') → { host: '0.0.0.0', port: 7401 }
 */
export function parseListen(text: string, flag = '--listen'): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new FreeLoaderError('VALIDATION_FAILED', `${flag} must be HOST:PORT, got "${text}"`);
  }
  return { host: (m[1] ?? m[2])!, port };
}
