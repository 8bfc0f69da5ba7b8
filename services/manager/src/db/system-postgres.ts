import pg from 'pg';

/**
 * Where the machine's own PostgreSQL may be (127.0.0.1:5432, trust auth, database `test`, as CI
 * and developers have it), `SYSTEM_DATABASE_URL` first.
 */
const CANDIDATES = [
  process.env.SYSTEM_DATABASE_URL,
  'postgres://postgres@127.0.0.1:5432/test',
  'postgres://root@127.0.0.1:5432/test',
].filter((u): u is string => !!u);

/** The first reachable system PostgreSQL, or why none is (passwords masked). */
export async function systemPostgres(): Promise<{ url?: string; reason: string }> {
  const reasons: string[] = [];
  for (const url of CANDIDATES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return { url, reason: '' };
    } catch (e) {
      reasons.push(`${url.replace(/:[^:@/]*@/, ':***@')}: ${(e as Error).message}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return { reason: reasons.join('; ') };
}
