import { Readable } from 'node:stream';
import { FreeLoaderError } from '@freeloader/protocol';

/** What a test's serving governor does to GET bodies. */
export type TestGovernorState = 'idle' | 'paused' | 'capped';

/**
 * A stand-in for the serving governor's `pace`, for service tests: `idle` passes bodies as they
 * are, `paused` refuses (503 UNAVAILABLE), `capped` turns a buffer into a two-piece stream.
 *
 * @example buildMorselService({ ..., pace: testPace(() => governor) })
 */
export function testPace(state: () => TestGovernorState) {
  return (body: Buffer | Readable): Buffer | Readable => {
    const s = state();
    if (s === 'paused') throw new FreeLoaderError('UNAVAILABLE', 'owner paused');
    if (s === 'capped' && Buffer.isBuffer(body)) {
      return Readable.from([body.subarray(0, 100), body.subarray(100)]);
    }
    return body;
  };
}
