/**
 * Nodes bucketed by a small integer score (pending incoming transfers, or stored objects), so the
 * placement schemes find "the node with the least X that can take this object" without scanning
 * all nodes for each of millions of repairs. Within a score, the node that reached it first is
 * tried first: ties rotate instead of always landing on node 0.
 */
export class MinBuckets {
  /** @param {number} count nodes, all starting at score 0 */
  constructor(count) {
    /** @type {Array<Set<number>>} */
    this.buckets = [new Set(Array.from({ length: count }, (_, i) => i))];
    /** @type {number[]} */
    this.score = Array.from({ length: count }, () => 0);
  }

  /**
   * @param {number} id
   * @param {number} delta
   */
  add(id, delta) {
    const from = this.score[id] ?? 0;
    const to = Math.max(0, from + delta);
    this.buckets[from]?.delete(id);
    while (this.buckets.length <= to) this.buckets.push(new Set());
    this.buckets[to]?.add(id);
    this.score[id] = to;
  }

  /**
   * @param {(id: number) => boolean} eligible
   * @returns {number} the eligible node with the lowest score, or -1
   */
  pickMin(eligible) {
    for (const bucket of this.buckets) {
      for (const id of bucket) if (eligible(id)) return id;
    }
    return -1;
  }

  /**
   * @param {(id: number) => boolean} eligible
   * @returns {number} the eligible node with the highest score, or -1
   */
  pickMax(eligible) {
    for (let s = this.buckets.length - 1; s >= 0; s--) {
      for (const id of this.buckets[s] ?? []) if (eligible(id)) return id;
    }
    return -1;
  }
}
