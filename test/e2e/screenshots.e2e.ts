// Screenshots of every screen at 1280×800 in light and dark (docs/screenshots/*-light|dark.png),
// taken mid-crawl against five hosts that each show a different kind of throttling.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import {
  assertNoPageErrors, ensureScreenshotsDir, numberOf, openPage, runTests, slotCell, slotOrder, slotRow, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'books.example.test': { address: '127.0.30.21', pages: 400, page_bytes: 4000, latency_ms: { base: 45, jitter: 15, per_inflight: 5 } },
  'api.slowshop.test': { address: '127.0.30.22', pages: 300, latency_ms: { base: 220, jitter: 60, per_inflight: 80 }, statuses: { '503': 0.06 } },
  'news.limited.test': {
    address: '127.0.30.23', pages: 300, latency_ms: { base: 70, jitter: 20, per_inflight: 10 },
    rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 3 },
  },
  'docs.polite.test': { address: '127.0.30.24', pages: 200, latency_ms: { base: 120, jitter: 30, per_inflight: 20 }, robots: { crawl_delay: 1 } },
  'admin.blocked.test': { address: '127.0.30.25', pages: 60, latency_ms: 3, statuses: { '403': 1 } },
};

test('screenshots in light and dark at 1280×800', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 7 }, [
    { name: 'Docs refresh (nightly)', hosts: ['docs.polite.test'], follow: { max_pages: 6 }, settings: { DOWNLOAD_DELAY: 0.05 } },
    { name: 'Price check: shop API only', hosts: ['api.slowshop.test'] },
  ]);
  // The demo: every host's home page, and 30 pages of the blocked host (its fast 403s raise a warning).
  const { crawl: { id: demo } } = await stack.call<{ crawl: { id: number } }>('crawls.create', { config: {
    name: 'Demo: five hosts, AutoThrottle on',
    seeds: [...Object.keys(HOSTS).map((h) => `${stack.site.origin(h)}/`), ...Array.from({ length: 30 }, (_, i) => `${stack.site.origin('admin.blocked.test')}/page/${i + 1}`)],
    resolve: stack.site.resolve,
    settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4 },
  } });
  // An older crawl that already ran, so the list shows more than one state.
  const [older] = stack.crawlIds;
  await stack.call('crawls.start', { id: older });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id: older })).status === 'finished', 'the older crawl to finish', 30_000);

  const p = await openPage(t, stack.server.url, { colorScheme: 'light' });
  const { page } = p;
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${demo}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'Demo: five hosts, AutoThrottle on');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });
  // Wait until the rate-limited host has been refused, so the table shows more than happy rows.
  await waitFor(async () => (await numberOf(slotCell(page, 'news.limited.test', 's429'))) > 0, 'a 429 on news.limited.test', 20_000);
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) >= 40, 'some traffic', 20_000);
  // One slot paused by hand, as a user steering the crawl would.
  await page.getByRole('button', { name: 'Pause slot docs.polite.test' }).click();
  await waitFor(async () => (await slotRow(page, 'docs.polite.test').getAttribute('data-state')) === 'paused', 'docs.polite.test to show paused', 5000);

  const dir = ensureScreenshotsDir();
  /** One screen in light and in dark, the pointer parked where it highlights nothing. */
  const shoot = async (name: string) => {
    await page.mouse.move(1270, 795);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(dir, `${name}-light.png`) });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(150);
    assert.equal(await page.evaluate('matchMedia("(prefers-color-scheme: dark)").matches'), true);
    await page.screenshot({ path: join(dir, `${name}-dark.png`) });
    await page.emulateMedia({ colorScheme: 'light' });
    t.log(`saved ${join(dir, `${name}-light.png`)} and ${name}-dark.png`);
  };

  await shoot('console');

  // A row pinned to the top, and the row actions menu of another with its delay form open.
  await page.getByRole('button', { name: 'Pin slot news.limited.test to the top' }).click();
  await waitFor(async () => (await slotOrder(page))[0] === 'news.limited.test', 'the pinned row on top', 5000);
  await page.getByRole('button', { name: 'More actions for slot books.example.test' }).click();
  await page.getByTestId('row-menu').getByRole('menuitem', { name: 'Pin delay…' }).click();
  await page.getByLabel('Pinned delay for books.example.test, seconds').fill('0.25');
  await shoot('console-pinned');
  await page.keyboard.press('Escape');
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });

  // Filtered: the slots held back (blocked, backing off, paused) whose key has "test".
  await page.getByLabel('Filter slots by key').fill('.test');
  for (const state of ['backoff', 'blocked', 'paused']) await page.locator(`button[data-state-filter="${state}"]`).click();
  await waitFor(async () => /of \d+ slots/.test((await textOf(page.getByTestId('slot-count'))) ?? ''), 'the filtered count', 5000);
  await shoot('console-filtered');
  await page.getByRole('button', { name: 'Clear filters' }).click();

  // Settings: a change made mid-crawl from the panel (it also raises a warning about the settings).
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.locator('#setting-CONCURRENT_REQUESTS').fill('3');
  await page.getByRole('button', { name: 'Apply CONCURRENT_REQUESTS', exact: true }).click();
  await page.getByTestId('setting-CONCURRENT_REQUESTS').getByTestId('setting-applied').waitFor({ timeout: 5000 });
  await page.locator('[data-testid="changes-list"] tr[data-setting="CONCURRENT_REQUESTS"]').first().waitFor({ timeout: 5000 });
  await page.getByTestId('setting-CONCURRENT_REQUESTS').scrollIntoViewIfNeeded();
  await shoot('settings-panel');

  // Warnings: the blocked host's fast 403s and the settings warning, each with its fix.
  await page.getByRole('tab', { name: /^Warnings/ }).click();
  await page.locator('[data-testid="warning-list"] li[data-code="fast-errors"]').waitFor({ timeout: 30_000 });
  await shoot('warnings-panel');

  // Deleting the finished crawl asks first, naming it.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${older}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'Docs refresh (nightly)');
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.getByTestId('confirm-delete').waitFor({ timeout: 5000 });
  await shoot('delete-confirm');
  await page.getByTestId('confirm-delete').getByRole('button', { name: 'Cancel' }).click();

  // The New crawl form with the Polite preset and a bad seed line named by its number.
  await page.getByRole('button', { name: 'New crawl' }).click();
  const form = page.getByTestId('new-crawl-form');
  await form.getByLabel('Name').fill('Docs refresh, polite');
  await form.getByLabel('Seeds, one URL a line').fill('https://docs.polite.test/\nhttps://docs.polite.test/guide/\ndocs.polite.test/api\nhttps://docs.polite.test/changelog/');
  await form.getByLabel('Preset').selectOption({ label: 'Polite, one site' });
  await form.getByLabel('Max pages').fill('500');
  await page.getByTestId('seed-problems').waitFor({ timeout: 5000 });
  // Every setting, over the preset: one set here, one refused inline.
  await page.getByTestId('every-setting').locator('summary').click();
  await page.locator('#new-setting-CONCURRENT_REQUESTS').fill('32');
  await page.locator('#new-setting-DOWNLOAD_DELAY').fill('-1');
  await page.getByTestId('new-setting-DOWNLOAD_DELAY').getByTestId('new-setting-error').waitFor({ timeout: 5000 });
  await page.locator('#new-setting-DOWNLOAD_DELAY').blur();
  // The form from its top, the list scrolled to the refused field.
  await page.evaluate(`(() => {
    const list = document.querySelector('.every-setting-list');
    const row = list.querySelector('[data-testid="new-setting-DOWNLOAD_DELAY"]');
    list.scrollTop = row.offsetTop - list.offsetTop - 60;
  })()`);
  await page.getByTestId('new-crawl-form').evaluate((form) => form.scrollTo(0, 0));
  await shoot('new-crawl');
  assertNoPageErrors(p);
});

await runTests('screenshots.e2e.ts');
