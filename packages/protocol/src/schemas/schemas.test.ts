import { Value } from '@sinclair/typebox/value';
import '../formats.js';
import { describe, expect, it } from 'vitest';
import { EnrollRequest, JoinTokenCreate } from './auth.js';
import { Heartbeat as HB } from './agents.js';
import { Name, NamespacePath, ErrorBodySchema } from './common.js';
import { BatchQuery, MorselParams } from './morsels.js';
import { ReservationRequest } from './reservations.js';

const uuid = '3f1c2b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f';

describe('namespace names and paths', () => {
  it.each(['tas.nc', 'climate', 'a b', 'ünïcode', '.hidden'])('accepts name %j', (n) =>
    expect(Value.Check(Name, n)).toBe(true),
  );
  it.each(['', '.', '..', 'a/b', 'x\u0000y', 'x'.repeat(256)])('rejects name %j', (n) =>
    expect(Value.Check(Name, n)).toBe(false),
  );
  it.each(['a', 'climate/cmip6/tas.nc', 'a/.b/c'])('accepts path %j', (p) =>
    expect(Value.Check(NamespacePath, p)).toBe(true),
  );
  it.each(['', '/abs', 'a//b', 'a/', 'a/../b', '..', 'a/./b', 'x\ny'])('rejects path %j', (p) =>
    expect(Value.Check(NamespacePath, p)).toBe(false),
  );
});

describe('round trips', () => {
  it.each([
    [HB, { quotaBytes: 10, usedBytes: 1, freeBytes: 9, servingRate: 0, throttle: 'idle' }],
    [
      EnrollRequest,
      { token: 't', name: 'ws-1', url: 'http://127.0.0.1:7401', quotaBytes: 1 << 30 },
    ],
    [JoinTokenCreate, { ttlSeconds: 3600, maxUses: 3 }],
    [ReservationRequest, { agentId: uuid, bytes: 1 }],
    [MorselParams, { dataset: uuid, index: 7 }],
    [BatchQuery, { from: 0, count: 64 }],
    [ErrorBodySchema, { error: { code: 'NO_SPACE', message: 'full' } }],
  ])('%# survives JSON', (schema, value) => {
    const back = JSON.parse(JSON.stringify(value));
    expect(Value.Check(schema, back)).toBe(true);
    expect(back).toEqual(value);
  });
});

describe('rejections', () => {
  it.each([
    [HB, { quotaBytes: -1, usedBytes: 0, freeBytes: 0, servingRate: 0 }],
    [HB, { quotaBytes: 1.5, usedBytes: 0, freeBytes: 0, servingRate: 0 }],
    [EnrollRequest, { token: '', name: 'x', url: 'u', quotaBytes: 1 }],
    [JoinTokenCreate, { ttlSeconds: 1 }],
    [ReservationRequest, { agentId: 'not-a-uuid', bytes: 1 }],
    [ReservationRequest, { agentId: uuid, bytes: 0 }],
    [MorselParams, { dataset: '../../etc/passwd', index: 0 }],
    [MorselParams, { dataset: uuid, index: -1 }],
    [BatchQuery, { from: 0, count: 65 }],
  ])('%# is rejected', (schema, value) => expect(Value.Check(schema, value)).toBe(false));
});
