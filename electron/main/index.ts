// The Electron host's lifecycle (bundled to dist/electron/main.js, package.json `main`): one
// instance, the core on the user's data folder, the demo, the window, the menu, a graceful quit.

import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, Menu } from 'electron';
import { createCore, type Core } from '../core/create-core';
import type { TestSite } from '../core/testsite/index';
import { rendererDir, startDemo } from '../browser-mode';
import { EXIT_NATIVE_MODULE } from '../electron-binary';
import { startEventPump, type EventPump } from './event-pump';
import { installIpc } from './ipc';
import { withExportPath } from './save-dialog';
import { menuTemplate } from './menu';
import { createAppWindow, denyPermissions, lockContents, registerAppScheme, serveRenderer } from './window';

/** Overrides the data folder (the Electron tests give each test a fresh one). */
const USER_DATA_ENV = 'SLOTSCOPE_USER_DATA';

const log = (line: string): void => void process.stderr.write(`slotscope: ${line}\n`);
const here = dirname(fileURLToPath(import.meta.url));
const dev = !app.isPackaged;

/** better-sqlite3 built for Node's ABI (what `npm install` gives) cannot load into Electron. */
function isNativeModuleMismatch(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /NODE_MODULE_VERSION|compiled against a different Node\.js version|invalid ELF header|not a valid Win32 application/i.test(m);
}

/** Reports why the app cannot start and exits: EXIT_NATIVE_MODULE tells `npm start` to fall back to browser mode. */
function fail(e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  if (isNativeModuleMismatch(e)) {
    const text = `the history database module (better-sqlite3) is built for Node, not for this Electron: ${message}\n` +
      'Packaged builds rebuild it for Electron (`npm run dist`); from a checkout, use browser mode (`npm start` falls back to it, or `slotscope serve`).';
    log(text);
    if (app.isPackaged) dialog.showErrorBox('Slotscope cannot start', text);
    app.exit(EXIT_NATIVE_MODULE);
  } else {
    log(`cannot start: ${e instanceof Error ? (e.stack ?? message) : message}`);
    if (app.isPackaged) dialog.showErrorBox('Slotscope cannot start', message);
    app.exit(1);
  }
}

async function main(): Promise<void> {
  const dataDir = app.getPath('userData');
  mkdirSync(dataDir, { recursive: true });
  let core: Core;
  try {
    core = await createCore({ db: join(dataDir, 'history.sqlite') });
  } catch (e) {
    fail(e);
    return;
  }
  let site: TestSite | null = await startDemo(core, log).catch((e: unknown) => {
    log(`the demo site did not start: ${e instanceof Error ? e.message : String(e)}`);
    return null;
  });

  await app.whenReady();
  denyPermissions();
  serveRenderer(rendererDir());
  app.on('web-contents-created', (_event, contents) => lockContents(contents, log));

  let win: BrowserWindow | null = null;
  const contents = () => (win !== null && !win.isDestroyed() && !win.webContents.isDestroyed() ? win.webContents : null);
  let pump: EventPump = startEventPump(core, contents);
  const removeIpc = installIpc({
    dispatcher: () => core, appContents: contents, log,
    // An export from the window asks where to save it (the browser host downloads instead).
    prepare: (method, params) => withExportPath(method, params, app.getPath('downloads'), async (o) => {
      const options = { title: o.title, defaultPath: o.defaultPath, filters: o.filters.map((f) => ({ name: f.name, extensions: [...f.extensions] })) };
      const r = win === null ? await dialog.showSaveDialog(options) : await dialog.showSaveDialog(win, options);
      return r.canceled || !r.filePath ? null : r.filePath;
    }),
  });

  const openWindow = (): BrowserWindow => {
    const w = createAppWindow({ preload: join(here, 'preload.cjs'), dev, log });
    w.on('closed', () => {
      if (win === w) win = null;
    });
    return w;
  };

  /** Closes the current core (its running crawls paused, history flushed) and opens `file` in its place. */
  async function switchDatabase(file: string): Promise<void> {
    if (file === core.db) return;
    let next: Core;
    try {
      mkdirSync(dirname(file), { recursive: true });
      next = await createCore({ db: file });
    } catch (e) {
      dialog.showErrorBox('Cannot open this database', `${file}\n\n${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    const old = core;
    pump.stop();
    core = next;
    pump = startEventPump(core, contents);
    await old.close();
    log(`history: ${file}`);
    contents()?.reload();
  }

  Menu.setApplicationMenu(Menu.buildFromTemplate(menuTemplate({
    newCrawl: () => {
      win?.focus();
      pump.command('new-crawl');
    },
    openDatabase: () => {
      if (win === null) return;
      void dialog.showOpenDialog(win, {
        title: 'Open a Slotscope history database',
        defaultPath: dataDir,
        properties: ['openFile', 'promptToCreate', 'createDirectory'],
        filters: [{ name: 'Slotscope history', extensions: ['sqlite', 'db'] }, { name: 'All files', extensions: ['*'] }],
      }).then((r) => (r.canceled || r.filePaths.length === 0 ? undefined : switchDatabase(r.filePaths[0])));
    },
    exportCrawl: () => pump.command('export'),
  }, { dev, mac: process.platform === 'darwin' })));

  win = openWindow();
  log(`history: ${core.db}`);

  app.on('second-instance', () => {
    if (win === null) {
      win = openWindow();
      return;
    }
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('activate', () => {
    win ??= openWindow();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  // Graceful quit: the first before-quit is held until running crawls are paused and their
  // history is flushed (core.close), then the quit goes on.
  let quitting: 'no' | 'closing' | 'done' = 'no';
  app.on('before-quit', (event) => {
    if (quitting === 'done') return;
    event.preventDefault();
    if (quitting === 'closing') return;
    quitting = 'closing';
    log('quitting: running crawls are paused and their history saved');
    pump.stop();
    removeIpc();
    void core.close()
      .catch((e: unknown) => log(`closing the history failed: ${e instanceof Error ? e.message : String(e)}`))
      .then(() => site?.close())
      .catch(() => undefined)
      .finally(() => {
        site = null;
        quitting = 'done';
        app.quit();
      });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => app.quit());
}

// Before anything else: the data folder (fixed name, or the tests' own), the privileged scheme
// (only possible before ready), and the single-instance lock (which lives in that folder).
app.setPath('userData', process.env[USER_DATA_ENV] || join(app.getPath('appData'), 'Slotscope'));
registerAppScheme();
if (!app.requestSingleInstanceLock()) {
  log('Slotscope is already running: focusing its window');
  app.quit();
} else {
  main().catch(fail);
}
