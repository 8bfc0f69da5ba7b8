#!/usr/bin/env node
// The root postinstall, after build-fuse.mjs: builds the agent's morsel cipher addon
// (apps/agent/native/morsel-crypto: AES-256-GCM in place through Node's own OpenSSL) with
// node-gyp, against the headers installed next to this node when they are there (no download).
// Whatever is missing (a compiler, the headers) this says so and exits 0: the agent then seals
// and opens morsels through node:crypto, the same bytes at several times the CPU.
// Usage: node apps/agent/scripts/build-morsel-crypto.mjs [--force]
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gypRebuild } from './gyp-rebuild.mjs';

const say = (m) => console.error(`build-morsel-crypto: ${m}`);
const force = process.argv.includes('--force');

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'morsel-crypto');
const addon = join(dir, 'build', 'Release', 'morsel_crypto.node');
const inputs = ['morsel_crypto.c', 'binding.gyp'].map((f) => join(dir, f));
const newest = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
if (!force && existsSync(addon) && statSync(addon).mtimeMs >= newest) {
  say('addon already built');
  process.exit(0);
}

gypRebuild(dir, say, 'morsels are sealed with node:crypto');
