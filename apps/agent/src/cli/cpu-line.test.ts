import { describe, expect, it } from 'vitest';
import { cpuLine } from './cpu-line.js';

describe('cpuLine', () => {
  it('gives the read’s CPU seconds and the same per GiB, user and system apart', () => {
    expect(cpuLine({ user: 1, system: 0.25 }, 2 ** 29)).toBe(
      'client CPU during the read 1.25 s (user 1.00, system 0.25), ' +
        '2.50 CPU-s per GiB (user 2.00, system 0.50)',
    );
  });

  it('leaves out the cost per GiB of an empty read', () => {
    expect(cpuLine({ user: 0.5, system: 0.1 }, 0)).toBe(
      'client CPU during the read 0.60 s (user 0.50, system 0.10)',
    );
  });
});
