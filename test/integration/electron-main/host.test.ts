// The Electron host's parts that need no Electron binary, against real things: the event pump on a
// real core and SQLite file, the menu template, and how `npm start` finds (or misses) the binary.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CrawlInfo } from '../../../shared/contract';
import { createCore } from '../../../electron/core/create-core';
import { findElectronBinary, hasDisplay } from '../../../electron/electron-binary';
import { startEventPump, type EventTarget } from '../../../electron/main/event-pump';
import { menuTemplate, type MenuActions } from '../../../electron/main/menu';
import { EVENT_CHANNEL } from '../../../electron/preload/channels';
import { defer, ensureBuilt, freshDir, waitFor } from '../helpers';

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
  const submenu = (t: ReturnType<typeof menuTemplate>, id: string) => t.find((m) => m.id === id)?.submenu ?? [];

  it('File has New crawl, Open database…, Export… wired to their actions, then Quit', () => {
    const t = menuTemplate(actions, { dev: false, mac: false });
    expect(t.map((m) => m.label ?? m.role)).toEqual(['File', 'editMenu', 'View']);
    const file = submenu(t, 'file');
    expect(file.map((i) => i.label ?? i.role ?? i.type)).toEqual(['New crawl', 'Open database…', 'Export…', 'separator', 'quit']);
    for (const item of file) item.click?.();
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

describe('finding the Electron binary', () => {
  it('needs node_modules/electron/path.txt naming a binary that exists', () => {
    const root = freshDir();
    const missing = findElectronBinary(root);
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.reason).toMatch(/path\.txt is missing/);

    const pkg = join(root, 'node_modules', 'electron');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'path.txt'), 'electron');
    const dangling = findElectronBinary(root);
    expect(dangling.ok).toBe(false);
    expect(!dangling.ok && dangling.reason).toMatch(/which does not exist/);

    writeFileSync(join(pkg, 'dist', 'electron'), '#!/bin/sh\n');
    expect(findElectronBinary(root)).toEqual({ ok: true, path: join(pkg, 'dist', 'electron') });
  });

  it('wants a display on Linux only', () => {
    expect(hasDisplay({}, 'linux')).toBe(false);
    expect(hasDisplay({ DISPLAY: ':99' }, 'linux')).toBe(true);
    expect(hasDisplay({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBe(true);
    expect(hasDisplay({}, 'darwin')).toBe(true);
    expect(hasDisplay({}, 'win32')).toBe(true);
  });
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

    // Other methods and exports that name a path pass through without a dialog.
    expect((await via('crawls.list', {}, null)).ok).toBe(true);
    const named = join(dir, 'named.jsonl');
    expect(await via('history.export', { crawlId, format: 'jsonl', path: named }, null)).toMatchObject({ ok: true, result: { path: named, rows: 1 } });
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
