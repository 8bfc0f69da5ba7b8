import { Type, type Static } from '@sinclair/typebox';
import { ERROR_STATUS } from '../errors.js';
import { MAX_NAME_LENGTH, MAX_PATH_LENGTH, MAX_URI_LENGTH } from '../limits.js';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });

/** A name in the namespace: no slash, no control characters, not "." or "..". */
export const Name = Type.String({
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: '^(?!\\.{1,2}$)[^/\\x00-\\x1f]+$',
});

/** A namespace path like `climate/cmip6/tas.nc` (no leading slash, no empty segments). */
export const NamespacePath = Type.String({
  minLength: 1,
  maxLength: MAX_PATH_LENGTH,
  pattern: '^(?!/)(?!.*//)(?!.*/$)(?!(.*/)?\\.{1,2}(/|$))[^\\x00-\\x1f]+$',
});

export const Uri = Type.String({ minLength: 1, maxLength: MAX_URI_LENGTH });

/** Byte counts travel as JSON numbers (exact up to 2^53, i.e. 8 PiB). */
export const Bytes = Type.Integer({ minimum: 0 });

export const Timestamp = Type.String({ format: 'date-time' });

export const ErrorCodeSchema = Type.Union(
  Object.keys(ERROR_STATUS).map((code) => Type.Literal(code)),
);

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'ErrorBody' },
);
export type ErrorBodyT = Static<typeof ErrorBodySchema>;

export const Ok = Type.Object({ ok: Type.Literal(true) });
