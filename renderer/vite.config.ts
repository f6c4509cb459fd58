// Vite's view of the renderer: one React bundle with relative asset paths (base './'), so the same
// dist/renderer loads from Electron's file:// and from the browser host's HTTP server alike.

import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export const rendererConfig = defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  clearScreen: false,
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // The browser host's CSP allows scripts from 'self' only; nothing of the build may be inlined.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});

// Vite reads a config file's default export: the one default export of the project, by necessity.
export default rendererConfig;
