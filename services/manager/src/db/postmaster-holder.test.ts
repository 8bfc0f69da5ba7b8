import { describe, expect, it } from 'vitest';
import { classifyPostmaster, postmasterPid, type ProcessInfo } from './postmaster-holder.js';

const DIR = '/home/u/.freeloader/manager/pgdata';
const LOCK = `4242\n${DIR}\n1700000000\n7432\n\n127.0.0.1\n  7432001  32769\nready\n`;
const ours: ProcessInfo = { argv: ['/x/native/bin/postgres', '-D', DIR, '-p', '7432'], ppid: 1 };
const node: ProcessInfo = { argv: ['/usr/bin/node', 'freeloader', 'manager'], ppid: 1 };
const shell: ProcessInfo = { argv: ['/bin/bash'], ppid: 1 };

/** A /proc with the given processes (pid → info). */
const procs =
  (table: Record<number, ProcessInfo>) =>
  (pid: number): ProcessInfo | null =>
    table[pid] ?? null;

describe('classifyPostmaster', () => {
  it.each([
    ['no lock file', null, {}, { kind: 'none' }],
    ['an empty lock file', '', {}, { kind: 'none' }],
    ['a lock naming a process that is gone', LOCK, {}, { kind: 'stale', pid: 4242 }],
    [
      'our PostgreSQL reparented to init (manager killed)',
      LOCK,
      { 4242: ours },
      { kind: 'orphan', pid: 4242 },
    ],
    [
      'our PostgreSQL under a subreaper shell',
      LOCK,
      { 4242: { ...ours, ppid: 77 }, 77: shell },
      { kind: 'orphan', pid: 4242 },
    ],
    [
      'our PostgreSQL still run by a live manager',
      LOCK,
      { 4242: { ...ours, ppid: 900 }, 900: node },
      { kind: 'in-use', pid: 4242, ownerPid: 900 },
    ],
    [
      'the same directory given with a trailing slash',
      LOCK,
      { 4242: { ...ours, argv: ['postgres', '-D', `${DIR}/`] } },
      { kind: 'orphan', pid: 4242 },
    ],
    [
      'a PostgreSQL on another directory (pid reused)',
      LOCK,
      { 4242: { argv: ['/usr/lib/postgresql/15/bin/postgres', '-D', '/var/lib/pg'], ppid: 1 } },
      { kind: 'foreign', pid: 4242, command: '/usr/lib/postgresql/15/bin/postgres -D /var/lib/pg' },
    ],
    [
      'an unrelated process with that pid',
      LOCK,
      { 4242: { argv: ['sleep', '100'], ppid: 1 } },
      { kind: 'foreign', pid: 4242, command: 'sleep 100' },
    ],
  ])('%s', (_name, lock, table, expected) => {
    expect(classifyPostmaster(lock, DIR, procs(table))).toEqual(expected);
  });
});

describe('postmasterPid', () => {
  it.each([
    ['4242\n/d\n', 4242],
    ['  17  \n', 17],
    ['0\n', null],
    ['-5\n', null],
    ['garbage', null],
    ['', null],
  ])('%j → %s', (text, pid) => {
    expect(postmasterPid(text)).toBe(pid);
  });
});
