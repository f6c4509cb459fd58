// Architecture boundaries as failing tests (ARCHITECTURE convention 4 and "Boundaries are tests"):
// the core never imports electron; shared/ stays free of Node and DOM; throttle/ imports only itself
// and shared/; store/ never imports the engine; the renderer never imports electron/; no import
// cycles (an import graph walked from the import/export-from lines); and every vocabulary that
// crosses the contract is declared once, in shared/, and matches what the engine emits.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_COMMANDS, ERROR_CODES, EXPORT_FORMATS, SLOT_STATES } from '../../shared/contract';
import { SETTINGS_SCHEMA } from '../../shared/settings';
import {
  CHANGE_SOURCES, CRAWL_STATUSES, DELAY_CAUSES, EVENT_KINDS, FAILURE_KINDS, SLOT_CHANGES, THROTTLE_NOTES, WARNING_CODES,
} from '../../shared/types';

const root = join(__dirname, '../..');

function tsFiles(dir: string, exts: readonly string[] = ['.ts']): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p, exts));
    else if (exts.some((e) => name.endsWith(e)) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Source without comments (a rough cut: enough for the scans below). */
const code = (file: string) => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
const rel = (file: string) => relative(root, file);

const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);

/** Module specifiers of a file's import / export-from / side-effect import / import() / require lines (type-only ones included). */
const specifiersOf = (file: string) =>
  [...code(file).matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);

const EXTENSIONS = ['', '.ts', '.tsx', '/index.ts', '/index.tsx'];

/** The file a relative specifier names (null: a package, a built-in, or a non-TypeScript file such as CSS). */
function resolveImport(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec.replace(/\.js$/, ''));
  for (const ext of EXTENSIONS) {
    const p = base + ext;
    if (existsSync(p) && statSync(p).isFile() && /\.tsx?$/.test(p)) return p;
  }
  return null;
}

/** The import graph of every TypeScript file under electron/, shared/ and renderer/src: file → files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of ['electron', 'shared', 'renderer/src'].flatMap((d) => tsFiles(join(root, d), ['.ts', '.tsx']))) {
    graph.set(f, [...new Set(specifiersOf(f).map((s) => resolveImport(f, s)).filter((x): x is string => x !== null))]);
  }
  return graph;
}

const inside = (p: string, d: string) => rel(p) === d || rel(p).startsWith(`${d}/`);

/** Imports of files under `dir` (relative to the root): [file, imported file]. */
function importsFrom(dir: string): [string, string][] {
  return [...importGraph()].filter(([f]) => inside(f, dir)).flatMap(([f, deps]) => deps.map((d): [string, string] => [f, d]));
}

/** Imports of files under `dir` that land outside every folder of `allowed`, as "file: import". */
const importsLeaving = (dir: string, allowed: readonly string[]): string[] =>
  importsFrom(dir).filter(([, d]) => !allowed.some((a) => inside(d, a))).map(([f, d]) => `${rel(f)}: ${rel(d)}`);

/** Imports of files under `dir` that land under `target`, as "file: import". */
const importsInto = (dir: string, target: string): string[] =>
  importsFrom(dir).filter(([, d]) => inside(d, target)).map(([f, d]) => `${rel(f)}: ${rel(d)}`);

/** Every cycle of the graph, once each (Tarjan's strongly connected components with more than one file, or a file importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.map(rel).sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('boundaries', () => {
  it('nothing under electron/core imports electron', () => {
    const bad = tsFiles(join(root, 'electron/core')).filter((f) => importsOf(f).some((m) => m === 'electron' || m.startsWith('electron/')));
    expect(bad).toEqual([]);
  });
  it('shared/ imports neither Node built-ins nor packages', () => {
    const bad = tsFiles(join(root, 'shared')).flatMap((f) => importsOf(f).filter((m) => !m.startsWith('.')).map((m) => `${f}: ${m}`));
    expect(bad).toEqual([]);
  });
  it('the shared tsconfig has no Node or DOM types', () => {
    const cfg = JSON.parse(readFileSync(join(root, 'shared/tsconfig.json'), 'utf8'));
    expect(cfg.compilerOptions.types).toEqual([]);
    expect(cfg.compilerOptions.lib).not.toContain('DOM');
  });
  it('the import graph sees the files it judges', () => {
    const graph = importGraph();
    const edge = (from: string, to: string) => (graph.get(join(root, from)) ?? []).map(rel).includes(to);
    expect(edge('renderer/src/transport/websocket-transport.ts', 'renderer/src/transport/ws-client.ts')).toBe(true);
    expect(edge('electron/core/engine/crawler.ts', 'shared/settings.ts')).toBe(true);
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c'].map((x) => relative(root, x)).sort()]);
  });
  it('throttle/ (the pure policy) imports only throttle/ and shared/: no other core file, no package, no Node built-in', () => {
    const dir = 'electron/core/engine/throttle';
    const packages = tsFiles(join(root, dir)).flatMap((f) => specifiersOf(f).filter((m) => !m.startsWith('.')).map((m) => `${rel(f)}: ${m}`));
    expect(importsLeaving(dir, [dir, 'shared']).concat(packages)).toEqual([]);
  });
  it('store/ never imports the engine', () => {
    expect(importsInto('electron/core/store', 'electron/core/engine')).toEqual([]);
  });
  it('the renderer imports nothing under electron/ (only its own files and shared/)', () => {
    expect(importsLeaving('renderer/src', ['renderer/src', 'shared'])).toEqual([]);
  });
  it('no import cycles in electron/, shared/ or renderer/', () => {
    expect(cycles(importGraph())).toEqual([]);
  });
});

/** Every vocabulary that crosses the contract, as shared/ declares it. */
const VOCABULARIES: Readonly<Record<string, readonly string[]>> = {
  ERROR_CODES, SLOT_CHANGES, CHANGE_SOURCES, DELAY_CAUSES, EVENT_KINDS, CRAWL_STATUSES, WARNING_CODES, FAILURE_KINDS, THROTTLE_NOTES,
  SLOT_STATES, EXPORT_FORMATS, APP_COMMANDS,
};
const HOMES = ['shared/contract.ts', 'shared/types.ts'];
const SOURCES = () => ['electron', 'renderer/src', 'shared'].flatMap((d) => tsFiles(join(root, d), ['.ts', '.tsx']));
const ENGINE = () => tsFiles(join(root, 'electron/core'));

/** String literals of each array literal or union type of string literals in `text`. */
function literalLists(text: string): string[][] {
  const lists: string[][] = [];
  const str = `'[^'\\n]*'`;
  for (const m of text.matchAll(new RegExp(`\\[\\s*(${str}(?:\\s*,\\s*${str})+)\\s*,?\\s*\\]`, 'g'))) lists.push([...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]));
  for (const m of text.matchAll(new RegExp(`(${str}(?:\\s*\\|\\s*${str})+)`, 'g'))) lists.push([...m[1].matchAll(/'([^']*)'/g)].map((x) => x[1]));
  return lists;
}

/** The string literal each call matching `call` (a regex source that ends where the literal starts) passes, with where it is. */
function literalArgs(call: string): { code: string; at: string }[] {
  return ENGINE().flatMap((f) => [...code(f).matchAll(new RegExp(`${call}'([^']+)'`, 'g'))].map((m) => ({ code: m[1], at: rel(f) })));
}

describe('vocabularies are declared once, in shared/', () => {
  it('nothing outside shared/contract.ts and shared/types.ts spells out a whole vocabulary again', () => {
    const copies: string[] = [];
    for (const f of SOURCES()) {
      if (HOMES.includes(rel(f))) continue;
      for (const list of literalLists(code(f))) {
        for (const [name, vocab] of Object.entries(VOCABULARIES)) {
          const set = new Set(list);
          if (vocab.length >= 2 && vocab.every((v) => set.has(v)) && list.every((v) => vocab.includes(v))) copies.push(`${rel(f)}: ${name} re-declared as ${list.join(', ')}`);
        }
      }
    }
    expect(copies).toEqual([]);
  });

  it('every warning code the engine emits is in WARNING_CODES, and every listed code is emitted', () => {
    const emitted = [...literalArgs('warnOnce\\(\\s*'), ...literalArgs('this\\.warn\\(\\s*'), ...literalArgs("event\\(\\s*'warning',\\s*"),
      // outcome.ts's rules hand a warning to the crawler and the shared crawl's workers; the workers write event records.
      ...literalArgs('\\bwarning\\(\\s*'), ...literalArgs("kind: 'warning',\\s*code:\\s*")];
    expect(emitted.length).toBeGreaterThan(0);
    expect(emitted.filter((e) => !(WARNING_CODES as readonly string[]).includes(e.code))).toEqual([]);
    expect(WARNING_CODES.filter((c) => !emitted.some((e) => e.code === c))).toEqual([]);
  });

  it('every change name the engine records is a setting or in SLOT_CHANGES', () => {
    const names = new Set<string>([...SETTINGS_SCHEMA.map((s) => s.name), ...SLOT_CHANGES]);
    // A change record's literal ({ …, setting: 'x', …, source: … }), the crawler's slotChange(slot, 'x', …) and the replay's change('x', …).
    const written = ENGINE().flatMap((f) => [...code(f).matchAll(/(?:\{[^{}]*\bsetting:\s*'([^']+)'(?=[^{}]*\bsource:)|slotChange\(\s*\w+\s*,\s*'([^']+)'|\bchange\(\s*'([^']+)')/g)]
      .map((m) => ({ name: m[1] ?? m[2] ?? m[3], at: rel(f) })));
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((w) => !names.has(w.name))).toEqual([]);
  });
});
