// `npm run dist`: builds the bundles, packages the desktop app with electron-builder, and then puts
// back the checkout's Node build of better-sqlite3 (packaging rebuilds it in place for Electron).

// Usage: node build/electron-builder.dist.mjs [electron-builder args…]   (e.g. --linux AppImage)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const run = (cmd, args) => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' && cmd === 'npm' }).status ?? 1;

let status = run(process.execPath, [join(root, 'build', 'build.mjs')]);
if (status === 0) {
  try {
    status = run(process.execPath, [require.resolve('electron-builder/cli.js'), '--config', 'build/electron-builder.config.cjs', '--publish', 'never', ...process.argv.slice(2)]);
  } finally {
    // The CLI, browser mode and the Node tests need better-sqlite3 built for Node again.
    console.log('dist: rebuilding better-sqlite3 for Node (packaging left it built for Electron)');
    if (run('npm', ['rebuild', 'better-sqlite3']) !== 0) {
      console.error('dist: `npm rebuild better-sqlite3` failed: run it before using the CLI or the tests');
      status ||= 1;
    }
  }
}
process.exit(status);
