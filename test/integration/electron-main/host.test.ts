// The Electron host's parts that need no Electron binary, against real things: the event pump on a
// real core and SQLite file, the menu template, and how `npm start` finds (or misses) the binary.

import { mkdirSync, writeFileSync } from 'node:fs';
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
