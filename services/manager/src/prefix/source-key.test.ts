import { describe, expect, it } from 'vitest';
import { sourceKey } from './source-key.js';

describe('sourceKey', () => {
  it.each([
    ['https://user:pw@Data.Example.org:8443/a/b.nc?x=1', 'https://data.example.org:8443'],
    ['http://127.0.0.1:4000/data.bin', 'http://127.0.0.1:4000'],
    ['http://[::1]/x', 'http://[::1]'],
    ['file:///srv/x.bin', 'file://'],
    ['not a uri', null],
    ['', null],
    [null, null],
  ])('%s → %s', (uri, key) => expect(sourceKey(uri)).toBe(key));
});
