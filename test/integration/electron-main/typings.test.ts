// The main process and the preload are type-checked against Electron's own typings: 'electron'
// resolves to node_modules/electron/electron.d.ts in their tsconfig projects, never to a copy.

import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers';

/** Where `import … from 'electron'` in `file` resolves under the tsconfig project `project`. */
function resolveElectron(project: string, file: string): string | undefined {
  const configFile = join(ROOT, project, 'tsconfig.json');
  const read = ts.readConfigFile(configFile, ts.sys.readFile);
  expect(read.error).toBeUndefined();
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, join(ROOT, project), undefined, configFile);
  expect(parsed.options.paths?.electron).toBeUndefined();
  return ts.resolveModuleName('electron', join(ROOT, file), parsed.options, ts.sys).resolvedModule?.resolvedFileName;
}

describe('Electron typings', () => {
  const real = join(ROOT, 'node_modules', 'electron', 'electron.d.ts');

  it('the installed electron package carries its typings for the pinned version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'electron', 'package.json'), 'utf8'));
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.version).toBe(root.devDependencies.electron);
    expect(pkg.types).toBe('electron.d.ts');
    expect(readFileSync(real, 'utf8')).toMatch(new RegExp(`Type definitions for Electron ${pkg.version.replace(/\./g, '\\.')}`));
  });

  it('electron/main and electron/preload resolve \'electron\' to them', () => {
    // TypeScript gives the real path (node_modules may be a link).
    expect(resolveElectron('electron/main', 'electron/main/index.ts')).toBe(realpathSync(real));
    expect(resolveElectron('electron/preload', 'electron/preload/index.ts')).toBe(realpathSync(real));
  });

  it('no hand-written declaration of the electron module is left to drift from them', () => {
    const shadows = ts.sys.readDirectory(join(ROOT, 'electron'), ['.d.ts'], ['**/node_modules'], undefined)
      .filter((f) => /declare\s+module\s+['"]electron['"]|Electron's API/.test(readFileSync(f, 'utf8')));
    expect(shadows).toEqual([]);
  });
});
