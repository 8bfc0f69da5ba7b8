import { MinBuckets } from './availability-buckets.js';
import { EventQueue } from './availability-events.js';
import { seededRandom } from './availability-random.js';

/**
 * Event-driven simulator of seed 003's architecture ("ThriftStore: Finessing Reliability
 * Trade-Offs in Replicated Storage Systems", §4.2): volatile nodes with transient (Weibull) and
 * permanent (exponential) failures, one durable source, objects kept at replication level n by
 * repair transfers. Like the paper, each node's upload and download channels carry one transfer
 * at a time, FIFO, at the repair cap (b on nodes, B at the source); a repair request goes to a
 * live holder (the source if there is none), which asks the placement scheme for a destination
 * when the request reaches the head of its upload queue and waits for that destination's download
 * channel. Copies on a node that returns from a transient failure are reintegrated; surplus ones
 * are dropped. FreeLoader uses it to provision n, b and B before a deployment exists.
 */

const DAY = 86400;
const YEAR = 365 * DAY;

/**
 * @typedef {'random' | 'most-space' | 'least-transfers'} Placement
 *
 * @typedef {object} SimConfig
 * @property {number} nodes volatile nodes
 * @property {number} objects objects stored
 * @property {number} objectBytes bytes per object
 * @property {number} n replication level on the volatile nodes
 * @property {number} bMbps per-node repair cap b, megabits per second (upload and download)
 * @property {number} BMbps durable source's repair cap B; 0 = no durable component
 * @property {number} years simulated time
 * @property {{ shape: number, scaleS: number } | null} transient time between transient failures of a node (Weibull); null = none
 * @property {number} downtimeMeanS mean length of a transient failure (exponential)
 * @property {number} detectAfterS a node silent this long is declared failed and repair starts
 * @property {number} permanentMttfS mean time to a node's permanent failure (exponential); Infinity = none
 * @property {number} diskObjects objects a node can hold
 * @property {Placement} placement where a repaired replica goes
 * @property {number} seed
 *
 * @typedef {object} SimResult
 * @property {number} meanUnavailability time-average over objects of "no live replica"
 * @property {number[]} unavailability per object, fraction of the run
 * @property {number} lostFraction objects with no copy left at the end (only without a source)
 * @property {number} nodeBytes repair bytes sent by volatile nodes
 * @property {number} sourceBytes repair bytes sent by the durable source
 * @property {number} transfers completed repair transfers
 * @property {number} aborted transfers cut by a failure
 * @property {number} transientFailures
 * @property {number} permanentFailures
 * @property {number} events
 * @property {number} maxUploadBps highest upload rate seen on one node (≤ b)
 * @property {number} maxSourceBps highest upload rate seen at the source (≤ B)
 * @property {Array<[number, number]>} trafficByDay [day, bytes sent that day], for traffic CDFs
 */

/** @type {SimConfig} */
export const PAPER_DEFAULTS = {
  nodes: 1000,
  objects: 32_000,
  objectBytes: 1e9,
  n: 3,
  bMbps: 2,
  BMbps: 1,
  years: 4,
  transient: { shape: 0.49, scaleS: 10 * DAY },
  downtimeMeanS: 4 * 3600,
  detectAfterS: 15 * 60,
  permanentMttfS: YEAR,
  diskObjects: 300,
  placement: 'least-transfers',
  seed: 1,
};

/**
 * @typedef {object} Transfer
 * @property {Obj} obj
 * @property {Node} src
 * @property {Node | null} dst
 * @property {boolean} aborted
 * @property {boolean} active
 *
 * @typedef {object} Node
 * @property {number} id
 * @property {boolean} up
 * @property {boolean} durable
 * @property {number} epoch bumped by a permanent failure: older events for it are void
 * @property {number} downSeq bumped by each transient failure
 * @property {boolean} detected down long enough to be declared failed
 * @property {number} capBps bytes per second
 * @property {Set<Obj>} objects copies held (live or offline)
 * @property {number} stored objects held or reserved for an incoming transfer
 * @property {Transfer[]} upQueue
 * @property {Transfer | null} uploading
 * @property {Transfer[]} downQueue
 * @property {Transfer | null} downloading
 *
 * @typedef {object} Obj
 * @property {number} id
 * @property {Set<Node>} holders
 * @property {number} live holders that are up
 * @property {number} inflight repairs requested and not finished
 * @property {Set<Node>} targets destinations of inflight repairs
 * @property {number} downSince
 * @property {number} unavailable seconds without a live replica
 *
 * @typedef {{ kind: 'fail' | 'return' | 'detect' | 'permanent', node: Node, epoch: number, seq: number }
 *   | { kind: 'done', transfer: Transfer }
 *   | { kind: 'retry', obj: Obj }} SimEvent
 */

/**
 * Run one simulation.
 *
 * @param {Partial<SimConfig>} [overrides]
 * @returns {SimResult}
 * @example simulateAvailability({ nodes: 100, objects: 1000, years: 1, seed: 7 }).meanUnavailability
 */
export function simulateAvailability(overrides = {}) {
  /** @type {SimConfig} */
  const c = { ...PAPER_DEFAULTS, ...overrides };
  if (c.n > c.nodes) throw new RangeError(`n = ${c.n} needs at least ${c.n} nodes`);
  const rnd = seededRandom(c.seed);
  const end = c.years * YEAR;
  /** @type {EventQueue<SimEvent>} */
  const q = new EventQueue();
  const nodeCap = (c.bMbps * 1e6) / 8;
  /** @type {(id: number, durable: boolean, capBps: number) => Node} */
  const makeNode = (id, durable, capBps) => ({
    id,
    up: true,
    durable,
    epoch: 0,
    downSeq: 0,
    detected: false,
    capBps,
    objects: new Set(),
    stored: 0,
    upQueue: [],
    uploading: null,
    downQueue: [],
    downloading: null,
  });
  const nodes = Array.from({ length: c.nodes }, (_, i) => makeNode(i, false, nodeCap));
  const source = makeNode(c.nodes, true, (c.BMbps * 1e6) / 8);
  const incoming = new MinBuckets(c.nodes);
  const filled = new MinBuckets(c.nodes);
  const stats = {
    nodeBytes: 0,
    sourceBytes: 0,
    transfers: 0,
    aborted: 0,
    transientFailures: 0,
    permanentFailures: 0,
    events: 0,
    maxUploadBps: 0,
    maxSourceBps: 0,
  };
  /** @type {Map<number, number>} */
  const daily = new Map();
  let now = 0;

  /** @type {Obj[]} */
  const objects = [];
  for (let id = 0; id < c.objects; id++) {
    /** @type {Obj} */
    const obj = {
      id,
      holders: new Set(),
      live: 0,
      inflight: 0,
      targets: new Set(),
      downSince: 0,
      unavailable: 0,
    };
    while (obj.holders.size < c.n) {
      const node = /** @type {Node} */ (nodes[rnd.int(c.nodes)]);
      if (obj.holders.has(node)) continue;
      store(node, obj);
    }
    obj.live = c.n;
    objects.push(obj);
  }

  /** @type {(node: Node, obj: Obj) => void} */
  function store(node, obj) {
    obj.holders.add(node);
    node.objects.add(obj);
    node.stored++;
    filled.add(node.id, 1);
  }
  /** @type {(node: Node, obj: Obj) => void} */
  function drop(node, obj) {
    obj.holders.delete(node);
    node.objects.delete(obj);
    node.stored--;
    filled.add(node.id, -1);
  }
  /** @type {(obj: Obj, delta: number) => void} */
  function setLive(obj, delta) {
    const was = obj.live;
    obj.live += delta;
    if (was > 0 && obj.live === 0) obj.downSince = now;
    else if (was === 0 && obj.live > 0) obj.unavailable += now - obj.downSince;
  }

  /** @type {(obj: Obj, src: Node) => (id: number) => boolean} */
  const eligibleFor = (obj, src) => (id) => {
    const node = /** @type {Node} */ (nodes[id]);
    return (
      node.up &&
      node !== src &&
      node.stored < c.diskObjects &&
      !obj.holders.has(node) &&
      !obj.targets.has(node)
    );
  };
  /** @type {(obj: Obj, src: Node) => Node | null} */
  function placeReplica(obj, src) {
    const ok = eligibleFor(obj, src);
    let id = -1;
    if (c.placement === 'least-transfers') id = incoming.pickMin(ok);
    else if (c.placement === 'most-space') id = filled.pickMin(ok);
    else {
      for (let tries = 0; tries < 64 && id < 0; tries++) {
        const pick = rnd.int(c.nodes);
        if (ok(pick)) id = pick;
      }
      if (id < 0) id = incoming.pickMin(ok); // nearly everything full or down: take any
    }
    return id < 0 ? null : /** @type {Node} */ (nodes[id]);
  }

  /** Copies the metadata service still believes in: live ones and those not yet timed out. */
  /** @type {(obj: Obj) => number} */
  function counted(obj) {
    let k = obj.live;
    for (const h of obj.holders) if (!h.up && !h.detected) k++;
    return k;
  }

  /** Request repairs until counted copies + inflight reach n, from the least busy live holder. */
  /** @type {(obj: Obj) => void} */
  function ensureRepair(obj) {
    while (counted(obj) + obj.inflight < c.n) {
      /** @type {Node | null} */
      let src = null;
      for (const h of obj.holders) {
        if (!h.up) continue;
        if (src === null || busy(h) < busy(src)) src = h;
      }
      if (src === null) {
        if (c.BMbps <= 0 || obj.inflight > 0) return; // the source seeds one copy at a time
        src = source;
      }
      obj.inflight++;
      src.upQueue.push({ obj, src, dst: null, aborted: false, active: false });
      pumpUp(src);
    }
  }
  /** @type {(node: Node) => number} */
  const busy = (node) => node.upQueue.length + (node.uploading ? 1 : 0);

  /** @type {(src: Node) => void} */
  function pumpUp(src) {
    while (src.uploading === null && src.up && src.upQueue.length > 0) {
      const t = /** @type {Transfer} */ (src.upQueue.shift());
      if (t.aborted) continue;
      const obj = t.obj;
      // A reintegrated copy may have made this request surplus.
      if (counted(obj) + obj.inflight - 1 >= c.n || (src.durable && obj.live > 0)) {
        obj.inflight--;
        continue;
      }
      const dst = placeReplica(obj, src);
      if (dst === null) {
        obj.inflight--;
        q.push(now + 3600, { kind: 'retry', obj });
        continue;
      }
      t.dst = dst;
      src.uploading = t;
      obj.targets.add(dst);
      dst.stored++;
      filled.add(dst.id, 1);
      incoming.add(dst.id, 1);
      dst.downQueue.push(t);
      pumpDown(dst);
    }
  }
  /** @type {(dst: Node) => void} */
  function pumpDown(dst) {
    while (dst.downloading === null && dst.up && dst.downQueue.length > 0) {
      const t = /** @type {Transfer} */ (dst.downQueue.shift());
      if (t.aborted) continue;
      t.active = true;
      dst.downloading = t;
      const rate = Math.min(t.src.capBps, dst.capBps);
      if (t.src.durable) stats.maxSourceBps = Math.max(stats.maxSourceBps, rate);
      else stats.maxUploadBps = Math.max(stats.maxUploadBps, rate);
      q.push(now + c.objectBytes / rate, { kind: 'done', transfer: t });
    }
  }
  /** Undo a transfer's bookkeeping (finished or aborted), then let both ends move on. */
  /** @type {(t: Transfer) => void} */
  function release(t) {
    const dst = /** @type {Node} */ (t.dst);
    t.obj.inflight--;
    t.obj.targets.delete(dst);
    dst.stored--;
    filled.add(dst.id, -1);
    incoming.add(dst.id, -1);
    if (t.src.uploading === t) t.src.uploading = null;
    if (dst.downloading === t) dst.downloading = null;
  }
  /** @type {(t: Transfer, touched: Set<Obj>) => void} */
  function abort(t, touched) {
    if (t.aborted) return;
    t.aborted = true;
    stats.aborted++;
    if (t.dst === null) t.obj.inflight--;
    else release(t);
    touched.add(t.obj);
  }
  /** Abort every transfer to or from a failing node; returns the objects to re-check. */
  /** @type {(node: Node) => Set<Obj>} */
  function abortAll(node) {
    /** @type {Set<Obj>} */
    const touched = new Set();
    /** @type {Set<Node>} */
    const peers = new Set();
    for (const t of node.upQueue) abort(t, touched);
    node.upQueue = [];
    for (const t of [node.uploading, node.downloading, ...node.downQueue]) {
      if (t === null) continue;
      const peer = t.src === node ? t.dst : t.src;
      abort(t, touched);
      if (peer) peers.add(peer);
    }
    node.downQueue = [];
    node.uploading = null;
    node.downloading = null;
    for (const peer of peers) {
      pumpUp(peer);
      pumpDown(peer);
    }
    return touched;
  }

  /** @type {(t: Transfer) => void} */
  function done(t) {
    if (t.aborted) return;
    const dst = /** @type {Node} */ (t.dst);
    release(t);
    stats.transfers++;
    if (t.src.durable) stats.sourceBytes += c.objectBytes;
    else stats.nodeBytes += c.objectBytes;
    const day = Math.floor(now / DAY);
    daily.set(day, (daily.get(day) ?? 0) + c.objectBytes);
    store(dst, t.obj);
    setLive(t.obj, 1);
    ensureRepair(t.obj);
    pumpUp(t.src);
    pumpDown(dst);
  }

  /** @type {(node: Node) => void} */
  function scheduleTransient(node) {
    if (c.transient === null) return;
    const t = now + rnd.weibull(c.transient.shape, c.transient.scaleS);
    q.push(t, { kind: 'fail', node, epoch: node.epoch, seq: node.downSeq });
  }
  /** @type {(node: Node) => void} */
  function schedulePermanent(node) {
    if (!Number.isFinite(c.permanentMttfS)) return;
    q.push(now + rnd.exponential(c.permanentMttfS), {
      kind: 'permanent',
      node,
      epoch: node.epoch,
      seq: 0,
    });
  }

  /** @type {(node: Node) => void} */
  function transientFailure(node) {
    stats.transientFailures++;
    node.up = false;
    node.detected = false;
    node.downSeq++;
    for (const obj of node.objects) setLive(obj, -1);
    const touched = abortAll(node);
    for (const obj of touched) ensureRepair(obj);
    const ev = { node, epoch: node.epoch, seq: node.downSeq };
    q.push(now + c.detectAfterS, { kind: 'detect', ...ev });
    q.push(now + rnd.exponential(c.downtimeMeanS), { kind: 'return', ...ev });
  }
  /** @type {(node: Node) => void} */
  function comeBack(node) {
    node.up = true;
    for (const obj of [...node.objects]) {
      setLive(obj, 1);
      if (obj.live > c.n) {
        setLive(obj, -1);
        drop(node, obj);
      } else ensureRepair(obj);
    }
    scheduleTransient(node);
  }
  /** @type {(node: Node) => void} */
  function permanentFailure(node) {
    stats.permanentFailures++;
    const touched = abortAll(node);
    for (const obj of [...node.objects]) {
      if (node.up) setLive(obj, -1);
      drop(node, obj);
      touched.add(obj);
    }
    // A fresh, empty node replaces it at once; pending events of the old one are void.
    node.epoch++;
    node.downSeq++;
    node.up = true;
    scheduleTransient(node);
    schedulePermanent(node);
    for (const obj of touched) ensureRepair(obj);
  }

  for (const node of nodes) {
    scheduleTransient(node);
    schedulePermanent(node);
  }
  for (;;) {
    const next = q.pop();
    if (next === undefined || next.t > end) break;
    now = next.t;
    stats.events++;
    const ev = next.ev;
    if (ev.kind === 'done') done(ev.transfer);
    else if (ev.kind === 'retry') ensureRepair(ev.obj);
    else if (ev.node.epoch !== ev.epoch) continue;
    else if (ev.kind === 'permanent') permanentFailure(ev.node);
    else if (ev.kind === 'fail') {
      if (ev.node.up && ev.seq === ev.node.downSeq) transientFailure(ev.node);
    } else if (ev.seq !== ev.node.downSeq || ev.node.up) continue;
    else if (ev.kind === 'return') comeBack(ev.node);
    else {
      ev.node.detected = true;
      for (const obj of ev.node.objects) ensureRepair(obj);
    }
  }
  now = end;
  const unavailability = objects.map((obj) => {
    const open = obj.live === 0 ? now - obj.downSince : 0;
    return (obj.unavailable + open) / end;
  });
  return {
    meanUnavailability: unavailability.reduce((a, b) => a + b, 0) / Math.max(1, objects.length),
    unavailability,
    lostFraction:
      c.BMbps > 0
        ? 0
        : objects.filter((o) => o.holders.size === 0).length / Math.max(1, objects.length),
    ...stats,
    trafficByDay: [...daily.entries()].sort((a, b) => a[0] - b[0]),
  };
}
