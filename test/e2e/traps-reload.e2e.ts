// Issue 16, traps that show after a reload or before a start: dismissed warnings stay dismissed, a
// finished crawl's final figures are the same before and after a reload, and a crawl that never
// started says so (no "final figures", no "No slot matches the filter" without a filter).

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, numberOf, openPage, runTests, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOSTS = {
  'blocked.test': { address: '127.0.94.61', pages: 40, latency_ms: 2, statuses: { '403': 1 } },  'fine.test': { address: '127.0.94.62', pages: 30, page_bytes: 3000, latency_ms: 3, statuses: { '404': 0.1, '500': 0.1 } },
  'limited.test': { address: '127.0.94.63', pages: 30, latency_ms: 3, rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } },
  'polite.test': { address: '127.0.94.64', pages: 12, latency_ms: 3, robots: { crawl_delay: 0.2, disallow: ['/page/3'] } },
};
const PATHS = ['/', ...Array.from({ length: 29 }, (_, i) => `/page/${i + 1}`)];

test('a dismissed warning stays dismissed after a reload', async (t) => {
  // A warning every start raises (AutoThrottle's target above the per-slot limit), whatever the timing.
  const stack = await startStack(t, { hosts: { 'fine.test': HOSTS['fine.test'] } }, [{
    name: 'e2e dismiss', hosts: ['fine.test'],
    settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_TARGET_CONCURRENCY: 4, CONCURRENT_REQUESTS_PER_DOMAIN: 2, AUTOTHROTTLE_START_DELAY: 0.01 },
  }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await page.getByRole('tab', { name: /^Warnings/ }).click();
  const item = page.locator('[data-testid="warning-list"] li[data-code="target-above-concurrency"]');
  await item.waitFor({ timeout: 20_000 });
  await page.getByRole('button', { name: 'Dismiss target-above-concurrency on whole crawl' }).click();
  await waitFor(async () => (await item.count()) === 0, 'the dismissed warning to be hidden', 5000);
  const count = await numberOf(page.getByTestId('stat-warnings'));

  await page.reload();
  await waitForText(page.getByTestId('crawl-name'), 'e2e dismiss');
  await page.getByRole('tab', { name: /^Warnings/ }).click();
  await page.getByTestId('warnings-panel').waitFor();
  await waitFor(async () => ((await textOf(page.getByTestId('warnings-panel'))) ?? '').includes('dismissed'), 'the panel to load', 5000);
  assert.equal(await item.count(), 0, 'still dismissed after the reload');
  assert.equal(await numberOf(page.getByTestId('stat-warnings')), count, 'the count does not come back either');
  assertNoPageErrors(p);
});

/** Every figure of the header and the crawl's list row, as shown. */
async function figures(page: Page, id: number): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const k of ['stat-status', 'stat-elapsed', 'stat-requests', 'stat-responses', 'stat-classes', 'stat-failures', 'stat-slots', 'stat-queued', 'stat-inflight']) {
    out[k] = await textOf(page.getByTestId(k));
  }
  for (const col of ['requests', 'responses', 'failures', 'rate']) {
    out[`list-${col}`] = await textOf(page.locator(`[data-testid="crawl-list"] tr[data-crawl="${id}"] td[data-col="${col}"]`));
  }
  const rows = await page.locator('[data-testid="slot-table"] [role="row"][data-slot]').evaluateAll((els) =>
    els.map((r) => [...r.querySelectorAll('[role="gridcell"]')].filter((c) => c.getAttribute('data-col') !== 'action').map((c) => `${c.getAttribute('data-col')}=${(c.textContent ?? '').trim()}`).join(' ')).sort());
  rows.forEach((r, i) => void (out[`row-${i}`] = r));
  return out;
}

test('a finished crawl shows the same final figures before and after a reload', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{
    name: 'e2e final figures', paths: PATHS, settings: { AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0, RETRY_TIMES: 1 },
  }]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'finished', 30_000);
  await page.waitForTimeout(1500);
  const before = await figures(page, id);
  await page.reload();
  await waitForText(page.getByTestId('crawl-status'), 'finished');
  await waitFor(async () => (await textOf(page.getByTestId('stat-classes'))) !== null && !/—/.test((await textOf(page.getByTestId('stat-classes'))) ?? ''),
    'the figures to load', 5000);
  const after = await figures(page, id);
  assert.deepEqual(after, before, 'the same final figures after a reload');
  assertNoPageErrors(p);
});

test('a crawl that never started says so: no "final figures", no "No slot matches the filter"', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{ name: 'e2e not started' }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.waitForTimeout(800);
  const body = (await textOf(page.getByTestId('crawl-panel'))) ?? '';
  assert.doesNotMatch(body, /final figures/, 'an unstarted crawl has no final figures');
  assert.doesNotMatch(body, /No slot matches the filter/, 'no filter, so nothing to match');
  assert.match(body, /Start/);
  assertNoPageErrors(p);
});

await runTests('traps-reload.e2e.ts');
