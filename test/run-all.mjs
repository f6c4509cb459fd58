// Runs every test tier that exists and prints one closing line summing them: `N passed, N failed, N skipped`.
// Tiers: typecheck, vitest (unit + integration), the conformance replay through the CLI, browser e2e.
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });
const tiers = [];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: opts.capture ? ['ignore', 'pipe', 'inherit'] : 'inherit', encoding: 'utf8', env: process.env });
  if (opts.capture) process.stdout.write(r.stdout ?? '');
  return r;
}

// Tier 0: the type checker over every project (shared without Node/DOM, core, tests).
const tsc = run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b']);
tiers.push(['typecheck', tsc.status === 0 ? 1 : 0, tsc.status === 0 ? 0 : 1]);

// Tier 1: vitest.
const vitestJson = join(tmp, 'vitest-results.json');
const v = run(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile=${vitestJson}`]);
let vPassed = 0;
let vFailed = 0;
let vSkipped = 0;
const failedNames = [];
if (existsSync(vitestJson)) {
  const j = JSON.parse(readFileSync(vitestJson, 'utf8'));
  vPassed = j.numPassedTests ?? 0;
  vFailed = j.numFailedTests ?? 0;
  vSkipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
  // A suite that failed to load has no tests counted: count it as a failure.
  for (const f of j.testResults ?? []) if (f.status === 'failed' && (f.assertionResults ?? []).length === 0) vFailed++;
  // Named again at the very end, so a log cut to its tail still says what failed and why.
  for (const f of j.testResults ?? []) {
    const file = String(f.name ?? '').replace(root + '/', '');
    if (f.status === 'failed' && (f.assertionResults ?? []).length === 0) failedNames.push(`vitest ${file}: ${String(f.message ?? '').split('\n')[0].slice(0, 300)}`);
    for (const a of f.assertionResults ?? []) {
      if (a.status !== 'failed') continue;
      failedNames.push(`vitest ${file} › ${a.fullName ?? a.title}: ${String(a.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300)}`);
    }
  }
}
if (v.status !== 0 && vFailed === 0) vFailed = 1;
tiers.push(['vitest', vPassed, vFailed, vSkipped]);

// Tier 2: conformance replay of the recorded Scrapy AutoThrottle cases through the CLI.
const vectors = process.env.SLOTSCOPE_VECTORS ?? join(root, 'test', 'fixtures', 'conformance', 'autothrottle-vectors.json');
if (!existsSync(vectors)) {
  console.error(`conformance vectors not found at ${vectors} (set SLOTSCOPE_VECTORS): counted as a failure`);
  tiers.push(['replay', 0, 1]);
} else {
  const r = run(process.execPath, [join(root, 'dist/cli.js'), 'replay', '--vectors', vectors], { capture: true });
  const m = /(\d+) passed, (\d+) failed\s*$/.exec(r.stdout ?? '');
  tiers.push(['replay', m ? Number(m[1]) : 0, m ? Number(m[2]) : 1]);
}

// Tier 3: browser end-to-end (the built renderer in Debian's Chromium against the real core and host).
const e2e = run(process.execPath, [join(root, 'test/e2e/run.mjs')], { capture: true });
const em = /(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$/.exec(e2e.stdout ?? '');
tiers.push(['e2e', em ? Number(em[1]) : 0, em ? Number(em[2]) : 1, em?.[3] ? Number(em[3]) : 0]);

for (const line of (e2e.stdout ?? '').split('\n')) if (/^(fail|FAIL|not ok)\b/.test(line)) failedNames.push(`e2e ${line.slice(0, 300)}`);
if (failedNames.length) {
  console.log('failed:');
  for (const n of failedNames) console.log(`  ${n}`);
}
let passed = 0;
let failed = 0;
let skipped = 0;
for (const [name, p, f, sk = 0] of tiers) {
  console.log(`tier ${name}: ${p} passed, ${f} failed${sk ? `, ${sk} skipped` : ''}`);
  passed += p;
  failed += f;
  skipped += sk;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
