import {
  donorReasons,
  formatSize,
  isThrottled,
  summarizeThrottle,
  type DonorThrottle,
} from '@freeloader/protocol';

export type { DonorThrottle };

/**
 * One short note for a progress line about the donors doing the work: how many are throttled
 * and the commonest reason, or '' when none is. Distinct reasons beyond the first are counted,
 * and the note is cut to `max` characters.
 *
 * @example
 *   throttleNote([{ throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'] }, {}, {}, {}])
 *   // → '1 of 4 donors throttled (cpu 0.93 > 0.75)'
 */
export function throttleNote(donors: readonly DonorThrottle[], max = 60): string {
  const sum = summarizeThrottle(donors);
  if (!sum) return '';
  const head =
    sum.total === 1 ? 'donor throttled' : `${sum.throttled} of ${sum.total} donors throttled`;
  const more = sum.others > 0 ? ` +${sum.others} more` : '';
  const full = `${head} (${sum.reason}${more})`;
  if (full.length <= max) return full;
  const short = `${head} (${sum.reason})`;
  return short.length <= max ? short : cut(short, max);
}

/**
 * The progress line with the note after it, cut to fit a terminal of `columns` (a line that
 * wraps breaks the carriage-return redraw). The bar's own text is kept whole; the note goes
 * when too little room is left for it to say anything.
 *
 * @example appendNote('[####]  50.0%', '1 of 4 donors throttled (cpu 0.93 > 0.75)', 80)
 */
export function appendNote(line: string, note: string, columns?: number): string {
  if (!note) return line;
  if (!columns) return `${line}  ${note}`;
  const room = columns - 1 - line.length - 2;
  if (room < 16) return line;
  return `${line}  ${note.length <= room ? note : cut(note, room)}`;
}

/**
 * `get --stats`: one line per throttled donor with its state, cap and reasons, or '' when no
 * donor was throttled.
 *
 * @example
 *   throttleReport([{ name: '10.0.0.5:7401', throttle: 'contended', rateCap: 262144,
 *                     throttleReasons: ['cpu 0.93 > 0.75'] }])
 *   // → 'throttled donors:\n  10.0.0.5:7401        contended, cap 256 KiB/s: cpu 0.93 > 0.75'
 */
export function throttleReport(donors: ReadonlyArray<DonorThrottle & { name: string }>): string {
  const rows = donors
    .filter((d) => isThrottled(d.throttle))
    .map((d) => {
      const cap =
        d.throttle === 'paused' ? '' : d.rateCap ? `, cap ${formatSize(d.rateCap)}/s` : ', no cap';
      return `  ${d.name.padEnd(20)} ${d.throttle}${cap}: ${donorReasons(d)}`;
    });
  return rows.length === 0 ? '' : ['throttled donors:', ...rows].join('\n');
}

const cut = (s: string, max: number): string =>
  s.length <= max ? s : `${s.slice(0, max - 1).trimEnd()}…`;
