// The app window, secure by default (ARCHITECTURE convention 9): the built renderer served from a
// privileged app:// scheme with a CSP header, a sandboxed isolated renderer, no popups, no leaving.

import { readFile } from 'node:fs/promises';
import { BrowserWindow, protocol, session, type WebContents } from 'electron';
import { notBuiltPage, resolveStatic } from '../server/static-files';
import { APP_SCHEME, APP_URL, CONTENT_SECURITY_POLICY, appRequestPath, isAppUrl } from './security';

/** Must run before the app is ready: app:// becomes a standard, secure origin (module scripts, fetch, 'self' in the CSP). */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
}

const HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Resource-Policy': 'same-origin',
} as const;

const text = (status: number, body: string, type = 'text/plain; charset=utf-8') =>
  new Response(body, { status, headers: { ...HEADERS, 'Content-Type': type } });

/** Serves `rendererDir` on app://slotscope/ (after ready): its files only, every way out of the folder refused. */
export function serveRenderer(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const path = appRequestPath(request.url);
    if (path === null) return text(404, 'not found');
    const target = await resolveStatic(rendererDir, path);
    switch (target.kind) {
      case 'file':
        return new Response(new Uint8Array(await readFile(target.file)), { status: 200, headers: { ...HEADERS, 'Content-Type': target.type } });
      case 'not-built':
        return text(503, notBuiltPage(rendererDir), 'text/html; charset=utf-8');
      case 'bad-path':
        return text(400, 'bad path');
      default:
        return text(404, 'not found');
    }
  });
}

/** Refuses every permission a page may ask for (camera, notifications, geolocation…): the app needs none. */
export function denyPermissions(): void {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);
}

/** For every webContents the app creates: no new windows, no webviews, no navigation or redirect away from the app. */
export function lockContents(contents: WebContents, log: (line: string) => void): void {
  contents.setWindowOpenHandler(({ url }) => {
    log(`window.open refused: ${url.slice(0, 200)}`);
    return { action: 'deny' };
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.on('will-navigate', (event) => {
    if (isAppUrl(event.url)) return;
    event.preventDefault();
    log(`navigation refused: ${event.url.slice(0, 200)}`);
  });
  contents.on('will-redirect', (event) => {
    if (isAppUrl(event.url)) return;
    event.preventDefault();
    log(`redirect refused: ${event.url.slice(0, 200)}`);
  });
}

export interface WindowOptions {
  /** dist/electron/preload.cjs. */
  readonly preload: string;
  /** DevTools only in development. */
  readonly dev: boolean;
  readonly log: (line: string) => void;
}

/** Opens the app window on the renderer; a crashed renderer is reloaded (the core and its crawls never depended on it). */
export function createAppWindow(o: WindowOptions): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: 'Slotscope',
    webPreferences: {
      preload: o.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      devTools: o.dev,
    },
  });
  win.once('ready-to-show', () => win.show());
  win.webContents.on('render-process-gone', (_event, details) => {
    o.log(`the renderer is gone (${details.reason}, exit ${details.exitCode}): reloading it; crawls keep running`);
    if (details.reason !== 'clean-exit' && !win.isDestroyed()) win.webContents.reload();
  });
  void win.loadURL(APP_URL).catch((e: unknown) => o.log(`could not load ${APP_URL}: ${e instanceof Error ? e.message : String(e)}`));
  return win;
}
