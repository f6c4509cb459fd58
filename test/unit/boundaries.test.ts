// Architecture boundaries as failing tests (ARCHITECTURE convention 4): the core never imports
// electron, shared/ stays free of Node and DOM so every process can import it, and every vocabulary
// that crosses the contract is declared once, in shared/, and matches what the engine emits.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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
    const emitted = [...literalArgs('warnOnce\\(\\s*'), ...literalArgs('this\\.warn\\(\\s*'), ...literalArgs("event\\(\\s*'warning',\\s*")];
    expect(emitted.length).toBeGreaterThan(0);
    expect(emitted.filter((e) => !(WARNING_CODES as readonly string[]).includes(e.code))).toEqual([]);
    expect(WARNING_CODES.filter((c) => !emitted.some((e) => e.code === c))).toEqual([]);
  });

  it('every change name the engine records is a setting or in SLOT_CHANGES', () => {
    const names = new Set<string>([...SETTINGS_SCHEMA.map((s) => s.name), ...SLOT_CHANGES]);
    const written = ENGINE().flatMap((f) => [...code(f).matchAll(/(?:setting:\s*|slotChange\(\s*\w+\s*,\s*|\bchange\(\s*)'([^']+)'/g)].map((m) => ({ name: m[1], at: rel(f) })));
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((w) => !names.has(w.name))).toEqual([]);
  });
});
