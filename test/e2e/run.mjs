// Runs the browser end-to-end tier with plain node: builds the core and the renderer, bundles each
// test/e2e/*.e2e.ts with esbuild into .tmp/e2e/, runs each bundle, and ends with `N passed, N failed, N skipped`
// (skipped: tests that cannot run on this machine, e.g. the Electron tier without the Electron binary, listed by name).

// Usage: node test/e2e/run.mjs [name-filter]   (the filter matches test names)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../../build/node-bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const outDir = join(root, '.tmp', 'e2e');
const chromium = process.env.SLOTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
const filter = process.argv[2];
const FILE_TIMEOUT_MS = 10 * 60_000;

const files = readdirSync(here).filter((f) => f.endsWith('.e2e.ts')).sort();

function finish(passed, failed, skipped = 0) {
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed > 0 ? 1 : 0);
}

/** Tests declared in the files (`test(` at the start of a line), counted as failed when none can run. */
const declared = () => Math.max(1, files.reduce((n, f) => n + (readFileSync(join(here, f), 'utf8').match(/^test\(/gm) ?? []).length, 0));

if (!existsSync(chromium)) {
  console.log(`Chromium not found at ${chromium}: install it with \`apt-get install chromium\` (Debian/Ubuntu), or set SLOTSCOPE_CHROMIUM to a Chromium binary.`);
  finish(0, declared());
}

// The core's history worker (dist/history-worker.js) and the renderer bundle (dist/renderer).
for (const script of ['build/build.mjs', 'renderer/build.mjs']) {
  const args = script === 'build/build.mjs' ? ['--if-needed'] : [];
  const r = spawnSync(process.execPath, [join(root, script), ...args], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`${script} failed (exit ${r.status})`);
    finish(0, declared());
  }
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

function runBundle(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...(filter ? { SLOTSCOPE_E2E_FILTER: filter } : {}) },
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      process.stdout.write(d.replace(/^E2E-RESULT .*\n?/gm, ''));
    });
    const timer = setTimeout(() => {
      console.error(`${file}: still running after ${FILE_TIMEOUT_MS / 1000} s, killed`);
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const m = /^E2E-RESULT (\{.*\})$/m.exec(out);
      if (!m) return resolve({ passed: 0, failed: 1, note: `exited with ${code} before reporting` });
      const r = JSON.parse(m[1]);
      // A file that reported success but exited badly (a crash in clean-up) still counts as one failure.
      resolve(code === 0 || r.failed > 0 ? r : { passed: r.passed, failed: r.failed + 1, skipped: r.skipped, note: `exited with ${code}` });
    });
  });
}

let passed = 0;
let failed = 0;
let skipped = 0;
for (const name of files) {
  const outfile = join(outDir, name.replace(/\.ts$/, '.mjs'));
  try {
    await build({
      entryPoints: [join(here, name)],
      outfile,
      ...NODE_BUNDLE,
      sourcemap: 'inline',
    });
  } catch (e) {
    console.log(`not ok ${name}: does not bundle: ${e instanceof Error ? e.message : String(e)}`);
    failed++;
    continue;
  }
  const r = await runBundle(outfile);
  if (r.note) console.log(`not ok ${name}: ${r.note}`);
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped ?? 0;
}
finish(passed, failed, skipped);
