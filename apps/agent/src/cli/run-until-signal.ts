/** Signals that end a long-running command; SIGHUP arrives when its terminal closes. */
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Keep a long-running command alive until SIGINT, SIGTERM or SIGHUP, then run `stop` once. A
 * second signal while stopping exits at once, so a stuck shutdown never traps the user.
 */
export function runUntilSignal(stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        console.error(`\n${signal} again: exiting now`);
        process.exit(130);
      }
      stopping = true;
      console.error(`\n${signal}: stopping…`);
      stop()
        .catch((e: unknown) => console.error(`error while stopping: ${String(e)}`))
        .finally(() => {
          for (const s of SIGNALS) process.off(s, onSignal);
          resolve();
        });
    };
    for (const s of SIGNALS) process.on(s, onSignal);
  });
}
