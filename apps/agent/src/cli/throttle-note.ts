import { formatSize, isThrottled } from '@freeloader/protocol';

/** A donor's serving governor as the manager reports it (map donors, transfer rows). */
export interface DonorThrottle {
  throttle?: string | undefined;
  throttleReasons?: readonly string[] | undefined;
  /** Bytes/s; 0 or absent = unlimited. */
  rateCap?: number | undefined;
}

/** Words for a throttled state when an older agent sent no reasons. */
const STATE_WORDS: Record<string, string> = {
  active: 'owner active',
  contended: 'machine busy',
  paused: 'paused',
};

/** Why one donor is throttled, in a few words ('cpu 0.93 > 0.75, schedule'). */
export function donorReasons(d: DonorThrottle): string {
  if (d.throttleReasons?.length) return d.throttleReasons.join(', ');
  return STATE_WORDS[d.throttle ?? ''] ?? d.throttle ?? 'throttled';
}

/** What a reason is about, without its numbers: 'cpu 0.93 > 0.75' and 'cpu 0.97 > 0.75' agree. */
const kindOf = (reason: string): string => reason.replace(/[\d.]+/g, '#');

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
  const throttled = donors.filter((d) => isThrottled(d.throttle));
  if (throttled.length === 0) return '';
  // Commonest kind of reason first; its first wording stands for it.
  const kinds = new Map<string, { text: string; count: number }>();
  for (const d of throttled) {
    const reasons = d.throttleReasons?.length ? d.throttleReasons : [donorReasons(d)];
    for (const r of reasons) {
      const k = kinds.get(kindOf(r)) ?? { text: r, count: 0 };
      k.count++;
      kinds.set(kindOf(r), k);
    }
  }
  const ranked = [...kinds.values()].sort((a, b) => b.count - a.count);
  const head =
    donors.length === 1
      ? 'donor throttled'
      : `${throttled.length} of ${donors.length} donors throttled`;
  const more = ranked.length > 1 ? ` +${ranked.length - 1} more` : '';
  const full = `${head} (${ranked[0]!.text}${more})`;
  if (full.length <= max) return full;
  const short = `${head} (${ranked[0]!.text})`;
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
