import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AGENT_NODE_FLAGS, AGENT_NODE_OPTIONS } from './agent-node-flags.js';
import { runCli } from '../test/processes.js';

const run = promisify(execFile);

/**
 * Allocates short-lived objects until V8 has grown new space as far as it will, then prints the
 * largest new-space size seen (bytes).
 */
const FILL_NEW_SPACE = `
const v8 = require('node:v8');
let keep = [];
let max = 0;
for (let i = 0; i < 3e6; i++) {
  keep.push({ i, a: [i] });
  if (keep.length > 2e5) keep = [];
  if (i % 1e4 === 0) {
    const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
    max = Math.max(max, s.space_size);
  }
}
console.log(max);
`;

const newSpaceMax = async (nodeOptions: string | undefined): Promise<number> => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  const { stdout } = await run(process.execPath, ['-e', FILL_NEW_SPACE], { env });
  return Number(stdout.trim());
};

/**
 * A donor started by hand gets the agent node flags through NODE_OPTIONS (its help says so, and
 * the LAN benchmarks start their donors that way): every flag must be one NODE_OPTIONS accepts
 * (node refuses to start otherwise) and must take effect from there.
 */
describe('agent node flags through NODE_OPTIONS', { timeout: 120_000 }, () => {
  it('caps new space as the flags say; without them V8 grows it further', async () => {
    const semi = Number(/--max-semi-space-size=(\d+)/.exec(AGENT_NODE_OPTIONS)?.[1]);
    expect(semi).toBeGreaterThan(0);
    const MiB = 2 ** 20;
    const capped = await newSpaceMax(AGENT_NODE_OPTIONS);
    const plain = await newSpaceMax(undefined);
    // New space is two semi-spaces.
    expect(capped).toBeLessThanOrEqual(2 * semi * MiB);
    expect(plain).toBeGreaterThan(2 * semi * MiB);
  });

  it('freeloader agent starts under them and its help shows them', async () => {
    const r = await runCli(['agent', '--help'], { NODE_OPTIONS: AGENT_NODE_OPTIONS });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`NODE_OPTIONS="${AGENT_NODE_OPTIONS}" freeloader agent`);
    for (const flag of AGENT_NODE_FLAGS) expect(AGENT_NODE_OPTIONS).toContain(flag);
  });
});
