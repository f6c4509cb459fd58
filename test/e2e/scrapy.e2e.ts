// A real Scrapy spider (Debian's python3-scrapy) with the slotscope-scrapy extension, watched and
// steered in the console in Chromium at 1280×800: the crawl listed with its Scrapy badge, its
// downloader slots live, one slot paused from its row, the crawl stopped from the header.
// Screenshot: docs/screenshots/scrapy-crawl-light|dark.png (with SLOTSCOPE_UPDATE_SCREENSHOTS=1).

import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertNoPageErrors, ensureScreenshotsDir, numberOf, openPage, ROOT, runTests, slotCell, slotRow, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const PYTHON = [process.env.SLOTSCOPE_PYTHON, 'python3', '/usr/bin/python3']
  .filter((p): p is string => !!p)
  .find((py) => spawnSync(py, ['-c', 'import scrapy'], { encoding: 'utf8' }).status === 0);

const HOSTS = {
  'books.example.test': { address: '127.0.97.31', pages: 400, page_bytes: 4000, latency_ms: { base: 45, jitter: 15, per_inflight: 5 } },
  'api.slowshop.test': { address: '127.0.97.32', pages: 300, latency_ms: { base: 220, jitter: 60, per_inflight: 60 }, statuses: { '503': 0.04 } },
  'news.example.test': { address: '127.0.97.33', pages: 300, latency_ms: { base: 70, jitter: 20, per_inflight: 10 } },
  'docs.example.test': { address: '127.0.97.34', pages: 200, latency_ms: { base: 120, jitter: 30, per_inflight: 20 } },
};

test('a Scrapy crawl in the console: live slots, a slot paused from its row, stopped from the header', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 11 }, []);
  const dir = t.tmpDir();
  const config = join(dir, 'spider.json');
  const statsFile = join(dir, 'stats.json');
  writeFileSync(config, JSON.stringify({
    name: 'bookstore',
    start_urls: Object.keys(HOSTS).map((h) => `${stack.site.origin(h)}/`),
    resolve: stack.site.resolve,
    stats_file: statsFile,
    settings: {
      EXTENSIONS: { 'slotscope_scrapy.SlotscopeBridge': 500 }, SLOTSCOPE_URL: stack.server.url, LOG_FILE: join(dir, 'scrapy.log'),
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 2,
      CONCURRENT_REQUESTS_PER_DOMAIN: 4,
    },
  }));
  const spider = spawn(PYTHON!, [join(ROOT, 'test', 'fixtures', 'scrapy', 'site_spider.py'), config], {
    cwd: dir, stdio: 'ignore',
    env: { ...process.env, PYTHONPATH: join(ROOT, 'integrations', 'scrapy'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  const exited = new Promise<number | null>((r) => spider.once('close', (code) => r(code)));
  t.defer(() => {
    if (spider.exitCode === null && spider.signalCode === null) spider.kill('SIGKILL');
  });

  const p = await openPage(t, stack.server.url, { colorScheme: 'light' });
  const { page } = p;
  const row = page.locator('[data-testid="crawl-list"] tr', { has: page.getByTestId('crawl-source') });
  await row.first().waitFor({ timeout: 20_000 });
  assert.equal(await textOf(row.first().getByTestId('crawl-source')), 'Scrapy');
  await row.first().locator('button.link').click();
  await waitForText(page.getByTestId('crawl-name'), 'bookstore');
  await waitForText(page.getByTestId('crawl-status'), 'running');
  assert.equal(await textOf(page.locator('.crawl-title').getByTestId('crawl-source')), 'Scrapy');
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 20_000 });
  await waitFor(async () => (await numberOf(slotCell(page, 'books.example.test', 'requests'))) >= 15, 'traffic on books.example.test', 60_000);

  // Steer it from the table: pause one slot; the spider holds its requests and the row says so.
  await page.getByRole('button', { name: 'Pause slot docs.example.test' }).click();
  await waitFor(async () => (await slotRow(page, 'docs.example.test').getAttribute('data-state')) === 'paused', 'docs.example.test to show paused', 5000);
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) >= 250, 'more traffic', 40_000);

  const shots = ensureScreenshotsDir();
  await page.mouse.move(1270, 795);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(200);
    await page.screenshot({ path: join(shots, `scrapy-crawl-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  t.log(`saved ${join(shots, 'scrapy-crawl-light.png')} and scrapy-crawl-dark.png`);

  // Stop from the header: the spider closes with Slotscope's reason.
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  // Stop asks first (naming the crawl).
  const confirm = page.getByTestId('confirm-stop');
  await confirm.waitFor({ timeout: 3000 }).then(() => confirm.getByRole('button', { name: /^Stop/ }).click(), () => undefined);
  assert.equal(await exited, 0);
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  const stats = existsSync(statsFile) ? (JSON.parse(readFileSync(statsFile, 'utf8')) as Record<string, unknown>) : {};
  assert.equal(stats.finish_reason, 'slotscope_stop');
  assertNoPageErrors(p);
}, { timeoutMs: 150_000 });

await runTests('scrapy.e2e', PYTHON ? {} : { skip: 'no python3 with Scrapy (apt-get install python3-scrapy, or set SLOTSCOPE_PYTHON)' });
