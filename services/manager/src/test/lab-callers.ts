import type { Harness } from './harness.js';
import { apiCall } from './api-call.js';

/** The four callers of the sharing tests. */
export type Who = 'owner' | 'member' | 'other' | 'admin';

/** A listening harness's base URL and the lab's callers: bearer headers and user ids. */
export interface LabCallers {
  base: string;
  auth: Record<Who, string>;
  ids: Record<Exclude<Who, 'admin'>, string>;
  /** The member's user name (for group changes). */
  memberName: string;
}

/**
 * Listen on a free loopback port and sign in three scientists (owner, member, other) and an
 * admin; the owner creates the group `lab` with the member in it (a plain member). For the
 * tests that compare what each caller sees over real HTTP.
 *
 * @example const lab = await labCallers(h); await apiCall(lab.base, lab.auth.other, 'GET', '/namespace');
 */
export async function labCallers(h: Harness): Promise<LabCallers> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const owner = await h.login('scientist');
  const member = await h.login('scientist');
  const other = await h.login('scientist');
  const auth = {
    owner: owner.authorization,
    member: member.authorization,
    other: other.authorization,
    admin: (await h.login('admin')).authorization,
  };
  const memberName = (await h.app.usersRepo.list()).find((u) => u.id === member.userId)!.username;
  const group = await apiCall(base, auth.owner, 'POST', '/groups', { name: 'lab' });
  const joined = await apiCall(base, auth.owner, 'PUT', `/groups/lab/members/${memberName}`, {});
  if (group.status !== 201 || joined.status !== 200) {
    throw new Error(`could not set up the lab group: ${group.status} ${joined.status}`);
  }
  return {
    base,
    auth,
    ids: { owner: owner.userId, member: member.userId, other: other.userId },
    memberName,
  };
}
