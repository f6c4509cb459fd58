// The electron-builder configuration checked offline with electron-builder's own loader and schema
// validation (app-builder-lib's validateConfiguration), plus the project's own packaging rules.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers';

const require = createRequire(import.meta.url);
const CONFIG = 'build/electron-builder.config.cjs';

type Config = Record<string, unknown> & {
  linux: { target: string[] }; mac: { target: string[] }; win: { target: string[] }; asarUnpack: string[];
  /** As getConfig normalizes it: file sets with their filters. */
  files: (string | { filter: string[] })[];
};

interface BuilderLib {
  getConfig(projectDir: string, configPath: string | null, fromOptions: null): Promise<Config>;
  validateConfiguration(config: unknown, logger: unknown): Promise<void>;
}

// electron-builder exports neither; they live in its app-builder-lib, which it installs.
const lib = require('app-builder-lib/out/util/config/config') as BuilderLib;
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
const { minimatch } = require('minimatch') as { minimatch: (path: string, pattern: string) => boolean };

const load = () => lib.getConfig(ROOT, join(ROOT, CONFIG), null);
const validate = (c: unknown) => lib.validateConfiguration(c, new DebugLogger(false));

/** Whether the `files` patterns take `file` into the package (a later `!pattern` drops it again, as in electron-builder). */
function packaged(config: Config, file: string): boolean {
  const patterns = config.files.flatMap((f) => (typeof f === 'string' ? [f] : f.filter));
  let taken = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (minimatch(file, p.slice(1))) taken = false;
    } else if (minimatch(file, p)) {
      taken = true;
    }
  }
  return taken;
}

describe('electron-builder config', () => {
  it('passes electron-builder\'s own validation, which does refuse broken configs', async () => {
    const config = await load();
    await expect(validate(config)).resolves.toBeUndefined();
    await expect(validate({ ...config, asarUnpak: [] })).rejects.toThrow(/unknown property 'asarUnpak'/);
    await expect(validate({ ...config, asar: 'perhaps' })).rejects.toThrow(/asar/);
    await expect(validate({ ...config, npmSkipBuildFromSource: false })).rejects.toThrow(/deprecated/);
  });

  it('names the app, pins Electron to the devDependency, and builds every platform\'s package', async () => {
    const config = await load();
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(config.productName).toBe('Slotscope');
    expect(config.appId).toMatch(/^[a-z]+(\.[a-z0-9-]+)+$/);
    expect(config.electronVersion).toBe('45.5.0');
    // A devDependency, pinned exactly: npm installs it on every Node (an optional one it drops, silently,
    // where the running Node is older than the package's engines), so its typings are always there.
    expect(pkg.devDependencies.electron).toBe(config.electronVersion);
    expect(pkg.optionalDependencies?.electron).toBeUndefined();
    expect(pkg.dependencies?.electron).toBeUndefined();
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toEqual(['dmg']);
    expect(config.win.target).toEqual(['nsis']);
  });

  it('flips Electron\'s fuses: no run-as-Node, no NODE_OPTIONS or --inspect, encrypted cookies, only an integrity-checked app.asar', async () => {
    const config = await load();
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
    // OnlyLoadAppFromAsar needs the app in an asar archive; the schema knows every fuse named above.
    expect(config.asar).toBe(true);
    await expect(validate({ ...config, electronFuses: { ...(config.electronFuses as object), runAsNod: false } })).rejects.toThrow(/electronFuses/);
    await expect(validate({ ...config, electronFuses: { ...(config.electronFuses as object), runAsNode: 'no' } })).rejects.toThrow(/electronFuses/);
  });

  it('packages an Electron that electron-builder\'s rebuild knows, installed without downloading anything', async () => {
    const config = await load();
    const version = config.electronVersion as string;
    const electronPkg = join(ROOT, 'node_modules', 'electron');
    const installed = JSON.parse(readFileSync(join(electronPkg, 'package.json'), 'utf8'));
    expect(installed.version).toBe(version);
    // No install step: `npm ci` never fetches the binary (`npx install-electron` does, when asked).
    expect(Object.keys(installed.scripts ?? {}).filter((k) => /install/.test(k))).toEqual([]);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/electron']).toMatchObject({ version, dev: true });
    expect(lock.packages['node_modules/electron'].hasInstallScript).toBeUndefined();
    // electron-builder rebuilds better-sqlite3 through @electron/rebuild, which asks node-abi for the
    // Electron's module ABI: it must know this Electron, and agree with the ABI the package declares.
    const rebuild = require.resolve('@electron/rebuild', { paths: [require.resolve('app-builder-lib/package.json')] });
    const nodeAbi = [join(rebuild, '..', '..', 'node_modules', 'node-abi'), join(ROOT, 'node_modules', 'node-abi')].find((d) => existsSync(join(d, 'index.js')));
    expect(nodeAbi).toBeDefined();
    const { getAbi } = (await import(pathToFileURL(join(nodeAbi!, 'index.js')).href)) as { getAbi(target: string, runtime: string): string };
    expect(getAbi(version, 'electron')).toBe(readFileSync(join(electronPkg, 'abi_version'), 'utf8').trim());
  });

  it('rebuilds better-sqlite3 for Electron at packaging time only, and unpacks its .node from the asar', async () => {
    const config = await load();
    expect(config.npmRebuild).toBe(true);
    expect(config.buildDependenciesFromSource).toBe(true);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    // Nothing rebuilds it at `npm install`: no install hook does (Node keeps its own build).
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[hook] ?? '').not.toMatch(/rebuild|electron-builder/);
    const addon = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    expect(existsSync(addon)).toBe(true);
    expect(config.asarUnpack.some((p) => minimatch(relative(ROOT, addon), p))).toBe(true);
  });

  it('packages the built bundles with package.json main pointing at the Electron main bundle', async () => {
    const config = await load();
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.main).toBe('dist/electron/main.js');
    for (const file of [pkg.main, 'dist/electron/preload.cjs', 'dist/history-worker.js', 'dist/renderer/index.html']) {
      expect(packaged(config, file), file).toBe(true);
    }
    expect(packaged(config, 'dist/electron/main.js.map')).toBe(false);
    expect(packaged(config, 'electron/main/index.ts')).toBe(false);
    expect(pkg.scripts.dist).toBe('node build/electron-builder.dist.mjs');
    expect(readFileSync(join(ROOT, 'build', 'electron-builder.dist.mjs'), 'utf8')).toContain(`'--config', '${CONFIG}'`);
  });
});
