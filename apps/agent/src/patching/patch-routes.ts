import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  DatasetIdParam,
  FreeLoaderError,
  isErrorCode,
  MAX_MORSELS_PER_DATASET,
  maxMorselBody,
} from '@freeloader/protocol';
import {
  MORSEL_CONTENT_TYPE,
  MORSEL_HASH_HEADER,
  PATCH_FAIL_ROUTE,
  PATCH_MORSEL_ROUTE,
  PATCH_SESSION_ROUTE,
  SOURCE_ETAG_HEADER,
} from '@freeloader/protocol/wire';
import { CapabilityGuard, capabilityFrom } from '../service/capability-guard.js';
import type { PatchRegistry } from './patch-registry.js';

/** Longest a client's GET waits for a patched morsel to arrive (milliseconds). */
export const SERVE_WAIT_MS = Number(process.env.FREELOADER_PATCH_WAIT_MS ?? 60_000);

const SessionParams = Type.Object({ dataset: DatasetIdParam, session: DatasetIdParam });
const MorselParams = Type.Object({
  dataset: DatasetIdParam,
  session: DatasetIdParam,
  index: Type.Integer({ minimum: 0, maximum: MAX_MORSELS_PER_DATASET - 1 }),
});
const CapQuery = Type.Object({ cap: Type.Optional(Type.String()) });
const Failure = Type.Object({ code: Type.String(), message: Type.String({ maxLength: 2000 }) });

export interface PatchRouteDeps {
  registry: PatchRegistry;
  agentId: () => string | undefined;
  managerPublicKey: () => string | undefined;
  onServed?: (bytes: number) => void;
  /** Pace a response body (the governor), or throw while donating is paused. */
  pace?: (body: Buffer | Readable) => Buffer | Readable;
}

/**
 * The patching routes of an agent's morsel service (any agent, bandwidth-only ones included):
 *   POST   /v1/patch/:dataset/:session          join (client; again every few seconds as keep-alive)
 *   GET    /v1/patch/:dataset/:session/:index   a patched morsel, waiting until it arrives
 *   PUT    /v1/patch/:dataset/:session/:index   a peer's shuffled morsel (write capability)
 *   POST   /v1/patch/:dataset/:session/fail     a peer's download failed for good
 *   DELETE /v1/patch/:dataset/:session          the client is done
 * Reads take the client's read capability for the dataset; shuffles the session's write one.
 */
export function registerPatchRoutes(app: FastifyInstance, deps: PatchRouteDeps): void {
  const guard = new CapabilityGuard(deps);
  const check = (
    req: { headers: { authorization?: string }; query: { cap?: string } },
    dataset: string,
    op: 'read' | 'write',
  ) => guard.check(capabilityFrom(req.headers.authorization, req.query), dataset, op);

  void app.register(async (scope) => {
    const r = scope.withTypeProvider<TypeBoxTypeProvider>();

    r.post(
      PATCH_SESSION_ROUTE,
      { schema: { params: SessionParams, querystring: CapQuery } },
      async (req, reply) => {
        check(req, req.params.dataset, 'read');
        const session = await deps.registry.ensure(req.params.dataset, req.params.session);
        session.touch();
        return reply.code(204).send();
      },
    );

    r.get(
      PATCH_MORSEL_ROUTE,
      { exposeHeadRoute: false, schema: { params: MorselParams, querystring: CapQuery } },
      async (req, reply) => {
        const { dataset, session: id, index } = req.params;
        check(req, dataset, 'read');
        const session = await deps.registry.get(dataset, id);
        const gone = new AbortController();
        req.raw.once('close', () => gone.abort());
        const morsel = await session.serve(index, SERVE_WAIT_MS, gone.signal);
        const body = deps.pace ? deps.pace(morsel.data) : morsel.data;
        // Dropped only once the client has it all; a broken transfer may be asked for again.
        reply.raw.once('finish', () => {
          session.delivered(index);
          deps.onServed?.(morsel.data.length);
        });
        return reply
          .header('content-type', MORSEL_CONTENT_TYPE)
          .header('content-length', morsel.data.length)
          .header(MORSEL_HASH_HEADER, morsel.sha256)
          .header(SOURCE_ETAG_HEADER, session.plan.source.etag ?? '')
          .header('cache-control', 'no-store')
          .send(body);
      },
    );

    r.put(
      PATCH_MORSEL_ROUTE,
      { bodyLimit: maxMorselBody(), schema: { params: MorselParams, querystring: CapQuery } },
      async (req, reply) => {
        const { dataset, session: id, index } = req.params;
        check(req, dataset, 'write');
        const sha256 = req.headers[MORSEL_HASH_HEADER];
        if (!Buffer.isBuffer(req.body) || typeof sha256 !== 'string') {
          throw new FreeLoaderError('VALIDATION_FAILED', 'a shuffled morsel needs a body and hash');
        }
        const session = await deps.registry.ensure(dataset, id);
        session.receive(index, { data: req.body, sha256 });
        return reply.code(204).send();
      },
    );

    r.post(
      PATCH_FAIL_ROUTE,
      { schema: { params: SessionParams, querystring: CapQuery, body: Failure } },
      async (req, reply) => {
        check(req, req.params.dataset, 'write');
        const session = await deps.registry.get(req.params.dataset, req.params.session);
        const code = isErrorCode(req.body.code) ? req.body.code : 'SOURCE_ERROR';
        session.peerFailed(new FreeLoaderError(code, req.body.message));
        return reply.code(204).send();
      },
    );

    r.delete(
      PATCH_SESSION_ROUTE,
      { schema: { params: SessionParams, querystring: CapQuery } },
      async (req, reply) => {
        check(req, req.params.dataset, 'read');
        await deps.registry.closeSession(req.params.session);
        return reply.code(204).send();
      },
    );
  });
}
