import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { codeOfStatus, isFreeLoaderError, type ErrorBody } from '@freeloader/protocol';
import { DATABASE_RETRY_AFTER_S, isDatabaseUnavailable } from './db/unavailable.js';
import { validationMessage } from './validation-message.js';

/**
 * The one error handler: FreeLoaderError → its status and body; schema validation → 400
 * VALIDATION_FAILED, in words (see validationMessage); Fastify's own 4xx (bad JSON, body too large, wrong media type) → the code
 * for that status; a database that cannot be reached (down, restarting) → 503 UNAVAILABLE;
 * anything else → 500 INTERNAL with a generic message, the real error only in the log. Every
 * 503 UNAVAILABLE carries Retry-After, so clients back off instead of giving up.
 */
export function errorHandler(
  err: FastifyError | Error,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (isFreeLoaderError(err)) {
    // 502–504 are a source's or the database's trouble, answered as such: a warning. 500 is ours.
    if (err.status === 500) req.log.error({ err }, 'request failed');
    else if (err.status > 500) req.log.warn({ err }, 'request failed');
    if (err.code === 'UNAVAILABLE') reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
    return reply.status(err.status).send(err.toBody());
  }
  if (isDatabaseUnavailable(err)) {
    req.log.warn({ err: String(err) }, 'database unavailable');
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
    return reply
      .status(503)
      .send(body('UNAVAILABLE', 'the database is unavailable; retry shortly'));
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    return reply.status(400).send(body('VALIDATION_FAILED', validationMessage(fe, req)));
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return reply.status(status).send(body(codeOfStatus(status), fe.message));
  }
  req.log.error({ err }, 'unhandled error');
  return reply.status(500).send(body('INTERNAL', 'internal error; see the manager log'));
}

/** 404 in our error shape for unknown routes under /api and /docs. */
export function notFoundBody(method: string, url: string): ErrorBody {
  return body('NOT_FOUND', `no route ${method} ${url.split('?')[0]}`);
}

function body(code: ErrorBody['error']['code'], message: string): ErrorBody {
  return { error: { code, message } };
}
