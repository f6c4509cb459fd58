// Screenshots of the Crawl view and of the New crawl form filled from a crawl (Duplicate and edit), at
// 1024 and 1280 px, light and dark (.tmp/screenshots, or docs/screenshots with SLOTSCOPE_UPDATE_SCREENSHOTS=1),
// each also checked for text cut by its box.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, ensureScreenshotsDir, openPage, runTests, startStack, test, waitForText, type TestContext } from './harness';

const HOST = 'books.example.test';
const API = 'api.example.test';
const SITE = {
  hosts: {
    [HOST]: { address: '127.0.95.41', pages: 50, latency_ms: 2 },
    [API]: { address: '127.0.95.42', pages: 50, latency_ms: 2 },
  },
  seed: 4,
};

async function shoot(t: TestContext, page: Page, name: string): Promise<void> {
  const dir = ensureScreenshotsDir();
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(width - 4, 796);
      await page.waitForTimeout(200);
      const file = join(dir, `${name}-${width}-${scheme}.png`);
      await page.screenshot({ path: file });
      t.log(`saved ${file}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Text wider than its box that neither wraps, scrolls nor ends in an ellipsis. */
async function cutText(page: Page, selector: string): Promise<string[]> {
  type Box = { scrollWidth: number; clientWidth: number; className: string; tagName: string; textContent: string | null };
  type Style = { overflowX: string; textOverflow: string };
  return page.locator(selector).evaluateAll((els) => (els as unknown as Box[]).filter((e) => {
    const style = (globalThis as unknown as { getComputedStyle: (e: unknown) => Style }).getComputedStyle(e);
    return e.scrollWidth > e.clientWidth + 1 && style.overflowX === 'visible' && style.textOverflow !== 'ellipsis';
  }).map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 60)}`));
}

test('crawl view screens: a crawl\'s definition and its copy in the New crawl form, at 1024 and 1280 px, light and dark', async (t) => {
  const stack = await startStack(t, SITE, []);
  const books = stack.site.origin(HOST);
  await stack.call('crawls.create', { config: {
    name: 'Books and API, nightly',
    seeds: [...Array.from({ length: 48 }, (_, i) => `${books}/page/${i + 1}`), `${stack.site.origin(API)}/`],
    follow: { scope: 'host', max_depth: 4, max_pages: 2000, include: ['/page/', '/api/v1/'], exclude: ['/login', '\\?sort='] },
    scopes: [{ by: 'domain' }, { by: 'prefix', prefix: `${stack.site.origin(API)}/v1/`, scope: 'api-v1' }],
    resolve: stack.site.resolve,
    settings: {
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, DOWNLOAD_DELAY: 0.25, RETRY_TIMES: 3, ROBOTSTXT_OBEY: false,
      THROTTLING_SCOPES: { [API]: { concurrency: 2, delay: 0.5, quota: 100, window: 60, backoff: { max_delay: 60 } }, 'api-v1': { rampup: true, autothrottle: { target_concurrency: 1 } } },
    },
  } });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'Books and API, nightly');
  await page.getByRole('tab', { name: 'Crawl' }).click();
  await page.getByTestId('crawl-settings-table').waitFor();
  await shoot(t, page, 'crawl-view');
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(150);
    assert.deepEqual(await cutText(page, '[data-testid="crawl-view"] dd, [data-testid="crawl-view"] td, [data-testid="crawl-view"] li'), [], `nothing cut at ${width} px`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByTestId('duplicate-edit').click();
  await page.getByTestId('scopes-table').waitFor();
  await shoot(t, page, 'crawl-view-duplicate');
  await page.getByTestId('scope-rules').scrollIntoViewIfNeeded();
  await page.evaluate(`document.querySelector('[data-testid="scope-rules"]').scrollIntoView({ block: 'start' })`);
  await shoot(t, page, 'crawl-view-duplicate-rules');
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    await page.waitForTimeout(150);
    const over = await page.locator('[data-testid="new-crawl-form"] .input').evaluateAll((els) => (els as unknown as { getBoundingClientRect(): { right: number }; getAttribute(n: string): string | null; closest(s: string): { getBoundingClientRect(): { right: number } } | null }[])
      .filter((e) => { const box = e.closest('.form-col, .form-wide, .form-actions'); return box !== null && e.getBoundingClientRect().right > box.getBoundingClientRect().right + 1; })
      .map((e) => e.getAttribute('aria-label') ?? e.getAttribute('placeholder') ?? '?'));
    assert.deepEqual(over, [], `no field sticks out of its column at ${width} px`);
  }
  assertNoPageErrors(p);
});

await runTests('crawl-view-screens.e2e.ts');
