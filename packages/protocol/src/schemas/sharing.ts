import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';

/** Group names: what `freeloader group create NAME` accepts. */
const GroupName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' });
const Username = Type.String({ minLength: 1, maxLength: 64 });
const ItemPath = Type.String({ maxLength: 4096 });

/**
 * One audience a folder or dataset is shared with (issue 17 item 2): a group, or the whole site
 * (`group` null). `from` is the path the share is set on: the item itself, or a folder above it
 * it inherits the share from ('' is the root).
 */
export const ShareView = Type.Object({
  groupId: Type.Union([Uuid, Type.Null()]),
  group: Type.Union([Type.String(), Type.Null()]),
  /** The group's managers may also delete, re-import, pin and re-share it. */
  manage: Type.Boolean(),
  from: Type.String(),
});
export type ShareView = Static<typeof ShareView>;

/** Owner and sharing of a dataset or folder, as shown with it. */
export const Ownership = {
  /** Owner's username; null when only admins manage it. */
  owner: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  ownerId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  sharing: Type.Optional(Type.Array(ShareView)),
  /** May the caller delete, re-import, pin and share it (absent where not computed). */
  mayManage: Type.Optional(Type.Boolean()),
};

/** `GET /api/v1/access?path=`: a dataset's or folder's owner and sharing. */
export const AccessView = Type.Object({
  path: Type.String(),
  kind: Type.Union([Type.Literal('dataset'), Type.Literal('folder')]),
  id: Uuid,
  ...Ownership,
});
export type AccessView = Static<typeof AccessView>;

export const AccessQuery = Type.Object({ path: ItemPath });

/** `PUT /api/v1/shares`: share a path with a group or (no group) the whole site. */
export const ShareRequest = Type.Object({
  path: ItemPath,
  /** The group's name; absent: the whole site. */
  group: Type.Optional(GroupName),
  manage: Type.Optional(Type.Boolean()),
});
export type ShareRequest = Static<typeof ShareRequest>;

/** `DELETE /api/v1/shares?path=&group=`: stop sharing with a group or (no group) the site. */
export const UnshareQuery = Type.Object({ path: ItemPath, group: Type.Optional(GroupName) });
export type UnshareQuery = Static<typeof UnshareQuery>;

/** `PUT /api/v1/owner` (admin): give a path to another user. */
export const ChownRequest = Type.Object({ path: ItemPath, username: Username });
export type ChownRequest = Static<typeof ChownRequest>;

export const GroupMember = Type.Object({ username: Type.String(), manager: Type.Boolean() });
export type GroupMember = Static<typeof GroupMember>;

export const GroupView = Type.Object({
  id: Uuid,
  name: Type.String(),
  members: Type.Array(GroupMember),
});
export type GroupView = Static<typeof GroupView>;

export const GroupCreate = Type.Object({ name: GroupName });
export const GroupParams = Type.Object({ name: GroupName });
export const MemberParams = Type.Object({ name: GroupName, username: Username });
export const MemberUpdate = Type.Object({ manager: Type.Optional(Type.Boolean()) });
