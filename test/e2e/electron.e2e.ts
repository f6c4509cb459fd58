// The Electron tier: the real app (dist/electron/main.js) in the real Electron binary, driven by
// playwright-core's _electron, each test on a fresh data folder; skipped by name where it cannot run.

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { findElectronBinary, hasDisplay } from '../../electron/electron-binary';
import { ROOT, numberOf, runTests, sleep, test, textOf, waitFor, waitForText, type TestContext } from './harness';

const FILE = 'electron.e2e.ts';
const MAIN = join(ROOT, 'dist', 'electron', 'main.js');
const APP_URL = 'app://slotscope/index.html';
const DEMO = 'Demo: built-in test site';
const binary = findElectronBinary(ROOT);

interface Reply {
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: { readonly code: string; readonly message: string; readonly field?: string };
}
interface CrawlRow {
  readonly id: number;
  readonly name: string;
  readonly status: string;
  readonly requests: number;
  readonly responses: number;
}

// The page-side globals the functions passed to page.evaluate use (the test project has no DOM types).
declare const window: {
  readonly bridge: { invoke(method: string, params: unknown): Promise<Reply> };
  readonly location: { href: string };
  open(url: string, target?: string): unknown;
};
declare const document: {
  createElement(tag: string): { textContent: string | null; readonly constructor: { readonly name: string } };
  readonly head: { append(node: unknown): void };
};

/** The part of the main process's electron module the tests read (app.evaluate). */
interface MainSide {
  readonly app: { getPath(name: 'userData'): string; quit(): void };
  readonly Menu: { getApplicationMenu(): AppMenu | null };
}
interface AppMenu {
  readonly items: readonly { readonly label: string; readonly submenu?: AppMenu | null }[];
  getMenuItemById(id: string): { readonly click: Function } | null;
}

/** Calls the core the way the renderer does: through window.bridge. */
const invoke = (page: Page, method: string, params: unknown): Promise<Reply> =>
  page.evaluate(([m, p]) => window.bridge.invoke(m, p), [method, params] as const);

async function crawls(page: Page): Promise<CrawlRow[]> {
  const r = await invoke(page, 'crawls.list', {});
  assert.equal(r.ok, true, JSON.stringify(r.error));
  return r.result as CrawlRow[];
}

interface RunningApp {
  readonly app: ElectronApplication;
  readonly page: Page;
  /** What the main process wrote on stderr. */
  readonly log: string[];
  readonly userData: string;
}

/** Launches the app on `userData` (a fresh folder unless given) and waits for its window to show the crawl list. */
async function launch(t: TestContext, userData: string = t.tmpDir()): Promise<RunningApp> {
  if (!binary.ok) throw new Error(binary.reason);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'ELECTRON_RUN_AS_NODE') env[k] = v;
  env.SLOTSCOPE_USER_DATA = userData;
  const app = await _electron.launch({ executablePath: binary.path, args: [MAIN], cwd: ROOT, env, timeout: 60_000 });
  let closed = false;
  t.defer(async () => {
    if (!closed) await app.close();
  });
  app.process().once('exit', () => (closed = true));
  const log: string[] = [];
  app.process().stderr?.setEncoding('utf8').on('data', (d: string) => log.push(...d.split('\n').filter(Boolean)));
  const page = await app.firstWindow({ timeout: 60_000 });
  await page.locator('[data-testid="crawl-list"]').waitFor({ timeout: 30_000 });
  return { app, page, log, userData };
}

/** Quits through the app's own quit path (before-quit: crawls paused, history flushed) and waits for the process to end. */
async function quit(r: RunningApp): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => r.app.process().once('exit', (code) => resolve(code)));
  await r.app.evaluate(({ app }: MainSide) => app.quit());
  return exited;
}

const demoRow = (page: Page) => page.locator('[data-testid="crawl-list"] tr', { hasText: DEMO });

test('the window opens on the app with the demo crawl, the data folder and the menu', async (t) => {
  const r = await launch(t);
  const { page, app } = r;
  assert.equal(page.url(), APP_URL);
  assert.equal(await page.title(), 'Slotscope');
  await demoRow(page).waitFor({ timeout: 15_000 });
  await waitForText(page.getByTestId('connection').locator('.badge'), 'Connected');
  assert.equal(await textOf(page.locator('.connection-via')), 'via Electron IPC');
  assert.ok(existsSync(join(r.userData, 'history.sqlite')), `no history.sqlite in ${r.userData}`);
  assert.equal(await app.evaluate(({ app: a }: MainSide) => a.getPath('userData')), r.userData);

  const menu = await app.evaluate(({ Menu }: MainSide) => Menu.getApplicationMenu()?.items.map((i) => ({ label: i.label, items: i.submenu?.items.map((s) => s.label) ?? [] })) ?? []);
  const file = menu.find((m) => m.label === 'File');
  assert.ok(file, `no File menu in ${JSON.stringify(menu)}`);
  for (const label of ['New crawl', 'Open database…', 'Export…']) assert.ok(file.items.includes(label), `File has no ${label}: ${JSON.stringify(file.items)}`);
  const view = menu.find((m) => m.label === 'View');
  assert.ok(view && view.items.includes('Reload'), `View has no Reload: ${JSON.stringify(view)}`);
  // Not packaged: development, so DevTools are in the View menu.
  assert.ok(view.items.some((l) => /Developer Tools/.test(l)), `View has no DevTools in development: ${JSON.stringify(view.items)}`);

  // File › New crawl reaches the renderer as the 'app.command' event.
  await app.evaluate(({ Menu }: MainSide) => void Menu.getApplicationMenu()?.getMenuItemById('new-crawl')?.click());
  await page.getByTestId('new-crawl-form').waitFor({ timeout: 5000 });
});

test('the bridge reaches the core: list crawls, start and pause a crawl through the UI; a quit keeps its history', async (t) => {
  const r = await launch(t);
  const { page } = r;
  const [demo] = await crawls(page);
  assert.equal(demo.name, DEMO);
  assert.equal(demo.status, 'created');
  const unknown = await invoke(page, 'fs.readFile', { path: '/etc/passwd' });
  assert.equal(unknown.ok, false);
  assert.equal(unknown.error?.code, 'unknown-method');
  const invalid = await invoke(page, 'crawls.start', { id: 'one' });
  assert.equal(invalid.error?.code, 'invalid');
  assert.equal(invalid.error?.field, 'id');

  await demoRow(page).click();
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(async () => (await numberOf(page.getByTestId('stat-responses'))) >= 3, 'responses of the demo crawl', 30_000);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  const paused = (await crawls(page)).find((c) => c.id === demo.id)!;
  assert.equal(paused.status, 'paused');
  assert.ok(paused.responses >= 3, `${paused.responses} responses`);

  // The graceful quit leaves the crawl paused with every response it got; a new start shows them.
  assert.equal(await quit(r), 0);
  const again = await launch(t, r.userData);
  const after = (await crawls(again.page)).find((c) => c.id === demo.id)!;
  assert.equal(after.status, 'paused');
  assert.ok(after.responses >= paused.responses, `${after.responses} responses after the restart, ${paused.responses} before`);
  assert.equal((await crawls(again.page)).length, 1, 'the demo crawl was created twice');
});

test('the renderer is sandboxed and isolated, under the CSP', async (t) => {
  const { page } = await launch(t);
  const seen = await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    return {
      require: typeof w.require,
      process: typeof w.process,
      module: typeof w.module,
      Buffer: typeof w.Buffer,
      ipcRenderer: typeof w.ipcRenderer,
      electron: typeof w.electron,
      bridge: Object.keys(w.bridge as object).sort(),
    };
  });
  assert.deepEqual(seen, { require: 'undefined', process: 'undefined', module: 'undefined', Buffer: 'undefined', ipcRenderer: 'undefined', electron: 'undefined', bridge: ['invoke', 'subscribe'] });
  // No <webview> either (webviewTag: false): the element stays an unknown one.
  assert.equal(await page.evaluate(() => document.createElement('webview').constructor.name), 'HTMLUnknownElement');
  // The CSP header: no inline script, no eval.
  const csp = await page.evaluate(async () => {
    const s = document.createElement('script');
    s.textContent = 'window.__inlineRan = true';
    document.head.append(s);
    await new Promise((r) => setTimeout(r, 100));
    let evalResult = 'ran';
    try {
      // eslint-disable-next-line no-eval
      (0, eval)('1');
    } catch (e) {
      evalResult = (e as Error).name;
    }
    return { inline: (window as unknown as { __inlineRan?: boolean }).__inlineRan ?? false, evalResult };
  });
  assert.deepEqual(csp, { inline: false, evalResult: 'EvalError' });
});

test('window.open is refused', async (t) => {
  const { page, app, log } = await launch(t);
  const opened = await page.evaluate(() => [window.open('https://example.com/', '_blank'), window.open('app://slotscope/index.html')].map((w) => w === null));
  assert.deepEqual(opened, [true, true]);
  await sleep(500);
  assert.equal(app.windows().length, 1);
  await waitFor(() => log.some((l) => l.includes('window.open refused: https://example.com/')), 'the refusal in the main log', 5000);
});

test('navigation away from the app is refused', async (t) => {
  const { page, log } = await launch(t);
  await page.evaluate(() => {
    window.location.href = 'https://example.com/';
  });
  await waitFor(() => log.some((l) => l.includes('navigation refused: https://example.com/')), 'the refusal in the main log', 5000);
  assert.equal(page.url(), APP_URL);
  // A local file: refused by Chromium (app:// may not load file://) or by will-navigate; either way the app stays.
  await page.evaluate(() => {
    window.location.href = 'file:///etc/passwd';
  });
  await sleep(1000);
  assert.equal(page.url(), APP_URL);
  // Still the working app.
  assert.equal((await crawls(page)).length, 1);
  await demoRow(page).waitFor({ timeout: 5000 });
});

/** Why these tests cannot run here, or undefined when they can. */
function skipReason(): string | undefined {
  if (!binary.ok) return binary.reason;
  // From a checkout, better-sqlite3 is built for Node (packaging rebuilds it for Electron), so the core cannot open its database in Electron.
  const probe = spawnSync(binary.path, ['-e', "require('better-sqlite3')(':memory:').close()"], {
    cwd: ROOT, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8', timeout: 60_000,
  });
  if (probe.status !== 0 && /NODE_MODULE_VERSION|different Node\.js version/.test(probe.stderr ?? '')) {
    return 'better-sqlite3 in node_modules is built for Node, not Electron (rebuild it with `npx electron-builder install-app-deps` to run these; `npm rebuild better-sqlite3` undoes it for the Node tiers)';
  }
  return undefined;
}

const reason = skipReason();
if (reason === undefined && !hasDisplay() && process.env.SLOTSCOPE_E2E_XVFB !== '1') {
  // No display: run this same file again under a virtual one, or skip by name when there is none to be had.
  const xvfb = spawnSync('xvfb-run', ['--help'], { stdio: 'ignore' });
  if (xvfb.error) {
    await runTests(FILE, { skip: 'no display ($DISPLAY) and no xvfb-run to make one (apt-get install xvfb)' });
  } else {
    const r = spawnSync('xvfb-run', ['-a', '-s', '-screen 0 1280x1024x24', process.execPath, process.argv[1]], {
      stdio: 'inherit', env: { ...process.env, SLOTSCOPE_E2E_XVFB: '1' },
    });
    process.exitCode = r.status ?? 1;
  }
} else {
  await runTests(FILE, reason === undefined ? {} : { skip: reason });
}
