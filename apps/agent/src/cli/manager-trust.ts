import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { caFingerprint, FreeLoaderError } from '@freeloader/protocol';
import { fetchManagerCa, pinManagerCa } from '../manager-tls.js';
import { localManagerCaPath } from './paths.js';

/** What `freeloader login` knows before it trusts a manager's CA. */
export interface TrustInputs {
  /** `--ca-fingerprint` / FREELOADER_CA_FINGERPRINT: the admin's word, checked exactly. */
  fingerprint?: string;
  /** The CA the saved session pinned for this manager, if any. */
  savedCa?: string;
  /** Ask the person at the terminal (absent: no terminal, refuse instead). */
  ask?: (question: string) => Promise<string>;
}

/**
 * The CA `freeloader login` pins for an https:// manager. With a fingerprint the manager must
 * show exactly that CA. Without one, a CA this user already trusts is taken silently (the one
 * pinned by an earlier login, or the local manager's own under $FREELOADER_HOME); any other is
 * shown by fingerprint and trusted only when the person at the terminal says yes (trust on
 * first use, as ssh does). Without a terminal it is refused with the fingerprint to check.
 *
 * @example const ca = await learnManagerCa('https://m:7400', { fingerprint: 'sha256:3f1c…' });
 */
export async function learnManagerCa(baseUrl: string, inputs: TrustInputs): Promise<string> {
  if (inputs.fingerprint) return pinManagerCa(baseUrl, inputs.fingerprint);
  const { caPem, fingerprint } = await fetchManagerCa(baseUrl);
  const localCa = await readFile(localManagerCaPath(), 'utf8').catch(() => undefined);
  for (const known of [inputs.savedCa, localCa]) {
    if (known && caFingerprint(known) === fingerprint) return caPem;
  }
  const advice =
    `compare it with the fingerprint the manager prints at start (or that its join tokens ` +
    `end with), then pass --ca-fingerprint ${fingerprint}`;
  if (!inputs.ask) {
    throw new FreeLoaderError(
      'CA_UNTRUSTED',
      `the manager at ${baseUrl} has CA fingerprint ${fingerprint}, which this CLI has not ` +
        `trusted before; ${advice}`,
      { actual: fingerprint },
    );
  }
  const answer = await inputs.ask(
    `The manager at ${baseUrl} presents CA fingerprint\n  ${fingerprint}\n` +
      `Trust it only if it matches the one its admin gives you. Trust it? [y/N] `,
  );
  if (!/^y(es)?$/i.test(answer.trim())) {
    throw new FreeLoaderError('CA_UNTRUSTED', `not trusting the manager at ${baseUrl}; ${advice}`, {
      actual: fingerprint,
    });
  }
  return caPem;
}

/** A yes/no question on the terminal, or undefined when stdin or stderr is not one. */
export function terminalQuestion(): ((question: string) => Promise<string>) | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  };
}
