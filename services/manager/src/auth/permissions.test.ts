import { describe, expect, it } from 'vitest';
import {
  can,
  canManageGroup,
  canSee,
  type Action,
  type Item,
  type Membership,
  type Principal,
} from './permissions.js';

const user = (id: string, groups: Membership[] = []): Principal => ({
  kind: 'user',
  id,
  role: 'scientist',
  groups,
});
const owner = user('owner');
const member = user('member', [{ groupId: 'lab', manager: false }]);
const lead = user('lead', [{ groupId: 'lab', manager: true }]);
const stranger = user('stranger', [{ groupId: 'other', manager: true }]);
const admin: Principal = { kind: 'user', id: 'admin', role: 'admin', groups: [] };
const holder: Principal = { kind: 'agent', id: 'a1' };
const outsider: Principal = { kind: 'agent', id: 'a2' };

const privateItem: Item = { ownerId: 'owner', shares: [], holders: ['a1'] };
const labRead: Item = { ...privateItem, shares: [{ groupId: 'lab', manage: false }] };
const labManage: Item = { ...privateItem, shares: [{ groupId: 'lab', manage: true }] };
const site: Item = { ...privateItem, shares: [{ groupId: null, manage: false }] };
const orphan: Item = { ownerId: null, shares: [{ groupId: 'lab', manage: true }] };

const cases: [string, Principal, Item, Record<Action, boolean>][] = [
  ['owner, private', owner, privateItem, { read: true, manage: true, chown: false }],
  ['member, private', member, privateItem, { read: false, manage: false, chown: false }],
  ['member, shared read', member, labRead, { read: true, manage: false, chown: false }],
  ['member, shared manage', member, labManage, { read: true, manage: false, chown: false }],
  ['group manager, shared read', lead, labRead, { read: true, manage: false, chown: false }],
  ['group manager, shared manage', lead, labManage, { read: true, manage: true, chown: false }],
  [
    'other user, shared with lab',
    stranger,
    labManage,
    { read: false, manage: false, chown: false },
  ],
  ['other user, shared with site', stranger, site, { read: true, manage: false, chown: false }],
  ['admin, private', admin, privateItem, { read: true, manage: true, chown: true }],
  ['group manager, ownerless', lead, orphan, { read: true, manage: true, chown: false }],
  ['member, ownerless', member, orphan, { read: true, manage: false, chown: false }],
  ['agent holding it', holder, privateItem, { read: true, manage: false, chown: false }],
  ['agent not holding it', outsider, site, { read: false, manage: false, chown: false }],
];

describe('can(principal, action, item)', () => {
  it.each(cases)('%s', (_name, p, item, expected) => {
    const got = Object.fromEntries(
      (['read', 'manage', 'chown'] as const).map((a) => [a, can(p, a, item)]),
    );
    expect(got).toEqual(expected);
  });

  it('a user owning nothing reaches no ownerless private item', () => {
    expect(can(owner, 'read', { ownerId: null, shares: [] })).toBe(false);
  });
});

describe('canSee(principal, subtree)', () => {
  it.each([
    ['owns something below', owner, { ownerIds: [null, 'owner'], shares: [] }, true],
    ['a share below reaches them', member, { ownerIds: [null], shares: labRead.shares }, true],
    [
      'nothing reaches them',
      stranger,
      { ownerIds: [null, 'owner'], shares: labRead.shares },
      false,
    ],
    ['admins see everything', admin, { ownerIds: [null], shares: [] }, true],
    ['agents list nothing', holder, { ownerIds: ['owner'], shares: site.shares }, false],
  ] as const)('%s', (_name, p, tree, expected) => {
    expect(canSee(p, tree)).toBe(expected);
  });
});

describe('canManageGroup', () => {
  it.each([
    [lead, true],
    [member, false],
    [stranger, false],
    [admin, true],
    [holder, false],
  ] as const)('%o → %s', (p, expected) => {
    expect(canManageGroup(p, 'lab')).toBe(expected);
  });
});
