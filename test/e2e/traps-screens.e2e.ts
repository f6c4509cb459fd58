// Screenshots of the states issue 16's traps changed, at 1024 and 1280 px, light and dark: the
// console with a long pinned delay and a paused crawl, Stop's confirmation, a stopped crawl offered
// Resume, the page while its host is gone, the seeds asked for by Duplicate of an import, and a
// delay pin that asks first. Saved to .tmp/screenshots (docs/screenshots with SLOTSCOPE_UPDATE_SCREENSHOTS=1).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import {
  assertNoPageErrors, ensureScreenshotsDir, numberOf, openPage, ROOT, runTests, SCREENSHOTS_DIR, slotCell, slotRow, startStack, test, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'books.example.test': { address: '127.0.94.81', pages: 400, page_bytes: 4000, latency_ms: { base: 45, jitter: 15, per_inflight: 5 } },
  'api.slowshop.test': { address: '127.0.94.82', pages: 300, latency_ms: { base: 220, jitter: 60, per_inflight: 80 }, statuses: { '503': 0.06 } },
  'news.limited.test': {
    address: '127.0.94.83', pages: 300, latency_ms: { base: 70, jitter: 20, per_inflight: 10 },
    rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 3 },
  },
  'docs.polite.test': { address: '127.0.94.84', pages: 200, latency_ms: { base: 120, jitter: 30, per_inflight: 20 }, robots: { crawl_delay: 1 } },
};
const WIDTHS = [1024, 1280] as const;

/** The shots the README shows (docs/screenshots with SLOTSCOPE_UPDATE_SCREENSHOTS=1); every other one goes to .tmp/screenshots only. */
const IN_DOCS: Readonly<Record<string, readonly number[]>> = {
  'traps-console': [1024], 'traps-paused': [1024], 'traps-stop-confirm': [1280], 'traps-pin-confirm': [1280],
  'traps-duplicate-seeds': [1280], 'traps-disconnected': [1024],
};

/** One state at both widths, light and dark: `<name>-<width>-<scheme>.png`. */
async function shoot(page: Page, name: string, log: (l: string) => void): Promise<void> {
  const docs = ensureScreenshotsDir();
  const tmp = join(ROOT, '.tmp', 'screenshots');
  mkdirSync(tmp, { recursive: true });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 1024 ? 768 : 800 });
    const dir = IN_DOCS[name]?.includes(width) ? docs : tmp;
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(width - 10, 5);
      await page.waitForTimeout(250);
      await page.screenshot({ path: join(dir, `${name}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  log(`saved ${name}-{1024,1280}-{light,dark}.png (${IN_DOCS[name] ? `${IN_DOCS[name].join(' and ')} px in ${SCREENSHOTS_DIR}, the rest` : 'all'} in ${tmp})`);
}

test('screenshots of the traps fixed, at 1024 and 1280 px, light and dark', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 7 }, [
    { name: 'Docs refresh (stopped, resumable)', hosts: ['docs.polite.test'], settings: { DOWNLOAD_DELAY: 0.05 } },
    { name: 'Demo: four hosts, AutoThrottle on', settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, AUTOTHROTTLE_MAX_DELAY: 60, CONCURRENT_REQUESTS_PER_DOMAIN: 4 } },
  ]);
  const [stopped, demo] = stack.crawlIds;
  await stack.call('crawls.start', { id: stopped });
  await new Promise((r) => setTimeout(r, 2500));
  await stack.call('crawls.stop', { id: stopped });
  const p = await openPage(t, stack.server.url);
  const { page } = p;

  // A running crawl, one long pin asked for first.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${demo}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'Demo: four hosts, AutoThrottle on');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });
  await waitFor(async () => (await numberOf(slotCell(page, 'news.limited.test', 's429'))) > 0, 'a 429', 20_000);
  await page.getByRole('button', { name: 'More actions for slot books.example.test' }).click();
  await page.getByTestId('row-menu').getByRole('menuitem', { name: 'Pin delay…' }).click();
  await page.getByLabel('Pinned delay for books.example.test, seconds').fill('80000');
  await page.getByLabel('Pinned delay for books.example.test, seconds').press('Enter');
  await page.getByTestId('pin-confirm').waitFor();
  await shoot(page, 'traps-pin-confirm', t.log);
  await page.getByTestId('pin-confirm').getByRole('button', { name: /^Pin/ }).click();
  await page.getByTestId('row-menu').waitFor({ state: 'detached' });
  await page.waitForTimeout(1500);
  await shoot(page, 'traps-console', t.log);

  // Stop asks first.
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').waitFor();
  await shoot(page, 'traps-stop-confirm', t.log);
  await page.getByTestId('confirm-stop').getByRole('button', { name: 'Cancel' }).click();

  // Paused: every row says so.
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  await page.waitForTimeout(600);
  await shoot(page, 'traps-paused', t.log);

  if (process.env.TRAPS_MORE_TABS === '1') {
    for (const tab of ['Overview', 'History', 'Requests']) {
      await page.getByRole('tab', { name: tab, exact: true }).click();
      await page.waitForTimeout(1500);
      await shoot(page, `traps-tab-${tab.toLowerCase()}`, t.log);
    }
  }

  // The Log tab: long lines scroll sideways.
  await page.getByRole('tab', { name: 'Log', exact: true }).click();
  await page.locator('[data-testid="log-list"] .log-line').first().waitFor();
  await shoot(page, 'traps-log', t.log);
  await page.getByRole('tab', { name: 'Slots', exact: true }).click();

  // A stopped crawl: Resume offered.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${stopped}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-status'), 'stopped');
  await page.waitForTimeout(500);
  await shoot(page, 'traps-stopped', t.log);

  // Duplicate of an import asks for seeds.
  await page.getByTestId('import-log-file').setInputFiles(join(ROOT, 'test', 'fixtures', 'scrapy-logs', 'scrapy-2.8.0-info-msecs.log'));
  await waitFor(async () => ((await page.getByTestId('crawl-name').textContent()) ?? '').includes('info-msecs'), 'the import', 10_000);
  await page.waitForTimeout(500);
  await shoot(page, 'traps-import', t.log);
  await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
  await page.getByTestId('duplicate-seeds').waitFor();
  await shoot(page, 'traps-duplicate-seeds', t.log);
  await page.getByTestId('duplicate-seeds').getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.getByTestId('settings-ended').waitFor();
  await shoot(page, 'traps-settings-ended', t.log);

  // The host gone: the page says so, controls off.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${demo}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  await stack.server.close();
  await page.getByTestId('connection-lost').waitFor({ timeout: 10_000 });
  await shoot(page, 'traps-disconnected', t.log);
  p.errors.splice(0, p.errors.length, ...p.errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket/.test(e)));
  assertNoPageErrors(p);
}, { timeoutMs: 180_000 });

await runTests('traps-screens.e2e.ts');
