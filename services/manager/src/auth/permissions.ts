import type { Role } from '@freeloader/protocol';

/**
 * Who may do what to a folder or dataset: the one definition (issue 17 item 2). Routes build a
 * {@link Principal} and an {@link Item} from the database and ask {@link can}; nothing else
 * decides access.
 *
 * - `read`   (list it, see it, get a read capability and its map): an admin; its owner; every
 *            member of a group it is shared with; everyone when it is shared with the site.
 *            An agent reads only a dataset it holds, patches or repairs (`holders`).
 * - `manage` (delete, re-import, cancel, pin, share and unshare): an admin; its owner; the
 *            managers (not the plain members) of a group it is shared with `manage`.
 *            Agents never manage: they act only through jobs the manager gives them.
 * - `chown`  (give it to another user): admins only.
 *
 * An item's shares are its own plus those of every folder above it (sharing is additive down
 * the tree: sharing `climate` shares `climate/cmip6/tas.nc`).
 */
export type Action = 'read' | 'manage' | 'chown';

/** One audience an item is shared with: a group, or the whole site (`groupId` null). */
export interface Share {
  groupId: string | null;
  /** The group's managers may manage the item too. */
  manage: boolean;
}

/** What access depends on, for one folder or dataset. */
export interface Item {
  /** The owning user; null: nobody but admins manages it. */
  ownerId: string | null;
  /** Its own shares and those inherited from the folders above it. */
  shares: readonly Share[];
  /** Agents that hold, import, patch or repair it (datasets only). */
  holders?: readonly string[];
}

/** A group the user is in, and whether as one of its managers. */
export interface Membership {
  groupId: string;
  manager: boolean;
}

export type Principal =
  | { kind: 'user'; id: string; role: Role; groups: readonly Membership[] }
  | { kind: 'agent'; id: string };

/** Does `share` reach this user, and as a manager of its group? */
function reach(p: Principal & { kind: 'user' }, share: Share): 'none' | 'member' | 'manager' {
  if (share.groupId === null) return 'member';
  const m = p.groups.find((g) => g.groupId === share.groupId);
  if (!m) return 'none';
  return m.manager ? 'manager' : 'member';
}

/**
 * May `p` take `action` on `item`?
 *
 * @example
 *   const ann = { kind: 'user', id: 'ann', role: 'scientist', groups: [{ groupId: 'lab', manager: true }] };
 *   can(ann, 'read', { ownerId: 'bob', shares: [{ groupId: 'lab', manage: false }] });   // true
 *   can(ann, 'manage', { ownerId: 'bob', shares: [{ groupId: 'lab', manage: false }] }); // false
 *   can(ann, 'manage', { ownerId: 'bob', shares: [{ groupId: 'lab', manage: true }] });  // true
 *   can({ kind: 'agent', id: 'a1' }, 'read', { ownerId: 'bob', shares: [], holders: ['a1'] }); // true
 */
export function can(p: Principal, action: Action, item: Item): boolean {
  if (p.kind === 'agent') return action === 'read' && (item.holders ?? []).includes(p.id);
  if (p.role === 'admin') return true;
  if (action === 'chown') return false;
  if (item.ownerId !== null && item.ownerId === p.id) return true;
  if (action === 'manage') {
    return item.shares.some((s) => s.manage && reach(p, s) === 'manager');
  }
  return item.shares.some((s) => reach(p, s) !== 'none');
}

/** A folder's subtree as far as seeing the folder goes: owners and shares of everything in it. */
export interface Subtree {
  /** Owners of the folder and of every folder and dataset below it. */
  ownerIds: readonly (string | null)[];
  /** Shares on the folder, below it, and inherited from above it. */
  shares: readonly Share[];
}

/**
 * May `p` see a folder in a listing? Yes when it may read the folder or anything below it, so
 * a shared dataset deep in the tree is reachable from the root. Because sharing is additive
 * down the tree, "some item below is readable" is exactly "the user owns something below, or
 * some share on, below or above the folder reaches the user".
 *
 * @example
 *   canSee(ann, { ownerIds: [null, 'bob'], shares: [{ groupId: 'lab', manage: false }] }) // true
 *   canSee(ann, { ownerIds: [null, 'bob'], shares: [] })                                  // false
 */
export function canSee(p: Principal, tree: Subtree): boolean {
  if (p.kind === 'agent') return false;
  return tree.ownerIds.some((ownerId) => can(p, 'read', { ownerId, shares: tree.shares }));
}

/**
 * May `p` change a group's members? Admins and the group's own managers.
 *
 * @example canManageGroup(ann, 'lab') // true when ann manages lab
 */
export function canManageGroup(p: Principal, groupId: string): boolean {
  if (p.kind === 'agent') return false;
  return p.role === 'admin' || p.groups.some((g) => g.groupId === groupId && g.manager);
}
