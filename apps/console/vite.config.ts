import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/**
 * The console bundles only the browser-safe, dependency-free protocol modules (placement math,
 * the CSRF header name) straight from their sources: the protocol package's entry point also
 * pulls node:crypto. Everything else from the protocol is imported as types only.
 */
const protocolSrc = fileURLToPath(new URL('../../packages/protocol/src', import.meta.url));

/** A manager to proxy `/api` to during `npm run dev -w @freeloader/console`. */
const manager = process.env.FREELOADER_MANAGER ?? 'http://127.0.0.1:7400';

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { '@fl-protocol': protocolSrc } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/api': { target: manager, changeOrigin: false } } },
  test: {
    name: 'console',
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    css: false,
    // An upper bound for a busy 2-core CI machine, not a target.
    testTimeout: 60_000,
  },
});
