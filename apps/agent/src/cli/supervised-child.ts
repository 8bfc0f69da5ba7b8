import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The `freeloader` entry point of this build, for running subcommands as child processes. */
export const CLI_ENTRY = fileURLToPath(new URL('./main.js', import.meta.url));

/**
 * A `freeloader` subcommand run as a child process of a supervisor (`freeloader cluster`).
 *
 * It runs in its own process group, so a terminal's Ctrl-C reaches only the supervisor, which
 * then stops its children in order (agents before the manager, the manager before its
 * PostgreSQL). Were they in the terminal's group, every process would get SIGINT at once: the
 * database would shut down under a manager still flushing to it, and the supervisor's own
 * SIGTERM would hit agents already stopping.
 */
export class SupervisedChild {
  readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    args: readonly string[],
    env: NodeJS.ProcessEnv = {},
    /** Options for node itself (before the entry point), e.g. V8 heap limits. */
    nodeFlags: readonly string[] = [],
  ) {
    this.child = spawn(process.execPath, [...nodeFlags, CLI_ENTRY, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      detached: true,
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.onLine(line));
    }
    this.child.on('exit', (code) => {
      // A clean stop is exit code 0; anything else is worth a line.
      if (code !== 0) console.error(`[${this.name}] exited (${this.exitText()})`);
      this.wake();
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last lines the child printed (for error messages). */
  tail(n = 10): string {
    return this.lines.slice(-n).join('\n');
  }

  /**
   * Resolve with the first line (seen so far or later) matching `pattern`; reject when the child
   * exits first or after `timeoutMs`.
   */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      const finish = (error?: Error, match?: RegExpExecArray): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (match) resolve(match);
        else reject(new Error(`${this.name}: ${error!.message}; its last output:\n${this.tail()}`));
      };
      const check = (): void => {
        for (const line of this.lines) {
          const m = pattern.exec(line);
          if (m) return finish(undefined, m);
        }
        if (!this.running) finish(new Error(`exited (${this.exitText()})`));
      };
      this.waiters.add(check);
      check();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
  stop(graceMs: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.kill('SIGTERM');
    });
  }

  exitText(): string {
    return this.child.signalCode ?? String(this.child.exitCode);
  }

  private onLine(line: string): void {
    this.lines.push(line);
    if (this.lines.length > 200) this.lines.shift();
    // Interleaved output of several processes stays readable with a prefix.
    console.error(`[${this.name}] ${line}`);
    this.wake();
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }
}
