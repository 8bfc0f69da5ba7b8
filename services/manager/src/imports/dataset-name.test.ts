import { describe, expect, it } from 'vitest';
import { defaultDatasetName } from './dataset-name.js';

describe('defaultDatasetName', () => {
  it.each([
    ['https://h/data/tas.nc', 'tas.nc'],
    ['https://h/data/tas%201.nc?x=1#y', 'tas 1.nc'],
    ['http://h/a/b/', 'b'],
    ['file:///srv/x.bin', 'x.bin'],
  ])('%s → %s', (uri, name) => expect(defaultDatasetName(uri)).toBe(name));

  it.each(['https://h/', 'https://h', 'https://h/%2e%2e', 'not a uri'])(
    'asks for a name for %s',
    (uri) => expect(() => defaultDatasetName(uri)).toThrow(/pass a name/),
  );
});
