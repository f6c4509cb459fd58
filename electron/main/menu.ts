// The application menu as a template: File (new crawl, open database, export), Edit, View (reload;
// DevTools only in development). Kept apart from index.ts so the Electron tests can read it back.

import type { MenuItemConstructorOptions } from 'electron';

export interface MenuActions {
  newCrawl(): void;
  openDatabase(): void;
  exportCrawl(): void;
}

export interface MenuEnv {
  /** Development (not packaged): the View menu gets Toggle DevTools. */
  readonly dev: boolean;
  /** macOS: the app menu comes first and File ends with Close instead of Quit. */
  readonly mac: boolean;
}

export function menuTemplate(a: MenuActions, env: MenuEnv): MenuItemConstructorOptions[] {
  const file: MenuItemConstructorOptions = {
    id: 'file',
    label: 'File',
    submenu: [
      { id: 'new-crawl', label: 'New crawl', accelerator: 'CmdOrCtrl+N', click: () => a.newCrawl() },
      { id: 'open-database', label: 'Open database…', accelerator: 'CmdOrCtrl+O', click: () => a.openDatabase() },
      { id: 'export', label: 'Export…', accelerator: 'CmdOrCtrl+E', click: () => a.exportCrawl() },
      { type: 'separator' },
      env.mac ? { role: 'close' } : { role: 'quit' },
    ],
  };
  const view: MenuItemConstructorOptions = {
    id: 'view',
    label: 'View',
    submenu: [
      { id: 'reload', role: 'reload' },
      ...(env.dev ? [{ id: 'toggle-devtools', role: 'toggleDevTools' } as const] : []),
      { type: 'separator' },
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };
  return [
    ...(env.mac ? [{ role: 'appMenu' } as const] : []),
    file,
    { id: 'edit', role: 'editMenu' },
    view,
    ...(env.mac ? [{ role: 'windowMenu' } as const] : []),
  ];
}
