import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  AgentHealthResponse,
  BatchQuery,
  DatasetParams,
  FreeLoaderError,
  isFreeLoaderError,
  isRepairSubject,
  MAX_MORSELS_PER_DATASET,
  REPAIR_YIELD_MAX_HOLD_MS,
  maxMorselBody,
  MorselParams,
} from '@freeloader/protocol';
import {
  DATASET_MORSELS_ROUTE,
  MORSEL_CONTENT_TYPE,
  MORSEL_HASH_HEADER,
  MORSEL_ROUTE,
} from '@freeloader/protocol/wire';
import type { ForegroundYield } from '../governor/foreground-yield.js';
import type { MorselStore } from '../store/store.js';
import { BatchFrameStream, nextHeldMorsel } from './batch-stream.js';
import { CapabilityGuard, capabilityFrom } from './capability-guard.js';
import { BufferPool } from './buffer-pool.js';
import { installErrorHandler } from './error-handler.js';
import { installLeanMorselPath, type LeanMorsel } from './lean-morsel-path.js';
import { sendFileSupported } from '../native/send-file.js';

/** Idle keep-alive of the listener: longer than typical client pools' idle timeouts (60 s). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

const OCTET = MORSEL_CONTENT_TYPE;
const CapQuery = Type.Object({ cap: Type.Optional(Type.String()) });

export interface MorselServiceOptions {
  store: MorselStore;
  /** This agent's id once enrolled (capabilities with an audience must name it). */
  agentId: () => string | undefined;
  /** The manager's Ed25519 public key (PEM) once enrolled; until then morsel routes answer 503. */
  managerPublicKey: () => string | undefined;
  logger?: FastifyServerOptions['logger'];
  /** Called with the morsel bytes of every GET and every batch frame sent (for the governor). */
  onServed?: (bytes: number) => void;
  /**
   * Every GET response body goes through this (the serving governor): it returns the body
   * paced, or throws (UNAVAILABLE while the owner paused donating). Absent: sent as is.
   */
  pace?: (body: Buffer | Readable) => Buffer | Readable;
  /**
   * Called when a PUT targets a dataset the store does not hold; create it in the store (e.g.
   * from a claimed job) and resolve true to have the put retried. Absent: such a PUT is 404.
   */
  prepareDataset?: (datasetId: string) => Promise<boolean>;
  /**
   * Reads under a repair capability are background: held their turn while clients read here
   * (at most REPAIR_YIELD_MAX_HOLD_MS a morsel); every other read marks the donor busy.
   */
  foreground?: ForegroundYield;
}

/**
 * The agent's morsel service (routes in `@freeloader/protocol` schemas/morsels.ts) plus
 * `GET /v1/health`. Does not listen: see {@link listenMorselService}.
 *
 * Batch reads (`batchPath` in the wire) stream one frame per morsel this donor
 * holds in [from, from+count), in index order; indices it does not hold are skipped, so a client
 * reads the frame headers' indices rather than assuming a count. An unknown dataset is 404.
 *
 * @example
 *   const app = buildMorselService({ store, agentId: () => id, managerPublicKey: () => pem });
 *   const url = await listenMorselService(app, '127.0.0.1', 7401);
 */
export function buildMorselService(opts: MorselServiceOptions): FastifyInstance {
  const { store, onServed } = opts;
  const buffers = new BufferPool();
  // A dataset's morsel size never changes (create refuses another), so one stat per dataset.
  const morselSizes = new Map<string, number>();
  const morselSizeOf = async (dataset: string): Promise<number> => {
    let size = morselSizes.get(dataset);
    if (size === undefined) {
      size = (await store.stat(dataset)).morselSize;
      morselSizes.set(dataset, size);
    }
    return size;
  };
  const guard = new CapabilityGuard(opts);
  /** Check that `token` may read; a repair's read waits its turn. Resolves the morsel size. */
  const admitRead = async (token: string | undefined, dataset: string): Promise<number> => {
    const sub = guard.check(token, dataset, 'read');
    const size = await morselSizeOf(dataset);
    if (isRepairSubject(sub))
      await opts.foreground?.background(size, undefined, REPAIR_YIELD_MAX_HOLD_MS);
    else opts.foreground?.noteForeground();
    return size;
  };
  /** A morsel `token` may read, in a pooled buffer that `release` gives back; throws otherwise. */
  const readMorsel = async (
    token: string | undefined,
    dataset: string,
    index: number,
  ): Promise<LeanMorsel & { data: Buffer }> => {
    const size = await admitRead(token, dataset);
    const buf = buffers.take(size);
    try {
      const { data, sha256 } = await store.get(dataset, index, buf);
      return { data, sha256, release: () => buffers.give(buf) };
    } catch (e) {
      buffers.give(buf);
      throw e;
    }
  };
  const app = Fastify({ logger: opts.logger ?? false, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS });
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandler(app);
  app.addContentTypeParser(OCTET, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  r.get('/v1/health', { schema: { response: { 200: AgentHealthResponse } } }, async () => {
    const { usedBytes, quotaBytes } = store.usage();
    return { ok: true as const, agentId: opts.agentId() ?? null, usedBytes, quotaBytes };
  });

  r.get(
    MORSEL_ROUTE,
    { schema: { params: MorselParams, querystring: CapQuery } },
    async (req, reply) => {
      const { dataset, index } = req.params;
      const token = capabilityFrom(req.headers.authorization, req.query);
      const { data, sha256, release } = await readMorsel(token, dataset, index);
      // Back to the pool once the response is done with it (sent, or the client went away).
      reply.raw.once('close', release);
      const body = req.method === 'GET' && opts.pace ? opts.pace(data) : data;
      if (req.method === 'GET') onServed?.(data.length);
      const headers = {
        'content-type': OCTET,
        'content-length': data.length,
        [MORSEL_HASH_HEADER]: sha256,
        'cache-control': 'no-store',
      };
      if (!Buffer.isBuffer(body)) return reply.headers(headers).send(body);
      // Unpaced morsels on connections node:http owns (see installLeanMorselPath for the rest):
      // past Fastify's reply pipeline. HEAD gets no body.
      reply.hijack();
      reply.raw.writeHead(200, headers);
      reply.raw.end(body);
      return reply;
    },
  );

  // Plain morsel GETs (all a reading client sends) skip node:http and Fastify altogether, and
  // their bodies go from the store's file to the socket without passing through JavaScript.
  const lendMorsel = store.locate && sendFileSupported() ? store.locate.bind(store) : undefined;
  const lean = installLeanMorselPath(
    app.server,
    async (dataset, index, authorization) => {
      let morsel: (LeanMorsel & { data: Buffer }) | undefined;
      try {
        const token = capabilityFrom(authorization, undefined);
        if (lendMorsel && unpacedNow(opts.pace)) {
          await admitRead(token, dataset);
          const { sha256, release, ...span } = await lendMorsel(dataset, index);
          onServed?.(span.length);
          return { span, sha256, release };
        }
        const read = await readMorsel(token, dataset, index);
        morsel = read;
        const body = opts.pace ? opts.pace(read.data) : read.data;
        if (body !== read.data) {
          // Paced: the route sends it (this stream may have taken a slice's tokens already).
          (body as Readable).destroy();
          read.release();
          return undefined;
        }
        onServed?.(read.data.length);
        return read;
      } catch {
        // The route answers again, with the full service's error.
        morsel?.release();
        return undefined;
      }
    },
    KEEP_ALIVE_TIMEOUT_MS,
  );
  app.addHook('preClose', (done) => {
    lean.close();
    done();
  });

  r.put(
    MORSEL_ROUTE,
    // The only route with a body: bounded by the largest morsel the protocol allows.
    { bodyLimit: maxMorselBody(), schema: { params: MorselParams, querystring: CapQuery } },
    async (req, reply) => {
      const { dataset, index } = req.params;
      guard.check(capabilityFrom(req.headers.authorization, req.query), dataset, 'write');
      if (!Buffer.isBuffer(req.body)) {
        throw new FreeLoaderError('VALIDATION_FAILED', `a morsel PUT needs an ${OCTET} body`);
      }
      const hash = req.headers[MORSEL_HASH_HEADER];
      if (Array.isArray(hash)) {
        throw new FreeLoaderError('VALIDATION_FAILED', `send ${MORSEL_HASH_HEADER} once`);
      }
      const { sha256 } = await putPreparing(opts, dataset, index, req.body, hash);
      return reply.code(204).header(MORSEL_HASH_HEADER, sha256).send();
    },
  );

  r.delete(
    MORSEL_ROUTE,
    { schema: { params: MorselParams, querystring: CapQuery } },
    async (req, reply) => {
      const { dataset, index } = req.params;
      guard.check(capabilityFrom(req.headers.authorization, req.query), dataset, 'delete');
      await store.free(dataset, index);
      return reply.code(204).send();
    },
  );

  r.delete(
    DATASET_MORSELS_ROUTE,
    { schema: { params: DatasetParams, querystring: CapQuery } },
    async (req, reply) => {
      const { dataset } = req.params;
      guard.check(capabilityFrom(req.headers.authorization, req.query), dataset, 'delete');
      await store.free(dataset);
      morselSizes.delete(dataset);
      return reply.code(204).send();
    },
  );

  r.get(
    DATASET_MORSELS_ROUTE,
    // No HEAD twin: it would read the whole batch from disk only to discard it.
    { exposeHeadRoute: false, schema: { params: DatasetParams, querystring: BatchQuery } },
    async (req, reply) => {
      const { dataset } = req.params;
      const { from, count } = req.query;
      const sub = guard.check(
        capabilityFrom(req.headers.authorization, req.query),
        dataset,
        'read',
      );
      if (!isRepairSubject(sub)) opts.foreground?.noteForeground();
      const end = Math.min(from + count, MAX_MORSELS_PER_DATASET);
      // Fetch the first frame before answering, so an unknown dataset is still a clean 404.
      const first = await nextHeldMorsel(store, dataset, from, end);
      const frames = new BatchFrameStream(store, dataset, first, end, onServed);
      return reply
        .header('content-type', OCTET)
        .header('cache-control', 'no-store')
        .send(opts.pace ? opts.pace(frames) : frames);
    },
  );

  return app;
}

async function putPreparing(
  opts: MorselServiceOptions,
  dataset: string,
  index: number,
  body: Buffer,
  hash: string | undefined,
): Promise<{ sha256: string }> {
  try {
    return await opts.store.put(dataset, index, body, hash);
  } catch (err) {
    const unknown = isFreeLoaderError(err) && err.code === 'DATASET_NOT_FOUND';
    if (!unknown || !opts.prepareDataset || !(await opts.prepareDataset(dataset))) throw err;
    return opts.store.put(dataset, index, body, hash);
  }
}

/**
 * Listen on `host:port` (0 = any free port) with keep-alive tuned for morsel clients, and return
 * the service's base URL.
 *
 * @example const url = await listenMorselService(app, '127.0.0.1', 0); // 'http://127.0.0.1:40123'
 */
export async function listenMorselService(
  app: FastifyInstance,
  host: string,
  port: number,
): Promise<string> {
  await app.listen({ host, port });
  app.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Must exceed keepAliveTimeout, or Node may drop a socket a client is about to reuse.
  app.server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  const addr = app.server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${shown}:${addr.port}`;
}

const NOTHING = Buffer.alloc(0);
/**
 * Whether the serving governor lets a body go out unpaced right now (throws, as `pace` does,
 * while donating is paused). A paced body must pass through JavaScript to be paced.
 */
function unpacedNow(pace: MorselServiceOptions['pace']): boolean {
  if (!pace) return true;
  const body = pace(NOTHING);
  if (body === NOTHING) return true;
  (body as Readable).destroy();
  return false;
}
