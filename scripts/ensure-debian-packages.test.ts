import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./ensure-debian-packages.mjs', import.meta.url));
const debian = spawnSync('sh', ['-c', 'command -v dpkg-query && command -v apt-get']).status === 0;
const asRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('sh', ['-c', 'command -v setpriv']).status === 0;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-apt-'));
  // The unprivileged run must read its list.
  await chmod(dir, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function list(name: string, pkgs: string[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, pkgs.join('\n') + '\n', { mode: 0o644 });
  return file;
}

function run(file: string, opts: { asNobody?: boolean } = {}) {
  const cmd = opts.asNobody
    ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath]
    : [process.execPath];
  const r = spawnSync(cmd[0]!, [...cmd.slice(1), script, 'test'], {
    env: { ...process.env, APT_PACKAGES_FILE: file },
    encoding: 'utf8',
  });
  return { code: r.status, stderr: r.stderr };
}

describe.skipIf(!debian)('ensure-debian-packages (the README commands on a fresh machine)', () => {
  it('does nothing and says nothing when every package is installed', async () => {
    // dpkg itself is always installed on Debian.
    expect(run(await list('present', ['dpkg']))).toEqual({ code: 0, stderr: '' });
  });

  it.skipIf(!asRoot || !hasSetpriv)(
    'names the one apt-get line to run when it may not install',
    async () => {
      const res = run(await list('absent', ['dpkg', 'freeloader-no-such-package']), {
        asNobody: true,
      });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(
        /apt-get install -y --no-install-recommends freeloader-no-such-package$/m,
      );
      expect(res.stderr).not.toMatch(/ dpkg\b/);
    },
  );
});
