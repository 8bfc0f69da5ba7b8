import { Type, type Static } from '@sinclair/typebox';
import { Role } from './auth.js';
import { Uuid } from './common.js';

/** A console/CLI user as the manager shows it (`GET /api/v1/auth/me`). */
export const UserView = Type.Object({
  id: Uuid,
  username: Type.String(),
  role: Role,
});
export type UserView = Static<typeof UserView>;
