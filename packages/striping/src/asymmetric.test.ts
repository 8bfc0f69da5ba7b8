import { describe, expect, it } from 'vitest';
import { MiB, TiB } from '@freeloader/protocol';
import {
  chooseLocalShare,
  placeAsymmetric,
  ratioCycle,
  spread,
  type AsymmetricInput,
} from './asymmetric.js';
import { auditCover } from './coverage.js';
import type { DonorSpace } from './round-robin.js';

const remotes = (n: number, free = 1e9): DonorSpace[] =>
  Array.from({ length: n }, (_, i) => ({ id: `r${i + 1}`, freeMorsels: free }));
const host = (freeMorsels = 1e9): DonorSpace => ({ id: 'host', freeMorsels });

/** Positions of the host's morsels, and the gaps between consecutive ones. */
function hostGaps(input: AsymmetricInput, from = 0, to = input.morsels): number[] {
  const plan = placeAsymmetric(input);
  const owner = (m: number) => {
    const e = plan.extents.find((x) => m >= x.first && m < x.first + x.count)!;
    return e.donors[(Math.floor((m - e.first) / e.unit) + e.phase) % e.donors.length];
  };
  const at: number[] = [];
  for (let m = from; m < to; m++) if (owner(m) === 'host') at.push(m);
  return at.slice(1).map((m, i) => m - at[i]!);
}

describe('chooseLocalShare', () => {
  it.each<{
    name: string;
    local: number;
    remote: number;
    hostFree: number;
    remoteFree?: number;
    share: number;
    limitedBy: string;
  }>([
    // 1 Gbit/s host: a fast local disk beside 8 × 100 Mbit/s donors (≈ 95 MB/s together).
    {
      name: 'GigE host, room for all',
      local: 60,
      remote: 95,
      hostFree: 1e6,
      share: 60 / 155,
      limitedBy: 'model',
    },
    // 100 Mbit/s host: the network caps remote reads at ≈ 11.9 MB/s, so most stays local.
    {
      name: '100 Mbit/s host',
      local: 30,
      remote: 11.9,
      hostFree: 1e6,
      share: 30 / 41.9,
      limitedBy: 'model',
    },
    {
      name: 'host short of space: reduced to what fits',
      local: 30,
      remote: 11.9,
      hostFree: 250,
      share: 0.25,
      limitedBy: 'host-space',
    },
    {
      name: 'remote donors short of space: raised',
      local: 10,
      remote: 90,
      hostFree: 1e6,
      remoteFree: 600,
      share: 0.4,
      limitedBy: 'remote-space',
    },
    {
      name: 'both short: the host takes all it can',
      local: 10,
      remote: 90,
      hostFree: 300,
      remoteFree: 600,
      share: 0.3,
      limitedBy: 'remote-space',
    },
    {
      name: 'no remote bandwidth: all local',
      local: 50,
      remote: 0,
      hostFree: 1e6,
      share: 1,
      limitedBy: 'model',
    },
  ])('$name', ({ local, remote, hostFree, remoteFree, share, limitedBy }) => {
    const got = chooseLocalShare({
      localRate: local,
      remoteRate: remote,
      morsels: 1000,
      hostFreeMorsels: hostFree,
      ...(remoteFree !== undefined ? { remoteFreeMorsels: remoteFree } : {}),
    });
    expect(got.share).toBeCloseTo(share, 9);
    expect(got.limitedBy).toBe(limitedBy);
    expect(got.target).toBeCloseTo(local / (local + remote), 9);
  });
});

describe('ratioCycle', () => {
  it.each<[string, number, number, boolean, { local: number; perRemote: number }]>([
    ["the seed's 3:8", 3 / 11, 8, false, { local: 3, perRemote: 1 }],
    ['1:1 with 4 remotes', 0.2, 4, false, { local: 1, perRemote: 1 }],
    ['0.387 over 8 remotes → 5:8', 0.387, 8, false, { local: 5, perRemote: 1 }],
    ['0.716 over 8 remotes → 20:8 … within 64 slots', 0.716, 8, false, { local: 20, perRemote: 1 }],
    ['round down when the host is full', 0.3, 8, true, { local: 17, perRemote: 5 }],
    ['all remote', 0, 8, false, { local: 0, perRemote: 1 }],
    ['all local', 1, 8, false, { local: 1, perRemote: 0 }],
    ['no remote donors', 0.4, 0, false, { local: 1, perRemote: 0 }],
  ])('%s', (_, share, remotesN, atMost, want) => {
    const got = ratioCycle(share, remotesN, 64, atMost);
    expect(got).toMatchObject(want);
    expect(got.length).toBe(got.local + got.perRemote * remotesN);
    if (atMost) expect(got.local / got.length).toBeLessThanOrEqual(share);
  });
});

describe('placeAsymmetric', () => {
  it("the seed's 3:8 ratio: one extent, 3 host slots per 11, remote donors even", () => {
    const plan = placeAsymmetric({
      morsels: 1100,
      width: 8,
      localShare: 3 / 11,
      host: host(),
      donors: remotes(8),
    });
    expect(plan.ratio).toEqual({ local: 3, remote: 8 });
    expect(plan.extents).toHaveLength(1);
    const counted = auditCover(plan.extents, 1100);
    expect(counted.get('host')).toBe(300);
    for (let i = 1; i <= 8; i++) expect(counted.get(`r${i}`)).toBe(100);
    expect(plan.localShare).toBeCloseTo(3 / 11, 9);
  });

  it.each<[string, number, number]>([
    ['3:8', 3 / 11, 8],
    ['5:8', 0.387, 8],
    ['20:8 (100 Mbit/s host)', 0.716, 8],
    ['1:4', 0.2, 4],
    ['7:3', 0.7, 3],
  ])('local morsels are spread evenly (%s): gaps differ by at most one', (_, share, n) => {
    const gaps = hostGaps({
      morsels: 997,
      width: n,
      localShare: share,
      host: host(),
      donors: remotes(n),
    });
    expect(Math.max(...gaps) - Math.min(...gaps)).toBeLessThanOrEqual(1);
  });

  it('spread(): host slots at ⌊(j+1)L/C⌋ steps, remotes in rotation', () => {
    expect(spread('h', 3, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'i'], 1)).toEqual(
      'a b c h d e f h g i h'.split(' '),
    );
    expect(spread('h', 1, ['a', 'b'], 2)).toEqual(['a', 'b', 'a', 'b', 'h']);
  });

  it.each<{ name: string; hostFree: number; remoteFree: number; share: number; host: number }>([
    {
      name: 'host short of space: the ratio is reduced to fit it',
      hostFree: 100,
      remoteFree: 1e9,
      share: 0.5,
      host: 100,
    },
    {
      name: 'remote donors fill up: rounds re-sort, the host absorbs the rest',
      hostFree: 1e9,
      remoteFree: 60,
      share: 0.2,
      host: 520,
    },
    { name: 'everything exactly full', hostFree: 200, remoteFree: 100, share: 0.2, host: 200 },
  ])('$name', ({ hostFree, remoteFree, share, host: onHost }) => {
    const donors = remotes(8, remoteFree);
    const plan = placeAsymmetric({
      morsels: 1000,
      width: 8,
      localShare: share,
      host: host(hostFree),
      donors,
    });
    const counted = auditCover(plan.extents, 1000);
    expect(counted.get('host')).toBeLessThanOrEqual(onHost);
    expect(counted.get('host')).toBeGreaterThanOrEqual(onHost * 0.95);
    expect(counted.get('host')!).toBeLessThanOrEqual(hostFree);
    for (const d of donors) expect(counted.get(d.id) ?? 0).toBeLessThanOrEqual(remoteFree);
    expect(plan.perDonor).toEqual(counted);
  });

  it('a share the host cannot hold is clamped, not front-loaded', () => {
    const input = { morsels: 1000, width: 8, localShare: 0.5, host: host(300), donors: remotes(8) };
    const plan = placeAsymmetric(input);
    expect(plan.localShare).toBeLessThanOrEqual(0.3);
    expect(plan.localShare).toBeGreaterThan(0.28);
    // the last tenth still has local morsels
    expect(hostGaps(input, 900, 1000).length).toBeGreaterThan(20);
  });

  it.each([
    ['0:8 places nothing on the host', 0, 0],
    ['1:0 places everything on the host', 1, 1000],
  ])('%s', (_, share, onHost) => {
    const plan = placeAsymmetric({
      morsels: 1000,
      width: 8,
      localShare: share,
      host: host(),
      donors: remotes(8),
    });
    expect(auditCover(plan.extents, 1000).get('host') ?? 0).toBe(onHost);
  });

  it.each([2, 5])('stripe size %i keeps whole units and an exact cover', (unit) => {
    const plan = placeAsymmetric({
      morsels: 1001,
      width: 4,
      unit,
      localShare: 0.2,
      host: host(),
      donors: remotes(4),
    });
    const counted = auditCover(plan.extents, 1001);
    expect(plan.perDonor).toEqual(counted);
    expect(counted.get('host')! / 1001).toBeCloseTo(0.2, 1);
  });

  it.each<[string, Partial<AsymmetricInput>, string]>([
    [
      'more than all space',
      { morsels: 5000, host: host(100), donors: remotes(2, 100) },
      'NO_SPACE',
    ],
    ['host among the donors', { donors: [host(), ...remotes(2)] }, 'VALIDATION_FAILED'],
    ['share above one', { localShare: 1.5 }, 'VALIDATION_FAILED'],
    ['width zero', { width: 0 }, 'VALIDATION_FAILED'],
  ])('rejects %s', (_, patch, code) => {
    const input = {
      morsels: 100,
      width: 2,
      localShare: 0.3,
      host: host(),
      donors: remotes(2),
      ...patch,
    };
    expect(() => placeAsymmetric(input)).toThrow(expect.objectContaining({ code }));
  });

  it('places 1 TiB in a few extents even as donors fill', () => {
    const morsels = TiB / MiB;
    const donors = Array.from({ length: 8 }, (_, i) => ({
      id: `r${i}`,
      freeMorsels: 90_000 + i * 7_919,
    }));
    // CPU time of this worker, not wall time: other processes on a busy machine do not count.
    const started = process.cpuUsage();
    const plan = placeAsymmetric({
      morsels,
      width: 8,
      localShare: 0.3,
      host: host(400_000),
      donors,
    });
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(500);
    expect(plan.extents.length).toBeLessThanOrEqual(20);
    const total = [...plan.perDonor.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(morsels);
    expect(plan.perDonor.get('host')!).toBeLessThanOrEqual(400_000);
    for (const d of donors) expect(plan.perDonor.get(d.id)!).toBeLessThanOrEqual(d.freeMorsels);
  });
});
