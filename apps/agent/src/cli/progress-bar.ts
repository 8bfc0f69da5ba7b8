import { formatSize } from '@freeloader/protocol';
import { appendNote } from './throttle-note.js';

/** Redraw at most this often (milliseconds): a terminal cannot show more, and it costs CPU. */
const REDRAW_MS = 100;

/**
 * A one-line progress bar on stderr when it is a terminal; silent otherwise (pipes, CI logs).
 *
 * @example  [##########··········]  50.0%  512 MiB / 1 GiB  112.4 MB/s  ETA 5s
 */
export class ProgressBar {
  private lastDraw = 0;
  private readonly started = performance.now();
  private readonly enabled: boolean;

  constructor(
    private readonly total: number,
    private readonly label = '',
    stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.enabled = stream.isTTY === true;
    this.stream = stream;
  }

  private readonly stream: NodeJS.WriteStream;
  /** Said after the bar, e.g. why it is slow ('3 of 4 donors throttled (cpu 0.93 > 0.75)'). */
  private note = '';

  setNote(note: string): void {
    this.note = note;
  }

  update(done: number, rateBytesPerS?: number, force = false): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (!force && now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    const bar = renderBar(done, this.total, rateBytesPerS ?? this.averageRate(done), this.label);
    this.stream.write(`\r${appendNote(bar, this.note, this.stream.columns)}\x1b[K`);
  }

  done(): void {
    if (this.enabled) this.stream.write('\n');
  }

  averageRate(done: number): number {
    const s = (performance.now() - this.started) / 1000;
    return s > 0 ? done / s : 0;
  }
}

/** The bar's text, pure so it can be tested. Rates are decimal MB/s, as network people read them. */
export function renderBar(
  done: number,
  total: number,
  rate: number,
  label = '',
  width = 20,
): string {
  const frac = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(frac * width);
  const eta = rate > 0 && total > done ? `ETA ${formatSeconds((total - done) / rate)}` : '';
  const parts = [
    label,
    `[${'#'.repeat(filled)}${'·'.repeat(width - filled)}]`,
    `${(frac * 100).toFixed(1).padStart(5)}%`,
    `${formatSize(done)} / ${formatSize(total)}`,
    `${(rate / 1e6).toFixed(1)} MB/s`,
    eta,
  ];
  return parts.filter((p) => p.length > 0).join('  ');
}

/**
 * A duration for an ETA, rounded up to whole seconds *before* it is split into units, so a carry
 * moves into the next unit instead of printing `3m60s`; past an hour it shows hours and minutes.
 *
 * @example formatSeconds(239.6) === '4m00s'; formatSeconds(59.5) === '1m00s'; formatSeconds(3725) === '1h02m'
 */
export function formatSeconds(s: number): string {
  // Rounded up: an ETA that says "0s" while bytes are still due reads as a hang.
  const secs = Math.max(0, Math.ceil(s));
  if (secs < 60) return `${secs}s`;
  if (secs < 3600) return `${Math.floor(secs / 60)}m${pad2(secs % 60)}s`;
  const mins = Math.round(secs / 60);
  return `${Math.floor(mins / 60)}h${pad2(mins % 60)}m`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}
