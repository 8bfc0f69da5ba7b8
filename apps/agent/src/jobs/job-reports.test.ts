import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreeLoaderError, type JobFinish } from '@freeloader/protocol';
import { isFinalRejection, JobReportOutbox } from './job-reports.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-job-reports-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const log = pino({ level: 'silent' });
const JOB = '0d9c0a52-3f0e-4c1e-9d55-8a1f2c3b4d5e';

describe('isFinalRejection', () => {
  it.each([
    ['job unknown or someone else’s (404)', new FreeLoaderError('JOB_NOT_FOUND', 'x'), true],
    ['job already finished or cancelled (409)', new FreeLoaderError('CONFLICT', 'x'), true],
    ['bad body (400)', new FreeLoaderError('VALIDATION_FAILED', 'x'), true],
    ['manager unreachable', new FreeLoaderError('UNAVAILABLE', 'x'), false],
    ['manager bug (500)', new FreeLoaderError('INTERNAL', 'x'), false],
    ['not a FreeLoaderError', new Error('socket hang up'), false],
  ])('%s → %s', (_name, e, final) => {
    expect(isFinalRejection(e)).toBe(final);
  });
});

describe('JobReportOutbox', () => {
  it('keeps a report on disk through an outage and an agent restart, then delivers it once', async () => {
    const report: JobFinish = {
      state: 'failed',
      error: 'source changed',
      errorCode: 'SOURCE_CHANGED',
    };
    let up = false;
    const delivered: Array<[string, JobFinish]> = [];
    const send = async (jobId: string, r: JobFinish): Promise<void> => {
      if (!up) throw new FreeLoaderError('UNAVAILABLE', 'manager at http://m is unreachable');
      delivered.push([jobId, r]);
    };

    const first = new JobReportOutbox(dir, send, log);
    expect(await first.load()).toBe(0);
    await first.put(JOB, report);
    expect(first.has(JOB)).toBe(true);
    expect(await readdir(join(dir, 'job-reports'))).toEqual([`${JOB}.json`]);
    first.stop(); // the agent stops with the report undelivered

    const second = new JobReportOutbox(dir, send, log);
    expect(await second.load()).toBe(1);
    expect(second.has(JOB)).toBe(true);
    up = true;
    second.nudge();
    await second.drained(10_000);
    expect(delivered).toEqual([[JOB, report]]);
    expect(await readdir(join(dir, 'job-reports'))).toEqual([]);
    second.stop();
  });

  it('drops a report the manager refuses for good', async () => {
    const outbox = new JobReportOutbox(
      dir,
      async () => {
        throw new FreeLoaderError('CONFLICT', 'job is done, not running');
      },
      log,
    );
    await outbox.load();
    await outbox.put(JOB, { state: 'done' });
    await outbox.drained(10_000);
    expect(await readdir(join(dir, 'job-reports'))).toEqual([]);
    outbox.stop();
  });
});
