import type { FastifyError, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { NamespacePath } from '@freeloader/protocol';
import { pathProblem, printable } from './repositories/path-problem.js';

/**
 * The words for a schema validation failure. A namespace path that fails the `NamespacePath`
 * pattern says what is wrong with that path (the raw regex means nothing to a scientist), and a
 * string that is too short or too long says so; anything else keeps Ajv's own message, which is
 * already readable ("body/width must be integer").
 *
 * @example
 *   // POST /datasets {"uri": "...", "name": "/climate/tas.nc"}
 *   validationMessage(err, req)
 *   // → `name "/climate/tas.nc" must not start with '/' (paths are relative, like climate/tas.nc)`
 */
export function validationMessage(err: FastifyError, req: FastifyRequest): string {
  const first = err.validation?.[0];
  if (!first) return err.message;
  const value = valueAt(containerOf(req, err.validationContext), first.instancePath);
  const field = fieldName(first, err.validationContext);
  if (typeof value !== 'string') return err.message;
  if (first.keyword === 'pattern' && first.params.pattern === NamespacePath.pattern) {
    const problem = pathProblem(value);
    if (problem) return `${field} "${printable(value)}" ${problem}`;
  }
  if (first.keyword === 'minLength' && value.length === 0) return `${field} must not be empty`;
  if (first.keyword === 'maxLength') {
    return `${field} is ${value.length} characters long; at most ${String(first.params.limit)} are allowed`;
  }
  return err.message;
}

function containerOf(req: FastifyRequest, context: string | undefined): unknown {
  if (context === 'body') return req.body;
  if (context === 'querystring') return req.query;
  if (context === 'params') return req.params;
  if (context === 'headers') return req.headers;
  return undefined;
}

/** Follow a JSON pointer ("/extents/0/name") into the request data. */
function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** "name" for body/name; the context alone ("querystring") when the pointer is empty. */
function fieldName(e: FastifySchemaValidationError, context: string | undefined): string {
  const parts = e.instancePath.split('/').filter(Boolean);
  return parts.length > 0 ? parts.join('.') : (context ?? 'value');
}
