import { describe, expect, it } from 'vitest';
import { FreeLoaderError } from '@freeloader/protocol';
import { PatchBuffer } from './patch-buffer.js';

const morsel = (n: number) => ({ data: Buffer.alloc(n, 1), sha256: 'x'.repeat(64) });
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: FreeLoaderError) => e.code,
  );

describe('PatchBuffer', () => {
  it('hands a morsel to a reader that asked before it arrived', async () => {
    const b = new PatchBuffer();
    const waiting = b.take(3, 1000);
    b.put(3, morsel(10));
    expect((await waiting).data.length).toBe(10);
    expect(b.bytes).toBe(10);
    b.release(3);
    expect(b.bytes).toBe(0);
  });

  it.each([
    ['served already', (b: PatchBuffer) => (b.put(1, morsel(1)), b.release(1)), 'MORSEL_GONE'],
    ['never arrives', () => undefined, 'TIMEOUT'],
    [
      'the session failed',
      (b: PatchBuffer) => b.fail(new FreeLoaderError('SOURCE_CHANGED', 'changed')),
      'SOURCE_CHANGED',
    ],
  ])('refuses a morsel that was %s', async (_name, arrange, expected) => {
    const b = new PatchBuffer();
    arrange(b);
    expect(await code(b.take(1, 20))).toBe(expected);
  });

  it('wakes waiting readers when the session fails', async () => {
    const b = new PatchBuffer();
    const waiting = code(b.take(5, 5000));
    b.fail(new FreeLoaderError('SOURCE_CHANGED', 'changed'));
    expect(await waiting).toBe('SOURCE_CHANGED');
  });
});
