/**
 * The simulator's clock: a binary min-heap of timed events. Ties are broken by insertion order,
 * so two events at the same instant always run in the order they were scheduled and a seeded run
 * is deterministic.
 *
 * @template T
 */
export class EventQueue {
  constructor() {
    /** @type {Array<{ t: number, seq: number, ev: T }>} */
    this.heap = [];
    this.seq = 0;
  }

  get size() {
    return this.heap.length;
  }

  /**
   * @param {number} t
   * @param {T} ev
   */
  push(t, ev) {
    const h = this.heap;
    const item = { t, seq: this.seq++, ev };
    let i = h.push(item) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = /** @type {{ t: number, seq: number, ev: T }} */ (h[p]);
      if (!before(item, parent)) break;
      h[i] = parent;
      i = p;
    }
    h[i] = item;
  }

  /** @returns {{ t: number, ev: T } | undefined} the earliest event, removed */
  pop() {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (top === undefined || last === undefined || h.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const r = l + 1;
      const lc = /** @type {{ t: number, seq: number, ev: T }} */ (h[l]);
      const rc = h[r];
      const c = rc !== undefined && before(rc, lc) ? r : l;
      const child = /** @type {{ t: number, seq: number, ev: T }} */ (h[c]);
      if (!before(child, last)) break;
      h[i] = child;
      i = c;
    }
    h[i] = last;
    return top;
  }
}

/**
 * @param {{ t: number, seq: number }} a
 * @param {{ t: number, seq: number }} b
 */
function before(a, b) {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}
