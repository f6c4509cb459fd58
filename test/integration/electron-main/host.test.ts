// The Electron host's parts that need no Electron binary, against real things: the event pump on a
// real core and SQLite file, the menu template, and what `npm start` says stops the desktop app.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { MenuItemConstructorOptions } from 'electron';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CrawlInfo } from '../../../shared/contract';
import { createCore } from '../../../electron/core/create-core';
import { addonAbi, checkElectronLaunch, findElectronBinary, hasDisplay, sqliteAddon, type ElectronLaunch } from '../../../electron/electron-binary';
import { startEventPump, type EventTarget } from '../../../electron/main/event-pump';
import { menuTemplate, type MenuActions } from '../../../electron/main/menu';
import { EVENT_CHANNEL } from '../../../electron/preload/channels';
import { CLI, defer, ensureBuilt, freshDir, ROOT, waitFor } from '../helpers';

class RecordingTarget implements EventTarget {
  readonly sent: unknown[][] = [];
  destroyed = false;
  send(channel: string, ...args: unknown[]): void {
    this.sent.push([channel, ...args]);
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

describe('event pump', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('forwards the core\'s events and the menu\'s commands on the event channel, while the window is there', async () => {
    const core = await createCore({ db: join(freshDir(), 'pump.sqlite') });
    defer(() => core.close());
    const win = new RecordingTarget();
    let current: RecordingTarget | null = win;
    const pump = startEventPump(core, () => current);
    defer(() => pump.stop());

    const created = await core.dispatch('crawls.create', { config: { name: 'pumped', seeds: ['http://127.0.44.1:9/'] } });
    expect(created.ok).toBe(true);
    await waitFor(() => win.sent.length > 0, 'crawls.changed at the window');
    const [channel, event, payload] = win.sent[0] as [string, string, { crawls: CrawlInfo[] }];
    expect(channel).toBe(EVENT_CHANNEL);
    expect(event).toBe('crawls.changed');
    expect(payload.crawls.map((c) => c.name)).toEqual(['pumped']);

    pump.command('new-crawl');
    expect(win.sent.at(-1)).toEqual([EVENT_CHANNEL, 'app.command', { command: 'new-crawl' }]);

    // No window (closed, or being replaced): events are dropped, not queued, not thrown.
    const before = win.sent.length;
    win.destroyed = true;
    await core.dispatch('crawls.create', { config: { name: 'unseen', seeds: ['http://127.0.44.1:9/'] } });
    current = null;
    await core.dispatch('crawls.create', { config: { name: 'unseen 2', seeds: ['http://127.0.44.1:9/'] } });
    pump.command('export');
    expect(win.sent).toHaveLength(before);

    // After stop, a new window hears nothing from this pump.
    const next = new RecordingTarget();
    current = next;
    pump.stop();
    await core.dispatch('crawls.create', { config: { name: 'after stop', seeds: ['http://127.0.44.1:9/'] } });
    expect(next.sent).toEqual([]);
  });
});

describe('menu', () => {
  const calls: string[] = [];
  const actions: MenuActions = {
    newCrawl: () => calls.push('new-crawl'),
    openDatabase: () => calls.push('open-database'),
    exportCrawl: () => calls.push('export'),
  };
  /** A top-level menu's items: the template builds every submenu as an array of item options (Electron also allows a built Menu there). */
  const submenu = (t: ReturnType<typeof menuTemplate>, id: string): MenuItemConstructorOptions[] => {
    const items = t.find((m) => m.id === id)?.submenu;
    if (!Array.isArray(items)) throw new Error(`menu ${id}: no submenu of item options (${String(items)})`);
    return items;
  };

  it('File has New crawl, Open database…, Export… wired to their actions, then Quit', () => {
    const t = menuTemplate(actions, { dev: false, mac: false });
    expect(t.map((m) => m.label ?? m.role)).toEqual(['File', 'editMenu', 'View']);
    const file = submenu(t, 'file');
    expect(file.map((i) => i.label ?? i.role ?? i.type)).toEqual(['New crawl', 'Open database…', 'Export…', 'separator', 'quit']);
    // Electron passes (menuItem, window, event); the template's handlers read none of them.
    for (const item of file) (item.click as (() => void) | undefined)?.();
    expect(calls).toEqual(['new-crawl', 'open-database', 'export']);
    expect(file.map((i) => i.accelerator).filter(Boolean)).toEqual(['CmdOrCtrl+N', 'CmdOrCtrl+O', 'CmdOrCtrl+E']);
  });

  it('View has Reload always and Toggle DevTools only in development', () => {
    const roles = (dev: boolean) => submenu(menuTemplate(actions, { dev, mac: false }), 'view').map((i) => i.role).filter(Boolean);
    expect(roles(false)).toContain('reload');
    expect(roles(false)).not.toContain('toggleDevTools');
    expect(roles(true)).toContain('reload');
    expect(roles(true)).toContain('toggleDevTools');
  });

  it('on macOS the app menu comes first and File ends with Close', () => {
    const t = menuTemplate(actions, { dev: false, mac: true });
    expect(t[0].role).toBe('appMenu');
    expect(submenu(t, 'file').at(-1)?.role).toBe('close');
  });
});

describe('why npm start cannot run the desktop app', () => {
  /** A checkout with (or without) an electron package: its manifest, a downloaded binary, an ABI, a built better-sqlite3. */
  function checkout(o: { pkg?: boolean; pathTxt?: string; binary?: boolean; distVersion?: string; abi?: string; addonAbi?: string } = {}): string {
    const root = freshDir();
    const pkg = join(root, 'node_modules', 'electron');
    if (o.pkg !== false) {
      mkdirSync(join(pkg, 'dist'), { recursive: true });
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'electron', version: '45.5.0', engines: { node: '>= 22.12.0' } }));
      writeFileSync(join(pkg, 'abi_version'), o.abi ?? '150');
      if (o.pathTxt !== undefined) writeFileSync(join(pkg, 'path.txt'), o.pathTxt);
      if (o.binary) writeFileSync(join(pkg, 'dist', 'electron'), '#!/bin/sh\n');
      if (o.distVersion) writeFileSync(join(pkg, 'dist', 'version'), o.distVersion);
    }
    if (o.addonAbi) {
      mkdirSync(dirname(sqliteAddon(root)), { recursive: true });
      writeFileSync(sqliteAddon(root), Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]), Buffer.from(`\0node_register_module_v${o.addonAbi}\0`)]));
    }
    return root;
  }
  const desktop = { env: { DISPLAY: ':0' }, platform: 'linux', nodeVersion: '22.12.0', nodeAbi: '127' } as const;
  const causes = (l: ElectronLaunch) => (l.ok ? [] : l.problems.map((p) => p.cause));

  it('the package not installed: says so and that `npm install` installs it, never that a download failed', () => {
    const root = checkout({ pkg: false });
    const found = findElectronBinary(root, desktop);
    expect(found).toMatchObject({ ok: false, cause: 'not-installed' });
    expect(!found.ok && found.reason).toMatch(/the electron package is not installed .*node_modules\/electron is missing.*`npm install`/);
    const launch = checkElectronLaunch(root, desktop);
    expect(causes(launch)).toEqual(['not-installed']);
    expect(launch.ok || launch.reason).not.toMatch(/fail/i);
  });

  it('the binary not downloaded: names the version, what is missing and `npx install-electron`, with the Node it declares when this one is older', () => {
    const root = checkout();
    const missing = findElectronBinary(root, desktop);
    expect(missing).toMatchObject({ ok: false, cause: 'not-downloaded' });
    const reason = !missing.ok ? missing.reason : '';
    expect(reason).toMatch(/^Electron 45\.5\.0's binary is not downloaded \(.*path\.txt is missing\): npm does not fetch it; `npx install-electron` does, from/);
    expect(reason).not.toMatch(/Node >=/);

    const old = findElectronBinary(root, { ...desktop, nodeVersion: '20.19.0' });
    expect(!old.ok && old.reason).toMatch(/`npx install-electron` does under Node >= 22\.12\.0 \(electron 45\.5\.0 declares engines\.node ">= 22\.12\.0"; this is Node 20\.19\.0\)/);
    expect(findElectronBinary(root, { ...desktop, nodeVersion: '22.13.1' })).toMatchObject({ ok: false, reason });

    const dangling = findElectronBinary(checkout({ pathTxt: 'electron' }), desktop);
    expect(!dangling.ok && dangling.reason).toMatch(/path\.txt names .*dist\/electron, which does not exist/);
    const stale = findElectronBinary(checkout({ pathTxt: 'electron', binary: true, distVersion: 'v41.10.0' }), desktop);
    expect(!stale.ok && stale.reason).toMatch(/holds Electron 41\.10\.0, not the package's 45\.5\.0/);
  });

  it('finds the binary path.txt names when it is the package\'s version', () => {
    const root = checkout({ pathTxt: 'electron\n', binary: true, distVersion: 'v45.5.0' });
    const path = join(root, 'node_modules', 'electron', 'dist', 'electron');
    expect(findElectronBinary(root, desktop)).toEqual({ ok: true, path, version: '45.5.0' });
    expect(checkElectronLaunch(root, desktop)).toEqual({ ok: true, path, version: '45.5.0' });
    // No dist/version (an older layout): the binary alone is enough.
    expect(findElectronBinary(checkout({ pathTxt: 'electron', binary: true }), desktop).ok).toBe(true);
  });

  it('no display on Linux: says so and how to get one; elsewhere there always is one', () => {
    const root = checkout({ pathTxt: 'electron', binary: true });
    const headless = checkElectronLaunch(root, { ...desktop, env: {} });
    expect(causes(headless)).toEqual(['no-display']);
    expect(!headless.ok && headless.reason).toMatch(/no display \(neither DISPLAY nor WAYLAND_DISPLAY is set\).*xvfb-run/);
    expect(checkElectronLaunch(root, { ...desktop, env: { WAYLAND_DISPLAY: 'wayland-0' } }).ok).toBe(true);
    expect(checkElectronLaunch(root, { ...desktop, env: {}, platform: 'darwin' }).ok).toBe(true);
    expect(checkElectronLaunch(root, { ...desktop, env: {}, platform: 'win32' }).ok).toBe(true);
    expect(hasDisplay({ DISPLAY: ':99' }, 'linux')).toBe(true);
  });

  it('better-sqlite3 built for Node\'s ABI, not Electron\'s: names both ABIs and the rebuild both ways', () => {
    const forNode = checkElectronLaunch(checkout({ pathTxt: 'electron', binary: true, addonAbi: '127' }), desktop);
    expect(causes(forNode)).toEqual(['abi-mismatch']);
    expect(!forNode.ok && forNode.reason).toBe(
      'better-sqlite3 is built for this Node (22.12.0, ABI 127), and Electron 45.5.0 needs ABI 150: `npx electron-builder install-app-deps` rebuilds it for Electron ' +
      '(`npm rebuild better-sqlite3` goes back, for the CLI, browser mode and the tests)',
    );
    const forOther = checkElectronLaunch(checkout({ pathTxt: 'electron', binary: true, addonAbi: '143' }), desktop);
    expect(!forOther.ok && forOther.reason).toMatch(/^better-sqlite3 is built for ABI 143, and Electron 45\.5\.0 needs ABI 150/);
    // Built for this Electron: nothing in the way.
    expect(checkElectronLaunch(checkout({ pathTxt: 'electron', binary: true, addonAbi: '150' }), desktop).ok).toBe(true);
  });

  it('names every cause at once, so one run tells all that stands in the way', () => {
    const launch = checkElectronLaunch(checkout({ addonAbi: '115' }), { env: {}, platform: 'linux', nodeVersion: '20.20.2', nodeAbi: '115' });
    expect(causes(launch)).toEqual(['not-downloaded', 'no-display', 'abi-mismatch']);
    expect(!launch.ok && launch.reason.split('; and ')).toHaveLength(3);
  });

  it('reads the ABI a real native addon was built for: this checkout\'s better-sqlite3 is built for this Node', () => {
    expect(addonAbi(sqliteAddon(ROOT))).toBe(process.versions.modules);
    expect(addonAbi(join(freshDir(), 'none.node'))).toBeUndefined();
  });

  it('`slotscope start` (npm start) prints the cause before it starts browser mode', async () => {
    await ensureBuilt();
    const home = freshDir();
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !['DISPLAY', 'WAYLAND_DISPLAY'].includes(k)) env[k] = v;
    Object.assign(env, { HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config') });
    const child = spawn(process.execPath, [CLI, 'start'], { cwd: home, env, stdio: ['ignore', 'ignore', 'pipe'] });
    defer(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => void (stderr += d));
    const expected = checkElectronLaunch(ROOT, { env });
    if (expected.ok) throw new Error('without a display the desktop app cannot start');
    const lines = ['slotscope: the desktop app cannot start here, so this is browser mode:', ...expected.problems.map((p) => `  - ${p.reason}`)];
    await waitFor(() => stderr.split('\n').length > lines.length || child.exitCode !== null, 'the causes `slotscope start` prints', 30_000);
    expect(stderr.split('\n').slice(0, lines.length)).toEqual(lines);
    expect(expected.problems.map((p) => p.cause)).toContain('no-display');
    expect(stderr).not.toMatch(/download failed|failed download|its download failed/i);
  }, 180_000);
});

describe('export save dialog (withExportPath)', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('asks for a file only for exports without a path, adds the extension, and a cancel writes nothing', async () => {
    const { withExportPath } = await import('../../../electron/main/save-dialog');
    const dir = freshDir();
    const core = await createCore({ db: join(dir, 'dialog.sqlite') });
    defer(() => core.close());
    const imported = await core.dispatch('history.importScrapyLog', {
      name: 'tiny.log',
      text: '2026-11-22 10:00:00 [scrapy.extensions.throttle] INFO: slot: a.test | conc: 1 | delay: 1500 ms (-500) | latency:  120 ms | size:  2000 bytes\n',
      tz: 'UTC',
    });
    expect(imported.ok, JSON.stringify(imported)).toBe(true);
    const crawlId = (imported as { result: { crawlId: number } }).result.crawlId;
    const asked: unknown[] = [];
    const via = async (method: string, params: unknown, answer: string | null) => {
      const ready = await withExportPath(method, params, '/home/me/Downloads', async (o) => {
        asked.push(o);
        return answer;
      });
      return 'reply' in ready ? ready.reply : core.dispatch(method, ready.params);
    };

    // Other methods and exports that name a path pass through without a dialog; a path the
    // renderer names is written only inside the data folder's exports/ (issue 15).
    expect((await via('crawls.list', {}, null)).ok).toBe(true);
    mkdirSync(join(dir, 'exports'));
    const named = join(dir, 'exports', 'named.jsonl');
    expect(await via('history.export', { crawlId, format: 'jsonl', path: named }, null)).toMatchObject({ ok: true, result: { path: named, rows: 1 } });
    expect(await via('history.export', { crawlId, format: 'jsonl', path: join(dir, 'named.jsonl') }, null))
      .toMatchObject({ ok: false, error: { code: 'invalid', field: 'path' } });
    expect(asked).toEqual([]);

    // Without a path: the dialog suggests a name in the folder, with the format's filter; the typed name gets its extension.
    const r = await via('history.export', { crawlId, format: 'har', slot: 'a.test' }, join(dir, 'chosen'));
    expect(asked).toEqual([{
      title: 'Export HAR 1.2',
      defaultPath: join('/home/me/Downloads', `slotscope-crawl-${crawlId}-a.test.har`),
      filters: [{ name: 'HAR 1.2', extensions: ['har', 'json'] }],
    }]);
    expect(r).toMatchObject({ ok: true, result: { path: join(dir, 'chosen.har'), rows: 1 } });
    expect(JSON.parse(readFileSync(join(dir, 'chosen.har'), 'utf8')).log.entries).toHaveLength(1);

    // Cancelled: a 'canceled' answer naming path, and no file.
    const canceled = await via('history.export', { crawlId, format: 'csv' }, null);
    expect(canceled).toEqual({ ok: false, error: { code: 'canceled', message: 'export canceled: no file was chosen', field: 'path' } });
    // A bad format is the core's to refuse: no dialog.
    const bad = await via('history.export', { crawlId, format: 'xml' }, join(dir, 'never'));
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid', field: 'format' } });
    expect(asked).toHaveLength(2);
  });
});
