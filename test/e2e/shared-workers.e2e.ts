// Issue 18 in the console: a core with a real redis-server (`serve --redis`) starts a crawl from the
// page as a shared crawl, one `slotscope worker` process joins, the Workers tab lists both workers
// alive with their responses, and a pause pressed in the page stops new requests at every worker within
// 1 s (judged at the test site's own log), recorded once in the journal; a worker killed is listed
// as lost. Screenshots at 1024 and 1280 px, light and dark.

import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createCore } from '../../electron/core/create-core';
import { startServer } from '../../electron/server/ws-server';
import { startTestSite } from '../../electron/core/testsite';
import type { Reply } from '../../shared/contract';
import type { Page } from 'playwright-core';
import type { WorkerWire } from '../../shared/contract';
import type { ChangeRecord } from '../../shared/types';
import {
  assertNoPageErrors, ensureScreenshotsDir, numberOf, openPage, RENDERER_DIR, ROOT, runTests, sleep, slotRow, startStack, test, textOf, waitFor, waitForText,
  type TestContext,
} from './harness';

// Loopback addresses of this file: 127.0.104.2x.
const HOSTS = {
  'shop.example.test': { address: '127.0.104.21', pages: 600, latency_ms: { base: 40, jitter: 15 } },
  'docs.example.test': { address: '127.0.104.22', pages: 600, latency_ms: { base: 25, jitter: 10 } },
  'api.example.test': { address: '127.0.104.23', pages: 600, latency_ms: { base: 60, jitter: 20 } },
};

const hasRedis = spawnSync('redis-server', ['--version']).status === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Debian's redis-server on a free port in a temp folder, stopped when the test ends. */
async function startRedis(t: TestContext): Promise<string> {
  const port = await freePort();
  const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', t.tmpDir(), '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.defer(async () => {
    if (p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('close', r));
    p.kill('SIGTERM');
    await gone;
  });
  let out = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  await waitFor(() => /Ready to accept connections/.test(out) || p.exitCode !== null, 'redis-server to be ready', 15_000);
  if (p.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
  return `redis://127.0.0.1:${port}/0`;
}

/** `slotscope worker` in a process of its own, its output kept. */
function startWorker(t: TestContext, redis: string, name: string, concurrency?: number) {
  const args = ['worker', '--redis', redis, '--name', name, ...(concurrency !== undefined ? ['--concurrency', String(concurrency)] : [])];
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const w = { child, stderr: '', exited: new Promise<number | null>((r) => child.once('close', (code) => r(code))) };
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (w.stderr += d));
  t.defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return w;
}

const WIDTHS = [1280, 1024] as const;

/** Where the screenshots of a run are copied for a reviewer (SLOTSCOPE_SHOTS_DIR), besides the usual folder. */
const EXTRA_SHOTS = process.env.SLOTSCOPE_SHOTS_DIR;

async function shoot(t: TestContext, page: Page, name: string): Promise<void> {
  const dir = ensureScreenshotsDir();
  if (EXTRA_SHOTS) mkdirSync(EXTRA_SHOTS, { recursive: true });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(width - 4, 796);
      await page.waitForTimeout(200);
      const file = join(dir, `${name}-${width}-${scheme}.png`);
      await page.screenshot({ path: file });
      if (EXTRA_SHOTS) copyFileSync(file, join(EXTRA_SHOTS, `${name}-${width}-${scheme}.png`));
      t.log(`saved ${file}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
}

const workerRow = (page: Page, name: string) => page.locator(`[data-testid="workers-table"] tr[data-worker="${name}"]`);
const cell = (page: Page, name: string, col: string) => workerRow(page, name).locator(`td[data-col="${col}"]`);

if (!hasRedis) {
  console.log('skipped shared-workers.e2e.ts: redis-server is not installed (apt-get install redis-server)');
}

test('shared crawl: the Workers tab lists both workers alive with responses; a pause reaches every worker within 1 s, recorded once', async (t) => {
  if (!hasRedis) return;
  const redis = await startRedis(t);
  const stack = await startStack(t, { hosts: HOSTS, seed: 18 }, [{
    name: 'Shop, docs and API', follow: { scope: 'host' },
    settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.15, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
  }], { redis });
  const [id] = stack.crawlIds;
  // The worker waits for a shared crawl to open in the Redis, then joins it.
  const ext = startWorker(t, redis, 'worker-2');
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await page.getByTestId('crawl-shared').first().waitFor({ timeout: 5000 });
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 15_000 });

  // The Workers tab: this host's fetcher and the worker process, both alive, both answering.
  await page.getByRole('tab', { name: /^Workers/ }).click();
  let own = '';
  await waitFor(async () => {
    own = (await stack.call<{ workers: WorkerWire[] }>('crawls.workers', { id })).workers.find((w) => w.name !== 'worker-2')?.name ?? '';
    return own !== '';
  }, "this host's own fetcher in the list", 10_000);
  await waitFor(async () => {
    for (const name of [own, 'worker-2']) {
      if ((await workerRow(page, name).getAttribute('data-alive').catch(() => null)) !== 'true') return false;
      if (!((await numberOf(cell(page, name, 'responses'))) > 0)) return false;
      if (!(Number(await textOf(cell(page, name, 'rate'))) > 0)) return false;
    }
    return true;
  }, 'both workers alive with responses and a rate', 20_000, () => page.getByTestId('workers-table').textContent());
  // A few seconds in, so the rates are steady for the screenshots.
  await sleep(4000);
  assert.equal(await page.locator('[data-testid="workers-table"] tbody tr').count(), 2);
  assert.equal(await textOf(page.getByRole('tab', { name: /^Workers/ })), 'Workers (2)');
  assert.match((await textOf(page.getByTestId('workers-summary'))) ?? '', /^2 workers, 2 alive · [\d.]+ responses\/s in all$/);
  assert.equal(await textOf(cell(page, 'worker-2', 'state')), 'alive');
  assert.match((await textOf(cell(page, 'worker-2', 'seen'))) ?? '', /^(now|1 s ago)$/);
  await shoot(t, page, 'shared-workers');

  // Pause from the page: no request arrives at the site more than 1 s later, from either worker.
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused', 5000);
  await sleep(2500);
  const late = stack.site.log.filter((e) => stack.siteStartedAt + e.t > t0 + 1000);
  assert.deepEqual(late.map((e) => `${e.host}${e.path}`), [], 'no request reached the site more than 1 s after the pause');
  const quiet = stack.site.log.length;
  const before = stack.site.log.filter((e) => stack.siteStartedAt + e.t <= t0).length;
  t.log(`${before} requests before the pause, ${quiet - before} within 1 s after it (in flight or starting)`);
  // Every worker shows nothing in flight; the journal has the pause once.
  await waitFor(async () => (await textOf(cell(page, 'worker-2', 'inflight')))?.startsWith('0 /') === true
    && (await textOf(cell(page, own, 'inflight')))?.startsWith('0 /') === true, 'nothing in flight at either worker', 5000);
  const changes = await stack.call<ChangeRecord[]>('log.changes', { id });
  assert.equal(changes.filter((c) => c.setting === 'paused' && c.newValue === true).length, 1, 'the pause is recorded once');
  assert.equal(changes.filter((c) => c.setting === 'started').length, 1, 'the start is recorded once');
  await page.getByRole('tab', { name: 'Journal' }).click();
  await waitFor(async () => /paused/i.test((await page.locator('#crawl-tabpanel').textContent()) ?? ''), 'the pause in the Journal', 5000);
  await page.getByRole('tab', { name: /^Workers/ }).click();
  // The rates fall to nothing once the last responses before the pause leave their 3 s span.
  await waitFor(async () => (await textOf(cell(page, 'worker-2', 'rate'))) === '0.0' && (await textOf(cell(page, own, 'rate'))) === '0.0',
    'both rates at 0.0 while paused', 8000, () => page.getByTestId('workers-table').textContent());
  await shoot(t, page, 'shared-workers-paused');
  assert.equal(stack.site.log.length, quiet, 'still nothing new while paused');

  // Resume; a third worker joins and is killed: it is listed as lost (its requests in flight go back to the queue).
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitFor(() => stack.site.log.length > quiet, 'requests again after resume', 5000);
  const doomed = startWorker(t, redis, 'worker-3');
  await waitFor(async () => (await numberOf(cell(page, 'worker-3', 'responses'))) > 0, 'worker-3 to fetch', 15_000);
  doomed.child.kill('SIGKILL');
  await waitFor(async () => (await textOf(cell(page, 'worker-3', 'state'))) === 'lost', 'worker-3 lost', 10_000,
    () => page.getByTestId('workers-table').textContent());
  assert.equal(await textOf(page.getByRole('tab', { name: /^Workers/ })), 'Workers (2)', 'the tab counts the workers alive');
  assert.equal(await textOf(cell(page, 'worker-3', 'inflight')), '0 / 16');
  assert.match((await textOf(page.getByTestId('workers-summary'))) ?? '', /^3 workers, 2 alive · /);
  await shoot(t, page, 'shared-workers-lost');
  await page.getByRole('tab', { name: 'Slots', exact: true }).click();
  await slotRow(page, 'shop.example.test').waitFor({ timeout: 5000 });
  await shoot(t, page, 'shared-slots');

  // Stop: the worker process ends by itself with the crawl.
  await stack.call('crawls.stop', { id });
  assert.equal(await ext.exited, 0, ext.stderr);
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  const after = await stack.call<ChangeRecord[]>('log.changes', { id });
  assert.equal(after.filter((c) => c.setting === 'paused').length, 2, 'pause and resume, once each');
  assert.equal(after.filter((c) => c.setting === 'stopped').length, 1, 'the stop once');
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

// Loopback addresses of the restart test: 127.0.112.2x.
const RESTART_HOSTS = {
  'north.example.test': { address: '127.0.112.21', pages: 500, latency_ms: { base: 40, jitter: 15 } },
  'south.example.test': { address: '127.0.112.22', pages: 500, latency_ms: { base: 30, jitter: 10 } },
};

/** The host started again on `db` and `redis`, its console open on the paused shared crawl's Workers tab. */
async function reopened(t: TestContext, db: string, redis: string) {
  const second = await startHost(t, db, redis);
  const p = await openPage(t, second.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  await page.getByTestId('crawl-shared').first().waitFor({ timeout: 5000 });
  await page.getByRole('tab', { name: /^Workers/ }).click();
  return { second, p, page };
}

/** A console host (the core with a Redis, its WebSocket server); close() is safe to call twice. */
async function startHost(t: TestContext, db: string, redis: string) {
  const core = await createCore({ db, redis });
  const server = await startServer({ dispatcher: core, staticDir: RENDERER_DIR, log: () => undefined });
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= server.close().then(() => core.close()));
  t.defer(close);
  const call = async <T>(method: string, params: unknown): Promise<T> => {
    const r: Reply = await core.dispatch(method, params);
    if (!r.ok) throw new Error(`${method} refused: ${r.error.code}: ${r.error.message}`);
    return r.result as T;
  };
  return { core, server, call, close };
}

test('shared crawl after a host restart: listed shared with its workers and their limit, resumed as shared; a worker killed warns live without reload', async (t) => {
  if (!hasRedis) return;
  const redis = await startRedis(t);
  const site = await startTestSite({ hosts: RESTART_HOSTS, seed: 19 }, { keepLog: true });
  t.defer(() => site.close());
  const db = join(t.tmpDir(), 'restart.sqlite');
  const first = await startHost(t, db, redis);
  const { crawl } = await first.call<{ crawl: { id: number } }>('crawls.create', {
    config: {
      name: 'North and south', seeds: Object.keys(RESTART_HOSTS).map((h) => `${site.origin(h)}/`), resolve: site.resolve, follow: { scope: 'host' },
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.15, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
    },
  });
  const id = crawl.id;
  await first.call('crawls.start', { id });
  const stay = startWorker(t, redis, 'w-stay', 4);
  await waitFor(async () => (await first.call<{ workers: WorkerWire[] }>('crawls.workers', { id })).workers.some((w) => w.name === 'w-stay' && w.responses > 0),
    'w-stay to fetch', 20_000);
  await first.call('crawls.pause', { id });
  // The host quits (as Ctrl-C on serve does) and starts again on the same database and Redis.
  await first.close();
  const quiet = site.log.length;
  const { second, p, page } = await reopened(t, db, redis);
  let own = '';
  await waitFor(async () => {
    own = (await second.call<{ workers: WorkerWire[] }>('crawls.workers', { id })).workers.find((w) => w.name !== 'w-stay')?.name ?? '';
    return own !== '' && (await workerRow(page, 'w-stay').getAttribute('data-alive').catch(() => null)) === 'true'
      && (await workerRow(page, own).getAttribute('data-alive').catch(() => null)) === 'true';
  }, 'w-stay and this host alive in the Workers tab after the restart', 15_000, () => page.getByTestId('workers-table').textContent());
  assert.equal(await textOf(page.getByRole('tab', { name: /^Workers/ })), 'Workers (2)');
  assert.equal(await textOf(cell(page, 'w-stay', 'inflight')), '0 / 4');
  // The header's limit: the live workers' concurrency, 4 + this host's 16.
  await waitFor(async () => (await textOf(page.getByTestId('stat-inflight')))?.replace(/\s+/g, ' ').trim() === '0 / 20', 'In flight 0 / 20 in the header', 5000,
    () => textOf(page.getByTestId('stat-inflight')));
  assert.equal(site.log.length, quiet, 'nothing fetched while paused across the restart');
  await sleep(1500);
  await shoot(t, page, 'shared-restart-workers');
  const before = await numberOf(cell(page, 'w-stay', 'responses'));

  // Resume from the page: the same shared crawl goes on, w-stay fetching again.
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running', 5000);
  await waitFor(async () => (await numberOf(cell(page, 'w-stay', 'responses'))) > before, 'w-stay to fetch again after the resume', 15_000);

  // A worker joins and is killed: its worker-lost warning shows in the open page, without a reload.
  await page.evaluate('window.__sameDocument = 1');
  const doomed = startWorker(t, redis, 'w-doomed');
  await waitFor(async () => (await numberOf(cell(page, 'w-doomed', 'responses'))) > 0, 'w-doomed to fetch', 15_000);
  const tKill = Date.now();
  doomed.child.kill('SIGKILL');
  await waitFor(async () => (await textOf(cell(page, 'w-doomed', 'state'))) === 'lost', 'w-doomed lost', 10_000);
  await page.getByRole('tab', { name: /^Warnings/ }).click();
  const item = page.locator('[data-testid="warning-list"] li[data-code="worker-lost"]');
  await item.first().waitFor({ timeout: 5000 });
  const shownAfter = Date.now() - tKill;
  assert.match((await textOf(item.first())) ?? '', /worker w-doomed stopped answering/);
  assert.equal(await page.evaluate('window.__sameDocument'), 1, 'the page was not reloaded');
  t.log(`worker-lost shown ${shownAfter} ms after the kill (heartbeat lapse 3 s, sweep every 1 s)`);
  await shoot(t, page, 'shared-worker-lost-warning');

  await second.call('crawls.stop', { id });
  assert.equal(await stay.exited, 0, stay.stderr);
  // One polite client per site through it all: never more than the per-host limit in flight at the site.
  for (const h of Object.keys(RESTART_HOSTS)) assert.ok(site.inFlightStats(h).max <= 2, `${h}: ${site.inFlightStats(h).max} in flight at once`);
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

test('a shared crawl its Redis no longer has: the Workers tab says why, and Resume is refused naming the crawl and the Redis; nothing is fetched', async (t) => {
  if (!hasRedis) return;
  const redis = await startRedis(t);
  const site = await startTestSite({ hosts: { 'gone.example.test': { address: '127.0.112.23', pages: 300, latency_ms: 20 } }, seed: 20 }, { keepLog: true });
  t.defer(() => site.close());
  const db = join(t.tmpDir(), 'gone.sqlite');
  const first = await startHost(t, db, redis);
  const { crawl } = await first.call<{ crawl: { id: number } }>('crawls.create', {
    config: { name: 'Gone from Redis', seeds: [`${site.origin('gone.example.test')}/`], resolve: site.resolve, follow: { scope: 'host' },
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false } },
  });
  const id = crawl.id;
  await first.call('crawls.start', { id });
  await waitFor(() => site.log.length > 5, 'some requests', 15_000);
  await first.call('crawls.pause', { id });
  await first.close();
  const n = site.log.length;
  const port = new URL(redis).port;
  assert.equal(spawnSync('redis-cli', ['-p', port, 'FLUSHALL'], { encoding: 'utf8' }).stdout.trim(), 'OK');
  const { second, p, page } = await reopened(t, db, redis);
  await page.getByTestId('workers-unavailable').waitFor({ timeout: 5000 });
  assert.match((await textOf(page.getByTestId('workers-unavailable'))) ?? '', new RegExp(`crawl ${id} is a shared crawl this host does not record now`));
  assert.equal(await textOf(page.getByTestId('workers-summary')), 'not recorded by this host');
  assert.match((await textOf(page.getByTestId('stat-inflight'))) ?? '', /\/ —/);
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  const line = page.getByTestId('message-line');
  await line.waitFor({ timeout: 5000 });
  const said = (await textOf(line)) ?? '';
  assert.match(said, new RegExp(`crawl ${id} is a shared crawl, but the Redis at redis://127\\.0\\.0\\.1:${port}/0 no longer has it`));
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  await sleep(1000);
  assert.equal(site.log.length, n, 'nothing fetched');
  await shoot(t, page, 'shared-gone-from-redis');
}, { timeoutMs: 90_000 });

await runTests('shared-workers.e2e.ts');
