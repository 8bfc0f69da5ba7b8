import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveIdentity } from '../../state/identity.js';
import { describePlacement, parseShare, policyFields } from './import-policy.js';

const ID = '0f0e0d0c-0b0a-4908-8706-050403020100';
let agentDir: string;

beforeAll(async () => {
  agentDir = await mkdtemp(join(tmpdir(), 'fl-cli-host-'));
  await saveIdentity(agentDir, {
    agentId: ID,
    credential: 'secret',
    managerUrl: 'http://127.0.0.1:7400',
    managerPublicKey: 'pem',
    name: 'ws-1',
    enrolledAt: new Date().toISOString(),
  });
});
afterAll(async () => {
  await rm(agentDir, { recursive: true, force: true });
});

describe('import --policy / --host / --local-share', () => {
  it.each<[string, Record<string, string>, Record<string, unknown>]>([
    ['nothing: the manager decides', {}, {}],
    ['predictive', { policy: 'predictive' }, { policy: 'predictive' }],
    ['host by id implies asymmetric', { host: ID.toUpperCase() }, { hostAgentId: ID }],
    [
      'host by agent directory',
      { policy: 'asymmetric', host: 'DIR' },
      { policy: 'asymmetric', hostAgentId: ID },
    ],
    ['a 3:8 ratio', { host: ID, localShare: '3:8' }, { hostAgentId: ID, localShare: 3 / 11 }],
    ['a fraction', { host: ID, localShare: '0.4' }, { hostAgentId: ID, localShare: 0.4 }],
  ])('%s', async (_, raw, want) => {
    const opts = Object.fromEntries(
      Object.entries(raw).map(([k, v]) => [k, v === 'DIR' ? agentDir : v]),
    );
    expect(await policyFields(opts)).toEqual(want);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'an unknown policy',
      { policy: 'fastest' },
      /must be one of round-robin, predictive, asymmetric/,
    ],
    ['asymmetric without a host', { policy: 'asymmetric' }, /needs --host/],
    [
      'a host with another policy',
      { policy: 'predictive', host: ID },
      /go with --policy asymmetric/,
    ],
    ['a directory that is no agent', { host: '/nonexistent' }, /no identity in \/nonexistent/],
  ])('rejects %s', async (_, opts, message) => {
    await expect(policyFields(opts)).rejects.toThrow(message);
  });

  it.each(['1.5', '-0.1', 'x', '', '3:'])('rejects --local-share %j', (text) => {
    expect(() => parseShare(text)).toThrow(/--local-share/);
  });

  it('describes the placement the manager chose', () => {
    expect(
      describePlacement({
        width: 8,
        stripeSize: 1,
        morsels: 10,
        donors: 9,
        policy: 'asymmetric',
        localShare: 0.25,
        reason: 'r',
      }),
    ).toBe('placement: asymmetric over 9 donor(s), 25.0 % on the host — r');
    expect(describePlacement(undefined)).toBeNull();
  });
});
