import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema as E } from '@freeloader/protocol';
import { requireUser } from '../auth/guards.js';
import { eventAudience } from './event-audience.js';

/** Comment line sent on idle streams so proxies and browsers keep them open (milliseconds). */
const KEEPALIVE_MS = 15_000;

/**
 * `GET /events`: the event bus as server-sent events (`event: <type>` + JSON `data:`), for the
 * console's live views. Streams end when the client goes or the manager closes.
 */
const events: FastifyPluginAsyncTypebox = async (app) => {
  const open = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const res of open) res.end();
  });

  app.get(
    '/events',
    {
      preHandler: requireUser(),
      schema: {
        tags: ['events'],
        summary: 'Live agent, transfer and dataset events (text/event-stream)',
        produces: ['text/event-stream'],
        response: {
          200: Type.String({ description: 'a stream of `event:`/`data:` records' }),
          401: E,
          500: E,
        },
      },
    },
    async (req, reply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 3000\n: connected\n\n');
      open.add(res);
      // Only events about datasets the caller may read (event-audience.ts).
      const unsubscribe = app.events.subscribeAll(
        eventAudience(req, (e) => {
          if (!res.writableEnded) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
        }),
      );
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      keepalive.unref();
      res.on('close', () => {
        unsubscribe();
        clearInterval(keepalive);
        open.delete(res);
      });
    },
  );
};
export default events;
