import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';

/** Route params of every `/:id` route; a malformed id is a 400 before any lookup. */
export const IdParams = Type.Object({ id: Uuid });
export type IdParams = Static<typeof IdParams>;
