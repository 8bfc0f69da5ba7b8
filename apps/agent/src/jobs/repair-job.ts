import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  FreeLoaderError,
  dataKeyOf,
  isFreeLoaderError,
  type RepairCommitResponse,
  type RepairMorsel,
} from '@freeloader/protocol';
import { openSource, type Source, type SourcePolicy } from '@freeloader/sources';
import { DonorPools } from '../client/donor-pool.js';
import type { ForegroundYield } from '../governor/foreground-yield.js';
import type { AdmitTransfer } from '../governor/governance.js';
import { TokenBucket } from '../governor/token-bucket.js';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';
import { forEachBounded } from './bounded-tasks.js';
import { jobOfKind } from './job-of-kind.js';
import type { JobHandler } from './job-runner.js';
import { ProgressReporter } from './progress-reporter.js';
import { ReceiveSlot, type ReceiveTurn } from './receive-slot.js';
import { sealInPlace } from '../native/morsel-cipher.js';

/**
 * Stored units are committed in batches of about this many bytes: each unit is still committed
 * whole, and a crash loses at most one batch of copying (bytes).
 */
const COMMIT_EVERY_BYTES = 8 * 1024 * 1024;
/**
 * Bytes of morsels in flight per repair job (fetched, being verified and stored): the cap b
 * paces them, so this only hides latency. Each put fsyncs; with two morsels in flight a shared,
 * busy disk (fsync 0.2–0.5 s) held jobs of the repair benchmark to half of b. Bounded in bytes,
 * not morsels, so large morsels do not multiply a donor's memory.
 */
const FETCH_IN_FLIGHT_BYTES = 8 * 1024 * 1024;

export interface RepairDeps {
  store: MorselStore;
  manager: ManagerClient;
  /** Whether `file://` sources may be read (the admin's opt-in, as for imports). */
  allowFileUris?: boolean;
  /** Which addresses the source may be fetched from (checked on every connection). */
  sourcePolicy: SourcePolicy;
  /** The governor's admission: repair is paced with serving and yields to the owner. */
  admit?: AdmitTransfer;
  /** Client reads served here: while they run, this donor receives repair at the yield rate. */
  foreground?: ForegroundYield;
}

/**
 * Run a `repair` job on its destination: for each unit, fetch every morsel from the donor the
 * manager named (read capability) or, when none can deliver it, from the source, store it only if
 * its SHA-256 is the one the manager recorded, then ask the manager to commit the unit. Bytes
 * move at the job's cap (b, or B's share for source reads) and through the governor, so repair
 * never beats the owner's own use, and at the yield rate while clients read from this donor (the
 * senders hold repair reads the same way), so repair never beats foreground readers either. A unit already committed (a resumed job) commits as a no-op.
 */
export function repairJobHandler(deps: RepairDeps): JobHandler {
  // One per donor: its repair jobs receive one after the other.
  const slot = new ReceiveSlot();
  return async (claimed, ctx) => {
    const job = jobOfKind(claimed, 'repair');
    const p = job.payload;
    const bucket = new TokenBucket(p.rateBytesPerS, () => performance.now());
    const pools = new DonorPools(1);
    let source: Source | undefined;
    const reporter = new ProgressReporter(ctx);
    const key = p.dataKey === undefined ? undefined : dataKeyOf(p.dataKey);
    const fromSource = async (m: RepairMorsel): Promise<Buffer> => {
      if (!p.source) throw new FreeLoaderError('MORSEL_NOT_FOUND', `no copy of morsel ${m.index}`);
      source ??= openSource(p.source.uri, {
        connections: 1,
        allowFile: deps.allowFileUris ?? false,
        policy: deps.sourcePolicy,
      });
      const start = m.index * p.morselSize;
      const data = await source.readRange(
        start,
        start + m.length,
        { ...p.source, acceptsRanges: true },
        ctx.signal,
      );
      // Sealed as the import sealed it (same key, same nonce): the recorded hash matches.
      if (key) sealInPlace(key, p.datasetId, m.index, data);
      return data;
    };
    const fetchVerified = async (m: RepairMorsel, slot: Buffer): Promise<void> => {
      const wait = bucket.reserve(m.length);
      if (wait > 0) await sleep(wait, undefined, { signal: ctx.signal });
      await deps.admit?.(m.length, 'in', ctx.signal);
      await deps.foreground?.background(m.length, ctx.signal);
      let lastError: unknown;
      for (const url of m.donors) {
        try {
          const data = await pools.getMorsel(
            url,
            p.datasetId,
            m.index,
            m.length,
            p.readCapability,
            slot,
          );
          await deps.store.put(p.datasetId, m.index, data, m.sha256);
          return;
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          lastError = e;
          ctx.log.warn({ morsel: m.index, donor: url, err: String(e) }, 'repair source failed');
        }
      }
      try {
        await deps.store.put(p.datasetId, m.index, await fromSource(m), m.sha256);
      } catch (e) {
        throw isFreeLoaderError(e) || !lastError ? e : lastError;
      }
    };
    let turn: ReceiveTurn | undefined;
    try {
      const all = p.units.flatMap((u) => u.morsels.map((m) => m.index));
      await deps.store.create(p.datasetId, { morselSize: p.morselSize, planned: all });
      const asked = performance.now();
      turn = await slot.acquire(ctx.signal);
      const started = performance.now();
      const transferFrom = Date.now();
      let morsels = 0;
      let pending: string[] = [];
      let pendingBytes = 0;
      // Commits run one at a time, in the order units completed, behind the fetches (a fetch
      // slot waiting for a commit under a busy manager idled the link); the first that fails
      // stops the job.
      let committing = Promise.resolve();
      let commitFailed: { error: unknown } | undefined;
      const commit = (): Promise<void> => {
        const unitIds = pending;
        pending = [];
        pendingBytes = 0;
        committing = committing.then(async () => {
          if (unitIds.length === 0) return;
          const done = await deps.manager.request<RepairCommitResponse>(
            'POST',
            `/repairs/${job.id}/commit`,
            { unitIds },
          );
          morsels += done.morsels;
        });
        committing.catch((error: unknown) => (commitFailed ??= { error }));
        return committing;
      };
      // Units are often a single morsel (a stripe unit): fetch across units, so FETCH_IN_FLIGHT
      // morsels are always moving, and commit each unit once all of its morsels are stored.
      const left = new Map(p.units.map((u) => [u.unitId, u.morsels.length]));
      const items = p.units.flatMap((u) => u.morsels.map((m) => ({ unitId: u.unitId, m })));
      let lastStored = started;
      const inFlight = Math.max(2, Math.floor(FETCH_IN_FLIGHT_BYTES / p.morselSize));
      // One morsel buffer per lane, reused (see LaneBuffers for why) and passed to the next job.
      const slots = turn.buffers(p.morselSize);
      await forEachBounded(items, inFlight, async ({ unitId, m }, lane) => {
        if (commitFailed) throw commitFailed.error;
        await fetchVerified(m, slots.of(lane));
        lastStored = performance.now();
        reporter.add(m.length);
        const remaining = left.get(unitId)! - 1;
        left.set(unitId, remaining);
        if (remaining > 0) return;
        pending.push(unitId);
        pendingBytes += p.units
          .find((u) => u.unitId === unitId)!
          .morsels.reduce((sum, x) => sum + x.length, 0);
        if (pendingBytes >= COMMIT_EVERY_BYTES) void commit().catch(() => undefined);
      });
      // Every morsel is stored: the next job may receive while this one commits.
      turn.release();
      const transferTo = Date.now();
      await commit();
      // No final progress report: finishing marks every byte done, and that round trip to a
      // busy manager (0.05–0.4 s in the repair benchmark) kept the donors of the job from
      // their next one.
      ctx.log.debug(
        { job: job.id, bytes: reporter.doneBytes, transferS: (lastStored - started) / 1000 },
        'repair job stored and committed',
      );
      return {
        units: p.units.length,
        morsels,
        bytes: reporter.doneBytes,
        seconds: (performance.now() - started) / 1000,
        // From the first byte asked for to the last morsel stored: the rate the cap allowed.
        transferSeconds: (lastStored - started) / 1000,
        // Waiting for this donor's turn to receive (a job queued behind another).
        waitedSeconds: (started - asked) / 1000,
        // Wall-clock bounds of the transfer (ms since the epoch): overlapping jobs are visible.
        transferFrom,
        transferTo,
      };
    } finally {
      turn?.release();
      await pools.close();
      await source?.close();
    }
  };
}
