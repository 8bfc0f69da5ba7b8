import { FreeLoaderError } from '@freeloader/protocol';

/** Read a line from the terminal without echoing it (passwords). */
export async function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      'no terminal to ask for a password: set FREELOADER_PASSWORD',
    );
  }
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  let value = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          done();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          done();
          reject(new FreeLoaderError('BAD_REQUEST', 'cancelled'));
          return;
        }
        value = ch === '\u007f' ? value.slice(0, -1) : value + ch;
      }
    };
    const done = (): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}
