// Calibrates the emulated LAN: one curl stream over a tc-shaped link should reach ≈0.956 of the
// tc rate (1448 payload bytes per 1514-byte frame). The other benchmarks use this measured
// goodput, not the raw tc rate, as each link's limit. Full runs also sweep the tbf burst.
import { measureGoodput } from '../lib/goodput.js';
import { MIN_BURST_BYTES } from '../lib/shaping.js';
import { repeat } from '../lib/stats.js';
import { createTestbed } from '../lib/testbed.js';

/** Below this a shaped link is not what the benchmarks assume. */
const TARGET_RATIO = 0.93;

export default {
  name: 'link-goodput',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const seconds = ctx.quick ? 1.5 : 3;
    const reps = ctx.quick ? 1 : 3;
    const work = ctx.workDir('link-goodput');
    const tb = await createTestbed({ donors: 1, log: ctx.log });
    const donor = /** @type {import('../lib/testbed.js').LanHost} */ (tb.donors[0]);
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    try {
      // 100 Mbit/s: a donor's upload into the 1 Gbit/s client. 1 Gbit/s: the unshaped manager
      // into the client, so only the client's link limits.
      /** @type {Array<{ rateMbit: number, from: import('../lib/testbed.js').LanHost, burstBytes: number | undefined }>} */
      const cases = [
        { rateMbit: 100, from: donor, burstBytes: undefined },
        { rateMbit: 1000, from: tb.manager, burstBytes: undefined },
      ];
      if (!ctx.quick) {
        for (const burstBytes of [16 * 1024, MIN_BURST_BYTES, 512 * 1000]) {
          cases.push({ rateMbit: 1000, from: tb.manager, burstBytes });
        }
      }
      for (const c of cases) {
        const target = c.rateMbit === 100 ? donor : tb.client;
        await tb.shape(target, { rateMbit: c.rateMbit, burstBytes: c.burstBytes });
        const bytes = Math.round((c.rateMbit / 8) * 1e6 * seconds);
        const m = await repeat(
          reps,
          async () => (await measureGoodput(c.from, tb.client, bytes, work)).mbps,
        );
        const sweep = c.burstBytes !== undefined;
        rows.push({
          case: `tc ${c.rateMbit} Mbit/s ${c.from.name}→cl${sweep ? ` burst ${c.burstBytes} B` : ''}`,
          params: {
            rateMbit: c.rateMbit,
            burstBytes: c.burstBytes ?? 'default',
            bytes,
            samples: m.samples,
          },
          mbps: m.median,
          limitMbps: c.rateMbit / 8,
          targetRatio: sweep ? null : TARGET_RATIO,
          note: sweep ? 'burst sweep' : 'expect ≈0.956',
        });
        // Restore the default shaping for the next case.
        await tb.shape(target, { rateMbit: target === tb.client ? 1000 : 100 });
      }
    } finally {
      tb.teardown();
    }
    return ctx.report('link-goodput', { seconds, reps }, rows, { netem: tb.netem });
  },
};
