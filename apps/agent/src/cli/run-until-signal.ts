/**
 * Keep a long-running command alive until SIGINT/SIGTERM, then run `stop` once. A second signal
 * while stopping exits at once, so a stuck shutdown never traps the user.
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
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          resolve();
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
