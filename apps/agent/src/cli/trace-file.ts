import { writeFile } from 'node:fs/promises';
import { summariseTrace, type ReadTrace } from '../client/read-trace.js';

/**
 * Write `get --trace`'s file (the summary and every event, JSON) and return the summary's text:
 * per donor, seconds busy and idle, and what its workers did while it was idle.
 *
 * @example console.error(await writeTrace('/tmp/read.json', trace));
 */
export async function writeTrace(path: string, trace: ReadTrace): Promise<string> {
  const summary = summariseTrace(trace.events, trace.started);
  await writeFile(path, JSON.stringify({ started: trace.started, summary, events: trace.events }));
  const s = (n: number): string => n.toFixed(2);
  const lines = [`trace ${path}: ${s(summary.seconds)} s, reader close ${s(summary.close)} s`];
  const phases = Object.entries(summary.phases).map(([k, v]) => `${k} ${s(v)}`);
  lines.push(`  seconds by phase, summed over morsels: ${phases.join(', ')}`);
  for (const [donor, d] of Object.entries(summary.donors)) {
    const by = Object.entries(d.idleBy)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${s(v)}`);
    lines.push(`  ${donor}: busy ${s(d.busy)} s, idle ${s(d.idle)} s (${by.join(', ')})`);
  }
  return lines.join('\n');
}
