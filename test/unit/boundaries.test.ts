// Architecture boundaries as failing tests (ARCHITECTURE convention 4): the core never imports
// electron, and shared/ stays free of Node and DOM so every process can import it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '../..');

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

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
