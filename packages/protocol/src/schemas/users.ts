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

/** Shortest password the manager accepts for a new user. */
export const MIN_PASSWORD_LENGTH = 8;

/** `POST /api/v1/users` (admin): create a console/CLI user. */
export const UserCreate = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }),
  password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 }),
  role: Type.Optional(Role),
});
export type UserCreate = Static<typeof UserCreate>;
