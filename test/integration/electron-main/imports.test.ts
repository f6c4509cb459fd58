// The Electron boundaries as failing tests (ARCHITECTURE conventions 3 and 4): only the main and
// preload entry points import electron, and only electron/main/ipc.ts touches ipcMain.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const all = ['electron', 'shared', 'renderer'].flatMap((d) => sources(join(ROOT, d))).map((f) => ({ file: relative(ROOT, f), text: readFileSync(f, 'utf8') }));
const importsElectron = (text: string) => /(?:from\s+|import\s*\(\s*|require\(\s*)['"]electron(?:\/[^'"]*)?['"]/.test(text);

describe('electron boundaries', () => {
  it('only electron/main and electron/preload import electron', () => {
    const users = all.filter((f) => importsElectron(f.text)).map((f) => f.file);
    expect(users.length).toBeGreaterThan(0);
    expect(users.filter((f) => !/^electron\/(main|preload)\//.test(f))).toEqual([]);
  });

  it('only electron/main/ipc.ts uses ipcMain, only electron/preload/index.ts uses ipcRenderer', () => {
    const importing = (name: string) => all.filter((f) => new RegExp(`import\\s*\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from\\s*['"]electron['"]`).test(f.text)).map((f) => f.file);
    expect(importing('ipcMain')).toEqual(['electron/main/ipc.ts']);
    expect(importing('ipcRenderer')).toEqual(['electron/preload/index.ts']);
  });
});
