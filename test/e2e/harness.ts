// The browser end-to-end tier's own small runner and fixtures: each test gets the real test site,
// the real core on a fresh SQLite file, the real browser host and the built renderer in Chromium.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { Dispatcher, Reply } from '../../shared/contract';
import { createCore, type Core } from '../../electron/core/create-core';
import { startTestSite, type LogEntry, type ScenarioInput, type TestSite } from '../../electron/core/testsite';
import { startServer, type RunningServer } from '../../electron/server/ws-server';

/** The repository root (this file sits two folders down, bundled or not). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RENDERER_DIR = join(ROOT, 'dist', 'renderer');
/**
 * Where screenshots go: .tmp/screenshots on every run (so tests leave the tree clean), or
 * docs/screenshots with SLOTSCOPE_UPDATE_SCREENSHOTS=1, after looking at them.
 */
export const SCREENSHOTS_DIR = process.env.SLOTSCOPE_UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, '.tmp', 'screenshots');

/** Debian's Chromium unless SLOTSCOPE_CHROMIUM names another binary. */
export const CHROMIUM = process.env.SLOTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_MISSING = `Chromium not found at ${CHROMIUM}: install it with \`apt-get install chromium\` (Debian/Ubuntu), or set SLOTSCOPE_CHROMIUM to a Chromium binary.`;

const CHROMIUM_ARGS = [
  '--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
];

// ---------------------------------------------------------------------------------------------
// The runner: tests run one after the other; each one's clean-ups run when it ends, last first.

export interface TestContext {
  /** Runs `fn` when the test ends (after it passed or failed), last registered first. */
  defer(fn: () => unknown): void;
  /** A fresh empty folder, removed when the test ends. */
  tmpDir(): string;
  /** A line in the test's output. */
  log(line: string): void;
}

interface Registered {
  readonly name: string;
  readonly fn: (t: TestContext) => Promise<void>;
  readonly timeoutMs: number;
}

const registered: Registered[] = [];

export function test(name: string, fn: (t: TestContext) => Promise<void>, opts: { timeoutMs?: number } = {}): void {
  registered.push({ name, fn, timeoutMs: opts.timeoutMs ?? 90_000 });
}

/**
 * Runs every registered test; prints `ok`/`not ok` per test and one `E2E-RESULT {...}` line for run.mjs.
 * With `skip` (the reason, e.g. no Electron binary here), runs none and reports each as skipped, by name.
 */
export async function runTests(file: string, opts: { skip?: string } = {}): Promise<void> {
  const filter = process.env.SLOTSCOPE_E2E_FILTER;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const r of registered) {
    if (filter && !r.name.includes(filter)) continue;
    if (opts.skip !== undefined) {
      skipped++;
      console.log(`skipped ${file} › ${r.name}: ${opts.skip}`);
      continue;
    }
    const cleanups: (() => unknown)[] = [];
    const ctx: TestContext = {
      defer: (fn) => void cleanups.push(fn),
      tmpDir: () => {
        const dir = mkdtempSync(join(tmpdir(), 'slotscope-e2e-'));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        return dir;
      },
      log: (line) => console.log(`    ${line}`),
    };
    const started = Date.now();
    let error: unknown = null;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        r.fn(ctx),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${r.timeoutMs} ms`)), r.timeoutMs);
        }),
      ]);
    } catch (e) {
      error = e;
    } finally {
      clearTimeout(timer);
    }
    while (cleanups.length > 0) {
      try {
        await cleanups.pop()!();
      } catch (e) {
        console.log(`    (clean-up failed: ${e instanceof Error ? e.message : String(e)})`);
      }
    }
    const ms = Date.now() - started;
    if (error === null) {
      passed++;
      console.log(`ok ${file} › ${r.name} (${ms} ms)`);
    } else {
      failed++;
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      console.log(`not ok ${file} › ${r.name} (${ms} ms)\n${text.replace(/^/gm, '    ')}`);
    }
  }
  console.log(`E2E-RESULT ${JSON.stringify({ passed, failed, skipped })}`);
  process.exitCode = failed > 0 ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Waiting and asserting.

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every 50 ms until it is true; throws naming `what` (and the last detail) after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000, detail?: () => unknown): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) {
      const d = detail ? ` (last seen: ${JSON.stringify(await detail())})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${d}`);
    }
    await sleep(50);
  }
}

/** The trimmed text of an element, or null when it is not on the page. */
export async function textOf(locator: Locator): Promise<string | null> {
  if ((await locator.count()) === 0) return null;
  return ((await locator.first().textContent({ timeout: 2000 })) ?? '').trim();
}

/** A count as shown ("1,204"), or NaN. */
export async function numberOf(locator: Locator): Promise<number> {
  const t = await textOf(locator);
  return t === null ? NaN : Number(t.replace(/,/g, ''));
}

/** Waits until the element's text is exactly `expected`. */
export async function waitForText(locator: Locator, expected: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(async () => (await textOf(locator)) === expected, `text ${JSON.stringify(expected)}`, timeoutMs, () => textOf(locator));
}

// ---------------------------------------------------------------------------------------------
// Fixtures.

export interface CrawlSpec {
  readonly name: string;
  /** Hosts of the site to seed (`/` of each); default all. */
  readonly hosts?: readonly string[];
  /** Paths to seed on each host; default `/` only. */
  readonly paths?: readonly string[];
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly follow?: Readonly<Record<string, unknown>>;
}

export interface Stack {
  readonly site: TestSite;
  readonly core: Core;
  readonly server: RunningServer;
  /** Ids of the created crawls, in `crawls` order. */
  readonly crawlIds: readonly number[];
  /** Lines the browser host logged. */
  readonly serverLog: string[];
  /** The core's history database file (open it read-only to check what was recorded). */
  readonly dbFile: string;
  /** Calls the core directly (as another client would), failing on a refusal. */
  call<T>(method: string, params: unknown): Promise<T>;
  /** Epoch ms on the engine's clock when the site's log clock started: site log time + this = arrival time. */
  readonly siteStartedAt: number;
  /** The site's log entries for `host`, robots.txt included, in arrival order. */
  arrivals(host: string): LogEntry[];
}

export interface StackOptions {
  /** What the browser host serves instead of the core itself (e.g. the core plus a slot feed). */
  readonly dispatcher?: (core: Core, crawlIds: readonly number[]) => Dispatcher;
  /** Files to put in the data folder's plugins/ (name → source) before the crawls are created. */
  readonly plugins?: Readonly<Record<string, string>>;
  /** A Redis URL: the core starts crawls as shared crawls there (`serve --redis`, issue 18). */
  readonly redis?: string;
}

/** The test site (log kept), a core on a fresh database with the crawls created, and the browser host. */
export async function startStack(t: TestContext, scenario: ScenarioInput, crawls: readonly CrawlSpec[], opts: StackOptions = {}): Promise<Stack> {
  if (!existsSync(join(RENDERER_DIR, 'index.html'))) throw new Error(`${RENDERER_DIR}/index.html is missing: run \`node renderer/build.mjs\``);
  const dir = t.tmpDir();
  const site = await startTestSite(scenario, { keepLog: true });
  // The site's log times count from its start (site.startedAt, on the engine's clock).
  const siteStartedAt = site.startedAt;
  t.defer(() => site.close());
  const dbFile = join(dir, 'e2e.sqlite');
  // The data folder's plug-ins folder: the only place a THROTTLING_MANAGER set from the app may name.
  mkdirSync(join(dir, 'plugins'));
  for (const [name, source] of Object.entries(opts.plugins ?? {})) writeFileSync(join(dir, 'plugins', name), source);
  const core = await createCore({ db: dbFile, ...(opts.redis !== undefined ? { redis: opts.redis } : {}) });
  t.defer(() => core.close());
  const call = async <T>(method: string, params: unknown): Promise<T> => {
    const r: Reply = await core.dispatch(method, params);
    if (!r.ok) throw new Error(`${method} refused: ${r.error.code}: ${r.error.message}`);
    return r.result as T;
  };
  const crawlIds: number[] = [];
  for (const c of crawls) {
    const hosts = c.hosts ?? Object.keys(scenario.hosts);
    const config = {
      name: c.name,
      seeds: hosts.flatMap((h) => (c.paths ?? ['/']).map((path) => `${site.origin(h)}${path}`)),
      resolve: site.resolve,
      ...(c.follow ? { follow: c.follow } : {}),
      settings: c.settings ?? {},
    };
    const { crawl } = await call<{ crawl: { id: number } }>('crawls.create', { config });
    crawlIds.push(crawl.id);
  }
  const serverLog: string[] = [];
  const dispatcher = opts.dispatcher ? opts.dispatcher(core, crawlIds) : core;
  const server = await startServer({ dispatcher, staticDir: RENDERER_DIR, log: (line) => serverLog.push(line) });
  t.defer(() => server.close());
  return {
    site,
    core,
    server,
    crawlIds,
    serverLog,
    dbFile,
    siteStartedAt,
    call,
    arrivals: (host) => site.log.filter((e) => e.host === host).sort((a, b) => a.t - b.t),
  };
}

export interface OpenPage {
  readonly browser: Browser;
  readonly page: Page;
  /** Uncaught exceptions and console errors of the page. */
  readonly errors: string[];
}

/** Launches Debian's Chromium (closed when the test ends) and opens `url` at 1280×800. */
export async function openPage(t: TestContext, url: string, opts: { colorScheme?: 'light' | 'dark' } = {}): Promise<OpenPage> {
  if (!existsSync(CHROMIUM)) throw new Error(CHROMIUM_MISSING);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  t.defer(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: opts.colorScheme ?? 'light' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()} (${m.location().url})`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  await page.goto(url);
  return { browser, page, errors };
}

/** Fails when the page reported errors (a broken bundle, a CSP refusal, a failed request). */
export function assertNoPageErrors(p: OpenPage): void {
  if (p.errors.length > 0) throw new Error(`the page reported errors:\n  ${p.errors.join('\n  ')}`);
}

/** The row of a slot in the slot grid (virtualised: only rows scrolled into view exist). */
export const slotRow = (page: Page, key: string): Locator => page.locator(`[data-testid="slot-table"] [role="row"][data-slot="${key}"]`);

/** One cell of a slot's row (`data-col`: requests, state, delay, cause, s429…). */
export const slotCell = (page: Page, key: string, column: string): Locator => slotRow(page, key).locator(`[role="gridcell"][data-col="${column}"]`);

/** The slot keys of the grid's rows in the DOM, top to bottom. */
export const slotOrder = (page: Page): Promise<(string | null)[]> =>
  page.locator('[data-testid="slot-table"] [role="row"][data-slot]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-slot')));

export function ensureScreenshotsDir(): string {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  return SCREENSHOTS_DIR;
}

/** What a history chart holds, read through the renderer's test hook `window.__slotscopeCharts` (data, not pixels). */
export interface ChartData {
  readonly id: string;
  readonly datasets: readonly { readonly label: string; readonly type: string; readonly points: readonly { x: number; y: number | null }[] }[];
  readonly annotations: readonly { t: number; until?: number; kind: string; title: string; source: string; detail?: string }[];
  readonly xMin: number | null;
  readonly xMax: number | null;
  readonly draws: number;
  readonly firstDataDrawAt: number | null;
  readonly lastDrawAt: number | null;
  readonly points: number;
}

/** A chart's data by id (`slot-latency`, `overview-throughput`…), or null when it is not on screen. */
export async function chartData(page: Page, id: string): Promise<ChartData | null> {
  return (await page.evaluate(`window.__slotscopeCharts ? window.__slotscopeCharts.get(${JSON.stringify(id)}) : null`)) as ChartData | null;
}
