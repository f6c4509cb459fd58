// Builds the renderer into dist/renderer with Vite's JS API (config in renderer/vite.config.ts).
// Run it directly (`node renderer/build.mjs [--if-needed]`) or import buildRenderer from another script.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const outDir = join(root, 'dist', 'renderer');

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let n = 0;
  for (const name of readdirSync(path)) n = Math.max(n, newest(join(path, name)));
  return n;
}

/** True when dist/renderer/index.html is newer than every input of the bundle. */
export function rendererUpToDate() {
  const index = join(outDir, 'index.html');
  if (!existsSync(index)) return false;
  const inputs = [join(here, 'src'), join(here, 'index.html'), join(here, 'vite.config.ts'), join(here, 'public'), join(root, 'shared')];
  return statSync(index).mtimeMs > Math.max(...inputs.filter((p) => existsSync(p)).map(newest));
}

/** Builds the renderer; with `ifNeeded`, only when a source is newer than the last build. */
export async function buildRenderer({ ifNeeded = false } = {}) {
  if (ifNeeded && rendererUpToDate()) return { built: false, outDir };
  const { build } = await import('vite');
  await build({ configFile: join(here, 'vite.config.ts'), logLevel: 'warn' });
  return { built: true, outDir };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await buildRenderer({ ifNeeded: process.argv.includes('--if-needed') });
  } catch (e) {
    console.error(`renderer build failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
