#!/usr/bin/env node
// The root postinstall, after build-fuse.mjs: builds the agent's data-path addon
// (apps/agent/native/data-path: AES-256-GCM in place through Node's own OpenSSL, a socket's
// receive low-water mark) with node-gyp, against the headers installed next to this node when
// they are there (no download). Whatever is missing (a compiler, the headers) this says so and
// exits 0: the agent then does the same work in plain Node, at several times the CPU.
// Usage: node apps/agent/scripts/build-data-path.mjs [--force]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gypRebuild } from './gyp-rebuild.mjs';

const say = (m) => console.error(`build-data-path: ${m}`);
const force = process.argv.includes('--force');

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'data-path');
const addon = join(dir, 'build', 'Release', 'data_path.node');
const inputs = readdirSync(dir)
  .filter((f) => /\.(c|h|gyp)$/.test(f))
  .map((f) => join(dir, f));
const newest = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
if (!force && existsSync(addon) && statSync(addon).mtimeMs >= newest) {
  say('addon already built');
  process.exit(0);
}

gypRebuild(dir, say, 'the agent uses plain Node on its data path');
