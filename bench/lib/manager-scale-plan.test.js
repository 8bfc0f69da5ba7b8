import { describe, expect, it } from 'vitest';
import { levelRows, plan } from '../benchmarks/manager-scale.js';

describe('manager-scale plan', () => {
  it('reads agents x managers, and defaults by mode', () => {
    expect(plan(true, { MANAGER_SCALE_PLAN: '1000x2,5000' })).toEqual([
      { agents: 1000, managers: 2 },
      { agents: 5000, managers: 1 },
    ]);
    expect(plan(true, {})).toEqual([
      { agents: 1000, managers: 1 },
      { agents: 5000, managers: 1 },
    ]);
    expect(
      plan(false, {})
        .filter((r) => r.managers === 2)
        .map((r) => r.agents),
    ).toEqual([1000, 5000]);
    expect(plan(false, { MANAGER_SCALE_AGENTS: '300' })).toEqual([{ agents: 300, managers: 1 }]);
  });

  it('holds the CPU row to 0.2 ms per heartbeat and the p99 row only at the largest fleet', () => {
    const level = {
      agents: 10_000,
      managers: 1,
      build: 'dist',
      windowSeconds: 30,
      enrollPerSecond: 100,
      latencyMs: { p50: 1, p99: 2, max: 3 },
      generator: { lateSends: 7, lateShare: 0.01, lateMs: { p99: 60 }, queuedMs: { p99: 4 } },
      errors: {},
      managerCpuMsPerHeartbeat: 0.3,
      managerCpuMsPerHeartbeatNet: 0.25,
      postgresCpuMsPerHeartbeat: 0.05,
      managerCpuUsPerChannelSecond: 10,
      managerCpuShareWithoutAgents: 0.01,
      loadavg1: 5,
      cpuShareOfOneCore: {
        manager: 0.6,
        managerUser: 0.5,
        managerSystem: 0.1,
        postgres: 0.1,
        loadGenerator: 0.3,
      },
    };
    const [p99, cpu] = levelRows(level, false);
    expect(p99?.limitMbps).toBeNull();
    expect(cpu).toMatchObject({ mbps: 0.3, limitMbps: 0.2, lowerIsBetter: true });
    expect(levelRows(level, true)[0]?.limitMbps).toBe(50);
  });
});
