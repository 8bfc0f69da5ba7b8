import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { collect } from './exact-stream.js';

const chunks = (...parts: string[]): Readable => Readable.from(parts.map((p) => Buffer.from(p)));

describe('collect', () => {
  it.each([
    { parts: ['abc', 'def'], length: 6, into: undefined },
    { parts: ['abc', 'def'], length: 6, into: 6 },
    { parts: ['ab', 'c'], length: 3, into: 8 }, // a reused buffer larger than this body
  ])('$parts into a $into-byte buffer', async ({ parts, length, into }) => {
    const target = into === undefined ? undefined : Buffer.alloc(into, 0x2a);
    const out = await collect(chunks(...parts), length, target);
    expect(out.toString()).toBe(parts.join(''));
    // With a target, the result is a view of it: no new allocation per call.
    if (target) expect(out.buffer).toBe(target.buffer);
  });

  it.each([
    { parts: ['abcdef'], length: 4, into: undefined, error: /longer/ },
    { parts: ['ab'], length: 4, into: undefined, error: /short body/ },
    { parts: ['abcd'], length: 4, into: 2, error: /cannot hold/ },
  ])('refuses $parts as $length bytes (into $into)', async ({ parts, length, into, error }) => {
    const target = into === undefined ? undefined : Buffer.alloc(into);
    await expect(collect(chunks(...parts), length, target)).rejects.toThrow(error);
  });
});
