import {
  FreeLoaderError,
  SHA256_BYTES,
  morselCount,
  signCapability,
  type DatasetView,
  type PatchHashes,
  type PatchReport,
  type PatchSessionPlan,
  type PatchSessionView,
  type SuffixPlan,
  type SuffixPlanRequest,
} from '@freeloader/protocol';
import { isEncrypted, type DataKeys } from '../repositories/dataset-keys.js';
import type { NamespaceRepo } from '../repositories/namespace.js';
import { donorsOfDataset, getHashes, putMorselHashes } from '../repositories/placement.js';
import {
  addPatchReport,
  getPatchSession,
  insertPatchSession,
  listPatchSessions,
  replacePatchSession,
  type PatchSessionRow as SessionRow,
} from '../repositories/prefix-patch-sessions.js';
import { iso } from '../repositories/rows.js';
import type { SigningKeys } from '../repositories/settings.js';
import type { PrefixDeps } from './deps.js';
import { pickPatchNodes, type PatchNodeDeps } from './patch-nodes.js';
import { DEFAULT_REQUEST_SIZE, MAX_REQUEST_SIZE, type SourceRegistry } from './source-registry.js';
import { sourceKey } from './source-key.js';

/** Patch width when the dataset has no cached prefix to match (seed 002 §5.2 used up to 10). */
export const DEFAULT_PATCH_WIDTH = 8;
/** Lifetime of the capability patching nodes shuffle with (seconds). */
const SHUFFLE_CAPABILITY_TTL_S = 6 * 3600;

const toView = (r: SessionRow): PatchSessionView => ({
  id: r.id,
  datasetId: r.dataset_id,
  client: r.client,
  state: r.state,
  firstMorsel: r.first_morsel,
  endMorsel: r.end_morsel,
  requestSize: r.request_size,
  nodes: r.nodes,
  bytes: r.bytes,
  rate: r.rate,
  createdAt: iso(r.created_at),
});

const toPlan = (r: SessionRow, etag: string | null): SuffixPlan => ({
  sessionId: r.id,
  datasetId: r.dataset_id!,
  firstMorsel: r.first_morsel,
  endMorsel: r.end_morsel,
  requestSize: r.request_size,
  nodes: r.nodes,
  etag,
});

/**
 * The request size for a suffix: the source's good size, at most what a patching node may
 * buffer, and small enough that every node gets at least one request; whole morsels.
 *
 * @example patchRequestSize(64 * MiB, 14 * MiB, 3, MiB) // → 5 MiB
 */
export function patchRequestSize(
  preferred: number,
  suffixBytes: number,
  width: number,
  morselSize: number,
): number {
  const share = Math.ceil(suffixBytes / Math.max(1, width));
  const bytes = Math.max(morselSize, Math.min(preferred, MAX_REQUEST_SIZE, share));
  return Math.ceil(bytes / morselSize) * morselSize;
}

/** What patch sessions need: nodes to pick, the dataset and its hashes, sources, the signer. */
export interface PatchSessionDeps extends PatchNodeDeps, Pick<PrefixDeps, 'log'> {
  namespaceRepo: Pick<NamespaceRepo, 'get'>;
  sources: Pick<SourceRegistry, 'get' | 'observe'>;
  signingKeys: Pick<SigningKeys, 'privateKey'>;
  dataKeys: Pick<DataKeys, 'get'>;
}

/** Patch sessions: the manager's side of collective downloads (seed 002 §4.2). */
export function createPatchSessions(deps: PatchSessionDeps) {
  async function row(id: string): Promise<SessionRow> {
    const found = await getPatchSession(deps.pg, id);
    if (!found) throw new FreeLoaderError('PATCH_SESSION_NOT_FOUND', `no patch session ${id}`);
    return found;
  }

  function memberOf(r: SessionRow, agentId: string): void {
    if (!r.nodes.some((n) => n.id === agentId)) {
      throw new FreeLoaderError('FORBIDDEN', `agent ${agentId} is not patching session ${r.id}`);
    }
  }

  return {
    /**
     * Open a session patching `dataset`'s uncached suffix (from `req.fromMorsel` on) for
     * `client`: pick the nodes and the request size. With `replaces`, the old one is closed.
     */
    async open(dataset: DatasetView, client: string, req: SuffixPlanRequest): Promise<SuffixPlan> {
      if (dataset.state !== 'ready') {
        throw new FreeLoaderError(
          'DATASET_NOT_READY',
          `dataset ${dataset.path} is ${dataset.state}`,
        );
      }
      if (!dataset.sourceUri) {
        throw new FreeLoaderError(
          'BAD_REQUEST',
          `dataset ${dataset.path} has no source to patch from`,
        );
      }
      const count = morselCount(dataset.sizeBytes, dataset.morselSize);
      const cached = Math.floor(dataset.cachedBytes / dataset.morselSize);
      // An explicit `fromMorsel` is honoured even below the cached prefix: a reader whose map
      // predates a prefix extension (issue 7) still needs the morsels its map does not place.
      const first = Math.min(count, req.fromMorsel ?? cached);
      // At least the prefix's stripe width (seed 002 §5.2), and wide by default: the aggregate
      // patch rate grows with the number of nodes (seed Fig. 4).
      const holders = await donorsOfDataset(deps.pg, dataset.id);
      const width = req.width ?? Math.max(holders.length, DEFAULT_PATCH_WIDTH);
      const nodes = await pickPatchNodes(deps, dataset.id, width, req.exclude);
      const key = sourceKey(dataset.sourceUri);
      const stats = key ? await deps.sources.get(key) : null;
      const suffixBytes = Math.max(0, dataset.sizeBytes - first * dataset.morselSize);
      const requestSize = patchRequestSize(
        req.requestSize ?? stats?.requestSize ?? DEFAULT_REQUEST_SIZE,
        suffixBytes,
        nodes.length,
        dataset.morselSize,
      );
      if (req.replaces) await replacePatchSession(deps.pg, req.replaces, dataset.id);
      const opened = await insertPatchSession(deps.pg, {
        datasetId: dataset.id,
        client,
        first,
        end: count,
        requestSize,
        nodes,
        source: key,
      });
      deps.log.info(
        { session: opened.id, dataset: dataset.id, first, end: count, nodes: nodes.length },
        'patch session opened',
      );
      return toPlan(opened, dataset.etag);
    },

    /** What a member node needs to start: the plan, the source, the shuffle capability. */
    async planFor(id: string, agentId: string): Promise<PatchSessionPlan> {
      const r = await row(id);
      memberOf(r, agentId);
      if (r.state !== 'active' || !r.dataset_id) {
        throw new FreeLoaderError('CONFLICT', `patch session ${id} is ${r.state}`);
      }
      const dataset = await deps.namespaceRepo.get(r.dataset_id);
      if (!dataset?.sourceUri) throw new FreeLoaderError('DATASET_NOT_FOUND', `dataset is gone`);
      const hashes = await getHashes(deps.pg, dataset.id, r.first_morsel);
      let hashesFrom = r.first_morsel;
      while (hashesFrom < r.end_morsel) {
        const at = (hashesFrom - r.first_morsel) * SHA256_BYTES;
        const digest = hashes.subarray(at, at + SHA256_BYTES);
        if (digest.length < SHA256_BYTES || digest.every((b) => b === 0)) break;
        hashesFrom++;
      }
      const writeCapability = signCapability(deps.signingKeys.privateKey, {
        ds: dataset.id,
        ops: ['write'],
        sub: `patch:${id}`,
        aud: r.nodes.map((n) => n.id),
        exp: Math.floor(Date.now() / 1000) + SHUFFLE_CAPABILITY_TTL_S,
      });
      // Encrypted: the nodes seal a copy of each morsel the manager has no hash for, to report
      // the hash and tag donors would store (the plain text they download from the source
      // anyway; they serve it in clear to the reader, who checks it, and store nothing).
      const key = hashesFrom < r.end_morsel ? await deps.dataKeys.get(dataset.id) : undefined;
      return {
        plan: toPlan(r, dataset.etag),
        source: {
          uri: dataset.sourceUri,
          size: dataset.sizeBytes,
          etag: dataset.etag,
          lastModified: dataset.lastModified,
          acceptsRanges: true,
        },
        morselSize: dataset.morselSize,
        writeCapability,
        hashesFrom,
        ...(key ? { dataKey: key.toString('base64') } : {}),
      };
    },

    /**
     * A node's account of its download. The aggregate R_patch is the sum of the nodes' rates
     * (they download concurrently); once every node reported, the session's rate and its
     * latency go to the source registry.
     */
    async report(id: string, agentId: string, rep: PatchReport): Promise<void> {
      const r = await row(id);
      memberOf(r, agentId);
      const nodeRate = rep.activeSeconds > 0 ? rep.bytes / rep.activeSeconds : 0;
      const now = await addPatchReport(deps.pg, id, rep.bytes, nodeRate);
      if (rep.errorCode) {
        deps.log.warn(
          { session: id, agent: agentId, code: rep.errorCode, err: rep.error },
          'patch node failed',
        );
      }
      if (!r.source) return;
      if (rep.latencyMs !== undefined) {
        await deps.sources.observe(r.source, { latencyS: rep.latencyMs / 1000 });
      }
      const complete = now.reports === now.nodes.length;
      // Tiny sessions say more about startup than about bulk rate: skip those.
      if (complete && now.rate && now.bytes >= now.nodes.length * r.request_size) {
        await deps.sources.observe(r.source, {
          patchRate: now.rate,
          patchWidth: now.nodes.length,
        });
      }
    },

    /**
     * Hashes of patched morsels the manager had none for: later reads verify against them. For
     * an encrypted dataset only those that come with their tag: the hash of the sealed morsel
     * (a plain-text hash in its map would fail every sealed copy donors, fan-outs and
     * extensions check against it).
     */
    async hashes(id: string, agentId: string, body: PatchHashes): Promise<void> {
      const r = await row(id);
      memberOf(r, agentId);
      if (!r.dataset_id) return;
      const sealed = await isEncrypted(deps.pg, r.dataset_id);
      const inSuffix = body.hashes.filter(
        (h) =>
          h.index >= r.first_morsel && h.index < r.end_morsel && (!sealed || h.tag !== undefined),
      );
      await putMorselHashes(deps.pg, r.dataset_id, inSuffix);
    },

    async list(limit = 50): Promise<PatchSessionView[]> {
      return (await listPatchSessions(deps.pg, limit)).map(toView);
    },
  };
}
export type PatchSessions = ReturnType<typeof createPatchSessions>;
