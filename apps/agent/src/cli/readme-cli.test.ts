import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from './program.js';

const README = fileURLToPath(new URL('../../../../README.md', import.meta.url));

/**
 * The README's "CLI reference" block, one entry per `freeloader …` line (continuation lines
 * joined), split at ` | ` into the commands it names.
 */
function referenceSegments(readme: string): string[] {
  const section = readme.slice(readme.indexOf('## CLI reference'));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const entries: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('freeloader ')) entries.push(line.slice('freeloader '.length));
    else if (line.trim() && entries.length > 0) entries[entries.length - 1] += ` ${line.trim()}`;
  }
  return entries.flatMap((e) => e.split(' | ').map((s) => s.trim()));
}

/** The commands a segment's leading words name (`cache pin|unpin …` names two). */
function commandsOf(root: Command, segment: string): Command[] {
  let current = [root];
  for (const word of segment.split(/\s+/)) {
    const next = current.flatMap((c) =>
      word
        .split('|')
        .map((w) => c.commands.find((s) => s.name() === w || s.aliases().includes(w)))
        .filter((s): s is Command => s !== undefined),
    );
    if (next.length === 0) break;
    current = next;
  }
  return current[0] === root ? [] : current;
}

/** The full name of a command, e.g. `token create`. */
function pathOf(c: Command): string {
  const names: string[] = [];
  for (let at: Command | null = c; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** Every runnable command (those without subcommands). */
function leaves(c: Command): Command[] {
  return c.commands.length === 0 ? [c] : c.commands.flatMap(leaves);
}

describe("the README's CLI reference", () => {
  const program = buildProgram();
  const segments = referenceSegments(readFileSync(README, 'utf8'));

  it('is found', () => {
    expect(segments.length).toBeGreaterThan(10);
  });

  it('names only commands and flags the CLI has', () => {
    const problems: string[] = [];
    for (const segment of segments) {
      const commands = commandsOf(program, segment);
      if (commands.length === 0) {
        problems.push(`"${segment}": no such command`);
        continue;
      }
      // Flags before a parenthesised remark count too: `(--stats: …)` must name a real flag.
      for (const [flag] of segment.matchAll(/(?<![\w-])--?[a-zA-Z][\w-]*/g)) {
        for (const c of commands) {
          const known = [...c.options, ...program.options].some(
            (o) => o.long === flag || o.short === flag,
          );
          if (!known) problems.push(`${pathOf(c)}: the CLI has no ${flag}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('names every command', () => {
    const named = new Set(segments.flatMap((s) => commandsOf(program, s).map(pathOf)));
    const missing = leaves(program)
      .map(pathOf)
      .filter((p) => !named.has(p));
    expect(missing).toEqual([]);
  });
});
