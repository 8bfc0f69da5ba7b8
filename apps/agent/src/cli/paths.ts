import { homedir } from 'node:os';
import { join } from 'node:path';

/** FreeLoader's home directory: `$FREELOADER_HOME`, else `~/.freeloader`. */
export function freeloaderHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.FREELOADER_HOME && env.FREELOADER_HOME.length > 0
    ? env.FREELOADER_HOME
    : join(homedir(), '.freeloader');
}

/** Where `freeloader login` keeps the CLI's session token (mode 0600). */
export function cliSessionPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(freeloaderHome(env), 'cli-session.json');
}

/** The local manager writes its first admin password here (mode 0600). */
export function adminPasswordPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(freeloaderHome(env), 'manager', 'admin-password');
}

/** The local manager's CA certificate (made at its first start; the CLI on its machine trusts it). */
export function localManagerCaPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(freeloaderHome(env), 'manager', 'tls', 'ca.pem');
}

export function defaultManagerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.FREELOADER_MANAGER ?? 'http://127.0.0.1:7400';
}
