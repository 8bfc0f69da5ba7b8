import { execFile, execFileSync } from 'node:child_process';

/**
 * @typedef {object} RunResult
 * @property {string} stdout
 * @property {string} stderr
 * @property {number} code exit code (0 unless `allowFail`)
 */

/**
 * Run a program (no shell) and collect its output; rejects with stderr in the message unless
 * `allowFail`, so a failing `ip`/`tc` call never goes unnoticed.
 *
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ allowFail?: boolean, timeoutMs?: number, env?: NodeJS.ProcessEnv, cwd?: string }} [opts]
 * @returns {Promise<RunResult>}
 * @example
 *   const { stdout } = await run('ip', ['netns', 'list']);
 */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      {
        maxBuffer: 64 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 0,
        env: opts.env ?? process.env,
        cwd: opts.cwd,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        if (err && !opts.allowFail) {
          const why = stderr.trim() || err.message;
          reject(new Error(`${cmd} ${args.join(' ')}: ${why}`));
          return;
        }
        resolve({ stdout, stderr, code });
      },
    );
  });
}

/**
 * Synchronous twin of {@link run} for teardown paths that must finish before the process exits
 * (signal handlers, `exit` hooks). Never throws when `allowFail`.
 *
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ allowFail?: boolean }} [opts]
 * @returns {string} stdout
 */
export function runSync(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    if (opts.allowFail) return '';
    throw e;
  }
}

/**
 * True when `cmd` is on PATH.
 *
 * @param {string} cmd
 * @returns {boolean}
 */
export function haveCommand(cmd) {
  return runSync('sh', ['-c', `command -v ${cmd}`], { allowFail: true }).trim() !== '';
}
