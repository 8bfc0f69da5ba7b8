import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema as E, MAX_DIAGNOSTIC_PROBE_BYTES } from '@freeloader/protocol';
import { requireAgent } from '../auth/guards.js';

const CHUNK = Buffer.alloc(1024 * 1024);

/**
 * Network probes for an agent's join-time diagnostics: it times a download from and an upload
 * to the manager to learn its link rate (seed 000 §5.2.1: "a diagnostic test … when a
 * workstation joins FreeLoader"). Agents only, bounded size, nothing stored.
 */
const diagnostics: FastifyPluginAsyncTypebox = async (app) => {
  // Count uploaded bytes as they stream past; nothing is buffered.
  app.addContentTypeParser(
    'application/octet-stream',
    { bodyLimit: MAX_DIAGNOSTIC_PROBE_BYTES },
    (_req, payload, done) => {
      let bytes = 0;
      payload.on('data', (c: Buffer) => (bytes += c.length));
      payload.on('end', () => done(null, bytes));
      payload.on('error', (e) => done(e, undefined));
    },
  );

  app.get(
    '/diagnostics/download',
    {
      preHandler: requireAgent,
      schema: {
        tags: ['agents'],
        summary: 'Stream `bytes` zero bytes, for an agent to time its download rate',
        querystring: Type.Object({
          bytes: Type.Integer({ minimum: 1, maximum: MAX_DIAGNOSTIC_PROBE_BYTES }),
        }),
      },
    },
    async (req, reply) => {
      let left = req.query.bytes;
      const body = new Readable({
        read() {
          if (left <= 0) return void this.push(null);
          const n = Math.min(left, CHUNK.length);
          left -= n;
          this.push(CHUNK.subarray(0, n));
        },
      });
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(req.query.bytes))
        .header('cache-control', 'no-store')
        .send(body);
    },
  );

  app.post(
    '/diagnostics/upload',
    {
      preHandler: requireAgent,
      bodyLimit: MAX_DIAGNOSTIC_PROBE_BYTES,
      schema: {
        tags: ['agents'],
        summary: 'Swallow an octet-stream body, for an agent to time its upload rate',
        response: {
          200: Type.Object({ received: Type.Integer() }),
          400: E,
          401: E,
          403: E,
          413: E,
        },
      },
    },
    async (req) => ({ received: typeof req.body === 'number' ? req.body : 0 }),
  );
};
export default diagnostics;
