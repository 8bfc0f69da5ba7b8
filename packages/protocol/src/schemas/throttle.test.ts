import { Value } from '@sinclair/typebox/value';
import '../formats.js';
import { describe, expect, it } from 'vitest';
import { MAX_THROTTLE_REASON_LENGTH, MAX_THROTTLE_REASONS } from '../limits.js';
import { AgentView, Heartbeat } from './agents.js';
import { DonorEndpoint } from './datasets.js';
import { TransferView } from './transfers.js';
import { clampThrottleReasons } from './throttle.js';
import { isThrottled } from '../throttle-summary.js';

const uuid = '3f1c2b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f';
const now = '2026-03-02T10:00:00.000Z';
const why = { throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'], rateCap: 262_144 };

const heartbeat = { quotaBytes: 10, usedBytes: 1, freeBytes: 9, servingRate: 0 };
const agent = {
  id: uuid,
  name: 'ws-1',
  url: 'http://127.0.0.1:7401',
  state: 'live',
  bandwidthOnly: false,
  quotaBytes: 10,
  usedBytes: 1,
  freeBytes: 9,
  reservedBytes: 0,
  servingRate: 0,
  lastHeartbeatAgoMs: 5,
  enrolledAt: now,
};
const donor = { id: uuid, url: 'http://127.0.0.1:7401', state: 'live' };
const transfer = {
  jobId: uuid,
  kind: 'import',
  state: 'running',
  datasetId: uuid,
  agentId: uuid,
  doneBytes: 1,
  totalBytes: 2,
  rate: 3,
  etaSeconds: null,
  error: null,
  createdAt: now,
  updatedAt: now,
};

describe('throttle reasons on the wire', () => {
  it.each([
    ['Heartbeat', Heartbeat, heartbeat],
    ['AgentView', AgentView, agent],
    ['DonorEndpoint', DonorEndpoint, donor],
    ['TransferView', TransferView, transfer],
  ] as const)('%s carries them and survives JSON, and stays valid without them', (_, s, base) => {
    const value = { ...base, ...why };
    const back = JSON.parse(JSON.stringify(value));
    expect(Value.Check(s, back)).toBe(true);
    expect(back).toEqual(value);
    // Older agents and managers send none: still valid.
    expect(Value.Check(s, base)).toBe(true);
  });

  it.each([
    ['too many', Array.from({ length: MAX_THROTTLE_REASONS + 1 }, (_, i) => `r${i}`)],
    ['too long', ['x'.repeat(MAX_THROTTLE_REASON_LENGTH + 1)]],
    ['not strings', [42]],
  ])('a heartbeat with reasons %s is refused', (_, reasons) => {
    expect(Value.Check(Heartbeat, { ...heartbeat, throttleReasons: reasons })).toBe(false);
  });

  it('clampThrottleReasons cuts count and length to the bounds', () => {
    const many = Array.from({ length: 20 }, () => 'y'.repeat(500));
    const cut = clampThrottleReasons(many);
    expect(cut).toHaveLength(MAX_THROTTLE_REASONS);
    expect(cut.every((r) => r.length === MAX_THROTTLE_REASON_LENGTH && r.endsWith('…'))).toBe(true);
    expect(Value.Check(Heartbeat, { ...heartbeat, throttleReasons: cut })).toBe(true);
    expect(clampThrottleReasons(['cpu 0.93 > 0.75'])).toEqual(['cpu 0.93 > 0.75']);
  });

  it.each([
    ['active', true],
    ['contended', true],
    ['paused', true],
    ['idle', false],
    ['unknown', false],
    [undefined, false],
  ])('isThrottled(%s) is %s', (state, expected) => expect(isThrottled(state)).toBe(expected));
});
