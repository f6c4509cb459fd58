// Builds the renderer (Vite) and the Node-side bundles (CLI, history worker, Electron main and preload) with esbuild.
// `--if-needed` skips the build when every output is newer than every source file.
import { build } from 'esbuild';
import { NODE_BUNDLE } from './node-bundle.mjs';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entries = {
  cli: 'electron/cli.ts',
  'history-worker': 'electron/core/store/history-worker.ts',
  'read-worker': 'electron/core/store/read-worker.ts',
  // The Electron host (package.json `main`): ESM like the rest, `electron` left external with every package.
  'electron/main': 'electron/main/index.ts',
};
/** The window's preload: one CommonJS file, as a sandboxed preload must be, requiring nothing but electron. */
const PRELOAD = { entry: 'electron/preload/index.ts', out: 'dist/electron/preload.cjs' };

function newestSource(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (name.endsWith('.ts')) newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

function upToDate() {
  const outs = [...Object.keys(entries).map((n) => join(root, 'dist', `${n}.js`)), join(root, PRELOAD.out)];
  if (!outs.every((o) => existsSync(o))) return false;
  const oldestOut = Math.min(...outs.map((o) => statSync(o).mtimeMs));
  const src = Math.max(newestSource(join(root, 'electron')), newestSource(join(root, 'shared')));
  return oldestOut > src;
}

import { buildRenderer } from '../renderer/build.mjs';

// The renderer first: it has its own up-to-date check.
await buildRenderer({ ifNeeded: process.argv.includes('--if-needed') });

if (process.argv.includes('--if-needed') && upToDate()) process.exit(0);

await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, join(root, v)])),
  outdir: join(root, 'dist'),
  ...NODE_BUNDLE,
  sourcemap: true,
});

await build({
  absWorkingDir: root,
  entryPoints: [join(root, PRELOAD.entry)],
  outfile: join(root, PRELOAD.out),
  bundle: true,
  platform: 'node',
  target: 'es2022',
  format: 'cjs',
  external: ['electron'],
  logLevel: 'warning',
  sourcemap: 'inline',
});
