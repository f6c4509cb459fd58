// The Stats tab (issue 16): a crawl's end-of-crawl figures under Scrapy's stats names, counted from
// the store, agreeing with what was recorded: status counts, retries and requests given up, failures
// by kind, finish_reason (shutdown for a crawl stopped by the user).

import { strict as assert } from 'node:assert';
import Database from 'better-sqlite3';
import { assertNoPageErrors, openPage, runTests, startStack, test, textOf, waitFor, waitForText } from './harness';

const LIMITED = 'limited.stats.test';
const FLAKY = 'flaky.stats.test';
const SITE = {
  hosts: {
    [LIMITED]: { address: '127.0.95.21', pages: 30, latency_ms: 5, rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 1 } },
    [FLAKY]: { address: '127.0.95.22', pages: 30, latency_ms: 5, statuses: { '503': 0.5 } },
  },
  seed: 9,
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2,
  BACKOFF_MIN_DELAY: 0.05, BACKOFF_MAX_DELAY: 0.5, BACKOFF_WINDOW: 1, RETRY_TIMES: 1,
};

const statValue = async (page: import('playwright-core').Page, name: string): Promise<string | null> =>
  page.locator(`[data-testid="stats-table"] tr[data-stat="${name}"] td[data-value]`).getAttribute('data-value').catch(() => null);

test('stats: Scrapy\'s end-of-crawl stats agree with the recorded crawl', async (t) => {
  const stack = await startStack(t, SITE, [{ name: 'e2e stats', follow: { scope: 'host' }, settings: SETTINGS }]);
  const [id] = stack.crawlIds;
  await stack.call('crawls.start', { id });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id })).status === 'finished', 'the crawl to finish', 60_000);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'finished');
  await page.getByRole('tab', { name: 'Stats' }).click();
  await page.getByTestId('stats-table').waitFor();

  const db = new Database(stack.dbFile, { readonly: true });
  t.defer(() => db.close());
  const one = (sql: string, ...args: unknown[]) => db.prepare(sql).pluck().get(...args) as number;
  const requests = one('SELECT count(*) FROM responses WHERE crawl_id = ?', id);
  const s429 = one('SELECT count(*) FROM responses WHERE crawl_id = ? AND status = 429', id);
  const s503 = one('SELECT count(*) FROM responses WHERE crawl_id = ? AND status = 503', id);
  const retries = one('SELECT count(*) FROM responses WHERE crawl_id = ? AND attempt > 0', id);
  const gaveUp = one(`SELECT count(*) FROM events WHERE crawl_id = ? AND kind = 'error' AND code = 'retries-exhausted'`, id);
  const robots = one(`SELECT count(*) FROM responses WHERE crawl_id = ? AND url LIKE '%/robots.txt'`, id);
  assert.ok(s429 > 0 && s503 > 0 && retries > 0, `the crawl met 429s (${s429}), 503s (${s503}) and retried (${retries})`);

  assert.equal(await statValue(page, 'downloader/request_count'), String(requests));
  assert.equal(await statValue(page, 'downloader/response_status_count/429'), String(s429));
  assert.equal(await statValue(page, 'downloader/response_status_count/503'), String(s503));
  assert.equal(await statValue(page, 'retry/count'), String(retries));
  assert.equal(await statValue(page, 'retry/max_reached'), String(gaveUp));
  assert.equal(await statValue(page, 'robotstxt/request_count'), String(robots));
  assert.equal(await statValue(page, 'finish_reason'), 'finished');
  const row = db.prepare('SELECT started_at, finished_at FROM crawls WHERE id = ?').get(id) as { started_at: number; finished_at: number };
  assert.ok(Math.abs(Number(await statValue(page, 'elapsed_time_seconds')) - (row.finished_at - row.started_at) / 1000) < 0.01, 'elapsed_time_seconds');
  // Sorted by name, as Scrapy dumps them; each with what it counts.
  const names = await page.locator('[data-testid="stats-table"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-stat') ?? ''));
  assert.deepEqual(names, [...names].sort());
  assert.match((await textOf(page.locator('tr[data-stat="retry/max_reached"]'))) ?? '', /requests given up after their last retry/);
  assertNoPageErrors(p);
});

test('stats: a crawl stopped by the user finished for the reason "shutdown"', async (t) => {
  const stack = await startStack(t, { hosts: { [FLAKY]: { address: '127.0.95.23', pages: 200, latency_ms: 20 } }, seed: 3 },
    [{ name: 'e2e stats stop', follow: { scope: 'host' }, settings: { DOWNLOAD_DELAY: 0.2, RANDOMIZE_DOWNLOAD_DELAY: false } }]);
  const [id] = stack.crawlIds;
  await stack.call('crawls.start', { id });
  await waitFor(async () => (await stack.call<{ requests: number }>('crawls.stats', { id })).requests >= 3, 'a few requests', 20_000);
  await stack.call('crawls.stop', { id });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id })).status === 'stopped', 'stopped');
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'stopped');
  await page.getByRole('tab', { name: 'Stats' }).click();
  await waitFor(async () => (await statValue(page, 'finish_reason')) === 'shutdown', 'finish_reason shutdown', 10_000);
  assertNoPageErrors(p);
});

await runTests('requests-stats.e2e.ts');
