// Runs every benchmark (test/bench/*.bench.ts) and lists the PASS/MISS figures again at the end.
// Benchmarks inform, they do not gate: the exit code is 0 unless a script could not run at all.
// Usage: node test/bench/run-all.mjs [name-filter …]   (e.g. `throughput`, `timing`, `memory`, `console`, `hostile`, `scrapy-bridge`, `requests`;
// console.bench builds the renderer itself when dist/renderer is older than its sources)
// BENCH_ENGINE_DIR=/path/to/copy bundles electron/ and shared/ from that checkout instead (to try an
// engine patch against the benchmarks without touching this one); see also the BENCH_* variables
// documented at the top of each *.bench.ts.
import { spawnSync } from 'node:child_process';
import { readdirSync, mkdirSync, rmSync, readFileSync, copyFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, dirname, basename, resolve as resolvePath, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { NODE_BUNDLE } from '../../build/node-bundle.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const benchDir = join(root, 'test', 'bench');
const outDir = join(root, '.tmp', 'bench');
const filters = process.argv.slice(2);

// The history worker (dist/history-worker.js) is needed by runCrawl.
const b = spawnSync(process.execPath, [join(root, 'build', 'build.mjs'), '--if-needed'], { cwd: root, stdio: 'inherit' });
if (b.status !== 0) {
  console.error('bench: build failed');
  process.exit(1);
}

const benches = readdirSync(benchDir).filter((f) => f.endsWith('.bench.ts')).sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
const children = readdirSync(join(benchDir, 'lib')).filter((f) => f.endsWith('.child.ts')).map((f) => join(benchDir, 'lib', f));

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
/** Redirects imports of <root>/electron and <root>/shared to BENCH_ENGINE_DIR. */
const altRoot = process.env.BENCH_ENGINE_DIR ? resolvePath(process.env.BENCH_ENGINE_DIR) : null;
const redirect = {
  name: 'engine-dir',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData === 'redirected') return undefined;
      const abs = resolvePath(args.resolveDir, args.path);
      const rel = relative(root, abs);
      if (!(rel.startsWith(`electron${sep}`) || rel.startsWith(`shared${sep}`))) return undefined;
      const target = join(altRoot, rel);
      const r = await b.resolve(`./${basename(target)}`, { resolveDir: dirname(target), kind: args.kind, pluginData: 'redirected' });
      return r.errors.length ? { errors: r.errors } : { path: r.path };
    });
  },
};
if (altRoot) console.log(`bench: engine sources from ${altRoot}`);

await build({
  plugins: altRoot ? [redirect] : [],
  absWorkingDir: root,
  entryPoints: [...benches.map((f) => join(benchDir, f)), ...children],
  outbase: benchDir,
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  ...NODE_BUNDLE,
  sourcemap: 'inline',
});

// The bundles find their worker threads beside themselves first (resolveWorkerFile): with another
// checkout's engine, its own built workers go there, so both threads of its history speak its protocol
// (this checkout's dist/history-worker.js would refuse or misread the other's batches).
if (altRoot) {
  for (const w of ['history-worker.js', 'read-worker.js']) {
    const from = join(altRoot, 'dist', w);
    if (existsSync(from)) copyFileSync(from, join(outDir, w));
    else if (w === 'history-worker.js') {
      console.error(`bench: ${from} is missing; build that checkout first (node build/build.mjs in ${altRoot})`);
      process.exit(1);
    }
  }
}

/** The machine is shared: print its load so a reader can judge the noise behind the figures. */
const load = () => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return 'n/a';
  }
};
console.log(`bench: node ${process.version}, ${cpus().length} cores, load average ${load()}`);

const figures = [];
let broken = 0;
const t0 = Date.now();
for (const f of benches) {
  const name = basename(f, '.ts');
  console.log(`\n== ${name} ==`);
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--expose-gc', '--enable-source-maps', join(outDir, `${name}.mjs`)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? '');
  for (const line of (r.stdout ?? '').split('\n')) if (/ (PASS|MISS)\s*$/.test(line)) figures.push(line.trim());
  if (r.status !== 0) {
    broken++;
    console.log(`!! ${name} exited with ${r.status ?? r.signal}`);
  }
  console.log(`(${name}: ${((Date.now() - started) / 1000).toFixed(1)} s, load average now ${load()})`);
}

console.log(`\n== summary (${((Date.now() - t0) / 1000).toFixed(0)} s) ==`);
for (const line of figures) console.log(line);
const miss = figures.filter((l) => l.endsWith('MISS')).length;
console.log(`${figures.length - miss} PASS, ${miss} MISS${broken ? `, ${broken} benchmark script(s) failed to run` : ''}`);
process.exit(broken > 0 ? 1 : 0);
