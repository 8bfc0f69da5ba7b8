import { pino, type Logger } from 'pino';

/** Daemon logs: JSON lines on stderr (stdout stays free for data, e.g. `get -o -`). */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: ['credential', 'token', 'password', '*.credential', '*.token', '*.password'],
    },
    pino.destination(2),
  );
}
