import type { FastifyError, FastifyInstance } from 'fastify';
import {
  codeOfStatus,
  FreeLoaderError,
  isFreeLoaderError,
  type ErrorBody,
} from '@freeloader/protocol';

/**
 * The service's one error mapping: FreeLoaderError → its status and ErrorBody; Fastify's own
 * errors (schema validation, body too large, bad media type) → their status with a protocol code;
 * anything else → 500 INTERNAL without internals (logged instead).
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | FreeLoaderError, request, reply) => {
    const fl = toFreeLoaderError(err);
    if (fl.status >= 500) request.log.error({ err }, 'morsel service error');
    // A batch stream fails after its headers went out: the client sees a cut-off body.
    if (reply.sent || reply.raw.headersSent) return;
    return reply.code(fl.status).header('cache-control', 'no-store').send(fl.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const body: ErrorBody = {
      error: {
        code: 'NOT_FOUND',
        message: `no route ${request.method} ${request.url.split('?')[0]}`,
      },
    };
    return reply.code(404).send(body);
  });
}

function toFreeLoaderError(err: FastifyError | FreeLoaderError): FreeLoaderError {
  if (isFreeLoaderError(err)) return err;
  if (err.validation) return new FreeLoaderError('VALIDATION_FAILED', err.message);
  const status = err.statusCode ?? 500;
  if (status === 413) {
    return new FreeLoaderError(
      'PAYLOAD_TOO_LARGE',
      'morsel body is larger than the service accepts',
    );
  }
  if (status >= 400 && status < 500) return new FreeLoaderError(codeOfStatus(status), err.message);
  return new FreeLoaderError('INTERNAL', 'internal error');
}
