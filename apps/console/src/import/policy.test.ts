import { describe, expect, it } from 'vitest';
import { EMPTY_IMPORT, toImportRequest, validateImport, type ImportFormValues } from './validate';

const HOST = '0f0e0d0c-0b0a-4908-8706-050403020100';
const form = (v: Partial<ImportFormValues>): ImportFormValues => ({
  ...EMPTY_IMPORT,
  uri: 'https://h/x.nc',
  ...v,
});

describe('placement policy in the import form', () => {
  it.each<[string, Partial<ImportFormValues>, object]>([
    ['automatic leaves it to the manager', {}, {}],
    ['round-robin', { policy: 'round-robin' }, { policy: 'round-robin' }],
    ['predictive', { policy: 'predictive' }, { policy: 'predictive' }],
    [
      'asymmetric names the host agent',
      { policy: 'asymmetric', host: ` ${HOST} ` },
      { policy: 'asymmetric', hostAgentId: HOST },
    ],
    [
      'a host without asymmetric is ignored',
      { policy: 'predictive', host: HOST },
      { policy: 'predictive' },
    ],
  ])('%s', (_, values, placement) => {
    expect(validateImport(form(values))).toEqual({});
    const req = toImportRequest(form(values), true);
    const { uri: _u, name: _n, dryRun: _d, ...rest } = req;
    expect(rest).toEqual(placement);
  });

  it.each(['', 'my-laptop'])('asymmetric refuses host %j', (host) => {
    expect(validateImport(form({ policy: 'asymmetric', host })).host).toMatch(
      /Choose the workstation/,
    );
  });
});

describe('copies in the import form', () => {
  it.each<[Partial<ImportFormValues>, object]>([
    [{}, {}],
    [{ replicas: 3 }, { replicas: 3 }],
    [{ replicas: '1' }, { replicas: 1 }],
  ])('%o → %o', (values, fields) => {
    expect(validateImport(form(values))).toEqual({});
    const { uri: _u, name: _n, dryRun: _d, ...rest } = toImportRequest(form(values), true);
    expect(rest).toEqual(fields);
  });

  it.each([0, 17, 2.5])('refuses %s copies', (replicas) => {
    expect(validateImport(form({ replicas })).replicas).toBe(
      'Copies must be a whole number from 1 to 16',
    );
  });
});
