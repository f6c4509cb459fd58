// Summarises a V8 .cpuprofile (node --cpu-prof) or a sampling .heapprofile (BENCH_ALLOC_PROF):
// top functions by self and total time (or bytes allocated), grouped by source file too, so a
// benchmark MISS can be traced to the code that costs the time or makes the garbage.
// Usage: node test/bench/profile-summary.mjs FILE.cpuprofile|FILE.heapprofile [top=25] [filter-substring]
import { readFileSync } from 'node:fs';

const [file, topArg, filter] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/profile-summary.mjs FILE.cpuprofile [top] [filter]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const short = (url) => url.replace(/^.*\/node_modules\//, 'nm:').replace(/^file:\/\/.*\/(\.tmp|electron|shared|test)\//, '$1/');
const keyOf = (n) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${short(f.url)}:${f.lineNumber + 1}`;
};

if (prof.head) {
  // Heap profile: a tree of call frames with selfSize (bytes sampled as allocated there).
  const selfBy = new Map();
  const totalBy = new Map();
  const fileBy = new Map();
  let total = 0;
  const walk = (node, stack) => {
    const k = keyOf(node);
    const size = node.selfSize ?? 0;
    total += size;
    selfBy.set(k, (selfBy.get(k) ?? 0) + size);
    const url = short(node.callFrame.url) || `(${node.callFrame.functionName})`;
    fileBy.set(url, (fileBy.get(url) ?? 0) + size);
    const next = stack.includes(k) ? stack : [...stack, k];
    for (const kk of next) totalBy.set(kk, (totalBy.get(kk) ?? 0) + size);
    for (const c of node.children ?? []) walk(c, next);
  };
  walk(prof.head, []);
  const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  const show = (title, m) => {
    console.log(`\n${title}`);
    [...m].filter(([k]) => !filter || k.includes(filter)).sort((a, b) => b[1] - a[1]).slice(0, top)
      .forEach(([k, t]) => console.log(`${pct(t)} ${(t / 1048576).toFixed(1).padStart(7)} MB  ${k}`));
  };
  console.log(`${file}: ${(total / 1048576).toFixed(0)} MB allocated (sampled)`);
  show('allocated by file', fileBy);
  show('allocated by function (self)', selfBy);
  show('allocated under function (total)', totalBy);
  process.exit(0);
}
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node from samples × time deltas.
const self = new Map();
let total = 0;
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i + 1] ?? 0;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
  total += dt;
}


const selfBy = new Map();
const totalBy = new Map();
const fileBy = new Map();
for (const [id, t] of self) {
  const n = nodes.get(id);
  const k = keyOf(n);
  selfBy.set(k, (selfBy.get(k) ?? 0) + t);
  const url = short(n.callFrame.url) || `(${n.callFrame.functionName})`;
  fileBy.set(url, (fileBy.get(url) ?? 0) + t);
  // Total: charge every distinct ancestor frame once.
  const seen = new Set();
  for (let p = id; p !== undefined; p = parent.get(p)) {
    const kk = keyOf(nodes.get(p));
    if (seen.has(kk)) continue;
    seen.add(kk);
    totalBy.set(kk, (totalBy.get(kk) ?? 0) + t);
  }
}

const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const show = (title, m) => {
  console.log(`\n${title}`);
  [...m].filter(([k]) => !filter || k.includes(filter)).sort((a, b) => b[1] - a[1]).slice(0, top)
    .forEach(([k, t]) => console.log(`${pct(t)} ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`));
};
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
show('self time by file', fileBy);
show('self time by function', selfBy);
show('total time by function', totalBy);
