/**
 * The registry's key for a source: `scheme://host[:port]`, lower-case, never credentials, path
 * or query. Datasets from one server share its latency and bandwidth; `null` for a URI that
 * does not parse.
 *
 * @example sourceKey('https://user:pw@Data.Example.org:8443/a/b.nc?x=1') === 'https://data.example.org:8443'
 */
export function sourceKey(uri: string | null | undefined): string | null {
  if (!uri) return null;
  try {
    const url = new URL(uri);
    if (url.protocol === 'file:') return 'file://';
    if (!url.host) return null;
    return `${url.protocol}//${url.host}`.toLowerCase();
  } catch {
    return null;
  }
}
