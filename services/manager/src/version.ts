import { readFileSync } from 'node:fs';

/** The manager's package version, read once from package.json (one level above src/ and dist/). */
export const MANAGER_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
