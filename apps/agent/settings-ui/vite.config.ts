import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The donor's settings page, served by the agent itself on 127.0.0.1 (and shown in the tray's
 * settings window). Browser-safe protocol modules (sizes) come straight from their sources.
 */
const protocolSrc = fileURLToPath(new URL('../../../packages/protocol/src', import.meta.url));
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  resolve: { alias: { '@fl-protocol': protocolSrc } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
});
