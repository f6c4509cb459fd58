// Screenshots of the console at 1280×800 in light and dark (docs/screenshots/console-*.png),
// taken mid-crawl against four hosts that each show a different kind of throttling.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import {
  assertNoPageErrors, ensureScreenshotsDir, numberOf, openPage, runTests, slotCell, slotRow, startStack, test, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'books.example.test': { address: '127.0.30.21', pages: 400, page_bytes: 4000, latency_ms: { base: 45, jitter: 15, per_inflight: 5 } },
  'api.slowshop.test': { address: '127.0.30.22', pages: 300, latency_ms: { base: 220, jitter: 60, per_inflight: 80 }, statuses: { '503': 0.06 } },
  'news.limited.test': {
    address: '127.0.30.23', pages: 300, latency_ms: { base: 70, jitter: 20, per_inflight: 10 },
    rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 3 },
  },
  'docs.polite.test': { address: '127.0.30.24', pages: 200, latency_ms: { base: 120, jitter: 30, per_inflight: 20 }, robots: { crawl_delay: 1 } },
};

test('screenshots in light and dark at 1280×800', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 7 }, [
    { name: 'Docs refresh (nightly)', hosts: ['docs.polite.test'], follow: { max_pages: 6 }, settings: { DOWNLOAD_DELAY: 0.05 } },
    { name: 'Price check: shop API only', hosts: ['api.slowshop.test'] },
    {
      name: 'Demo: four hosts, AutoThrottle on',
      settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4 },
    },
  ]);
  // An older crawl that already ran, so the list shows more than one state.
  const [older, , demo] = stack.crawlIds;
  await stack.call('crawls.start', { id: older });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id: older })).status === 'finished', 'the older crawl to finish', 30_000);

  const p = await openPage(t, stack.server.url, { colorScheme: 'light' });
  const { page } = p;
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${demo}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'Demo: four hosts, AutoThrottle on');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });
  // Wait until the rate-limited host has been refused, so the table shows more than happy rows.
  await waitFor(async () => (await numberOf(slotCell(page, 'news.limited.test', 's429'))) > 0, 'a 429 on news.limited.test', 20_000);
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) >= 40, 'some traffic', 20_000);
  // One slot paused by hand, as a user steering the crawl would.
  await page.getByRole('button', { name: 'Pause slot docs.polite.test' }).click();
  await waitFor(async () => (await slotRow(page, 'docs.polite.test').getAttribute('data-state')) === 'paused', 'docs.polite.test to show paused', 5000);

  // No hover highlight on whichever row the last click left the pointer over.
  await page.mouse.move(640, 795);
  const dir = ensureScreenshotsDir();
  await page.emulateMedia({ colorScheme: 'light' });
  await page.screenshot({ path: join(dir, 'console-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(dir, 'console-dark.png') });
  t.log(`saved ${join(dir, 'console-light.png')} and console-dark.png`);
  assert.equal(await page.evaluate('matchMedia("(prefers-color-scheme: dark)").matches'), true);
  assertNoPageErrors(p);
});

await runTests('screenshots.e2e.ts');
