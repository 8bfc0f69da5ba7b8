import { describe, expect, it } from 'vitest';
import { ProgressBar } from './progress-bar.js';
import { appendNote, throttleNote, throttleReport, type DonorThrottle } from './throttle-note.js';

const idle: DonorThrottle = { throttle: 'idle', throttleReasons: [] };
const cpu = (v: string): DonorThrottle => ({
  throttle: 'contended',
  throttleReasons: [`cpu ${v} > 0.75`],
  rateCap: 262_144,
});
const owner: DonorThrottle = { throttle: 'active', throttleReasons: ['owner active'] };

describe('throttleNote', () => {
  it.each<[string, DonorThrottle[], string]>([
    ['nobody throttled', [idle, idle, {}], ''],
    ['no donors', [], ''],
    ['one of four', [cpu('0.93'), idle, idle, idle], '1 of 4 donors throttled (cpu 0.93 > 0.75)'],
    [
      'same kind, different numbers: one reason',
      [cpu('0.93'), cpu('0.97'), cpu('0.91'), idle],
      '3 of 4 donors throttled (cpu 0.93 > 0.75)',
    ],
    [
      'commonest reason first, others counted',
      [owner, cpu('0.93'), cpu('0.99'), idle],
      '3 of 4 donors throttled (cpu 0.93 > 0.75 +1 more)',
    ],
    ['a single donor', [owner], 'donor throttled (owner active)'],
    [
      'an old agent without reasons',
      [{ throttle: 'contended' }, idle],
      '1 of 2 donors throttled (machine busy)',
    ],
    [
      'paused',
      [{ throttle: 'paused', throttleReasons: ['paused by the owner'] }, idle],
      '1 of 2 donors throttled (paused by the owner)',
    ],
    [
      'unknown owner input is not a throttle',
      [{ throttle: 'unknown', throttleReasons: [] }, idle],
      '',
    ],
  ])('%s', (_, donors, note) => expect(throttleNote(donors)).toBe(note));

  it('drops the count of other reasons, then cuts, to stay within max', () => {
    const donors = [owner, cpu('0.93'), cpu('0.99'), idle];
    expect(throttleNote(donors, 42)).toBe('3 of 4 donors throttled (cpu 0.93 > 0.75)');
    const cut = throttleNote(donors, 30);
    expect(cut).toBe('3 of 4 donors throttled (cpu…');
    expect(cut.length).toBeLessThanOrEqual(30);
  });
});

describe('appendNote', () => {
  const bar = 'x.bin  [##########··········]   50.0%  100 MiB / 200 MiB  1.5 MB/s  ETA 1m07s';
  const note = '3 of 4 donors throttled (cpu 0.93 > 0.75)';
  it.each<[string, number | undefined, string]>([
    ['no note: the bar alone', 200, bar],
    ['room enough', 200, `${bar}  ${note}`],
    ['not a terminal width: whole', undefined, `${bar}  ${note}`],
    ['cut to the width', 110, `${bar}  3 of 4 donors throttled (cpu…`],
    ['too narrow: the bar alone', 90, bar],
  ])('%s', (what, columns, line) => {
    const out = appendNote(bar, what.startsWith('no note') ? '' : note, columns);
    expect(out).toBe(line);
    if (columns) expect(out.length).toBeLessThan(columns);
  });
});

describe('throttleReport', () => {
  it('lists throttled donors with state, cap and reasons; nothing when none was', () => {
    expect(throttleReport([{ name: 'a:7401', ...idle }])).toBe('');
    expect(
      throttleReport([
        { name: '10.0.0.5:7401', ...cpu('0.93') },
        { name: '10.0.0.6:7401', ...idle },
        { name: '10.0.0.7:7401', ...owner, rateCap: 2 * 1024 * 1024 },
        { name: '10.0.0.8:7401', throttle: 'paused', throttleReasons: ['schedule'] },
        { name: '10.0.0.9:7401', throttle: 'contended', rateCap: 0 },
      ]),
    ).toBe(
      [
        'throttled donors:',
        '  10.0.0.5:7401        contended, cap 256 KiB/s: cpu 0.93 > 0.75',
        '  10.0.0.7:7401        active, cap 2 MiB/s: owner active',
        '  10.0.0.8:7401        paused: schedule',
        '  10.0.0.9:7401        contended, no cap: machine busy',
      ].join('\n'),
    );
  });
});

describe('the progress line', () => {
  it('a bar on a terminal says why after its figures, within the width', () => {
    const written: string[] = [];
    const tty = { isTTY: true, columns: 120, write: (s: string) => written.push(s) };
    const bar = new ProgressBar(200, 'x.bin', tty as unknown as NodeJS.WriteStream);
    bar.setNote(throttleNote([cpu('0.93'), cpu('0.97'), cpu('0.91'), idle]));
    bar.update(100, 1.5e6, true);
    const raw = written.at(-1)!;
    // Carriage return first, erase-to-end-of-line last.
    expect(raw.startsWith('\r') && raw.endsWith('\u001b[K')).toBe(true);
    const line = raw.slice(1, -3);
    expect(line).toMatch(
      /^x\.bin {2}\[#+·+\].*MB\/s.* {2}3 of 4 donors throttled \(cpu 0\.93 > 0\.75\)$/,
    );
    expect(line.length).toBeLessThan(120);
  });
});
