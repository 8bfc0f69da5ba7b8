import { describe, expect, it } from 'vitest';
import { readCommands, shellQuote } from './read-commands';

describe('shellQuote', () => {
  it.each([
    ['climate/tas_2020.nc', 'climate/tas_2020.nc'],
    ['my data/run 1.nc', "'my data/run 1.nc'"],
    ["it's.nc", "'it'\\''s.nc'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
  ])('%s → %s', (arg, quoted) => {
    expect(shellQuote(arg)).toBe(quoted);
  });
});

describe('readCommands', () => {
  it('gives the exact get and mount commands for the dataset and this manager', () => {
    expect(readCommands('climate/tas 2020.nc', 'http://lab-1:7400')).toEqual({
      login: 'freeloader login --manager http://lab-1:7400',
      get: "freeloader get 'climate/tas 2020.nc' -o 'tas 2020.nc' --manager http://lab-1:7400",
      mount: 'mkdir -p ~/freeloader && freeloader mount ~/freeloader --manager http://lab-1:7400',
      mountedPath: "~/freeloader/'climate/tas 2020.nc'",
    });
  });
});
