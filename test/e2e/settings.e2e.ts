// The settings panel and the New crawl form against the real core: a delay changed mid-crawl
// shows in the site's arrival gaps and in the Changes list; bad values are stopped before sending.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import {
  assertNoPageErrors, ensureScreenshotsDir, openPage, runTests, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const STEADY = { 'steady.test': { address: '127.0.30.41', pages: 3000, latency_ms: 10 } };

const row = (page: Page, name: string) => page.getByTestId(`setting-${name}`);
const input = (page: Page, name: string) => page.locator(`#setting-${name}`);
const apply = (page: Page, name: string) => page.getByRole('button', { name: `Apply ${name}`, exact: true });

test('changing DOWNLOAD_DELAY mid-crawl from the settings panel spaces the arrivals and lists the change', async (t) => {
  const stack = await startStack(t, { hosts: STEADY }, [{
    name: 'e2e delay change',
    settings: { DOWNLOAD_DELAY: 0, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1, AUTOTHROTTLE_ENABLED: false },
  }]);
  const pages = () => stack.arrivals('steady.test').filter((e) => e.path !== '/robots.txt');
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(() => pages().length >= 20, 'some fast arrivals', 10_000, () => pages().length);

  await page.getByRole('tab', { name: 'Settings' }).click();
  await waitForText(row(page, 'DOWNLOAD_DELAY').getByTestId('setting-current'), '0');
  await input(page, 'DOWNLOAD_DELAY').fill('0.4');
  assert.equal(await apply(page, 'DOWNLOAD_DELAY').isEnabled(), true);
  await apply(page, 'DOWNLOAD_DELAY').click();
  await row(page, 'DOWNLOAD_DELAY').getByTestId('setting-applied').waitFor({ timeout: 5000 });
  assert.match((await textOf(row(page, 'DOWNLOAD_DELAY').getByTestId('setting-applied'))) ?? '', /^applied at \d\d:\d\d:\d\d$/);
  const n0 = pages().length;
  await waitForText(row(page, 'DOWNLOAD_DELAY').getByTestId('setting-current'), '0.4');

  // The Changes list: newest first, old → new, by the user.
  const change = page.locator('[data-testid="changes-list"] tr[data-setting="DOWNLOAD_DELAY"]').first();
  await change.waitFor({ timeout: 5000 });
  assert.equal(await textOf(change.locator('td[data-col="values"]')), '0 → 0.4');
  assert.equal(await textOf(change.locator('td[data-col="source"]')), 'user');

  await waitFor(() => pages().length >= n0 + 7, 'arrivals after the change', 15_000, () => pages().length - n0);
  const after = pages().slice(n0);
  const gaps = after.slice(1).map((e, i) => (e.t - after[i].t) / 1000);
  t.log(`gaps after the change (s): ${gaps.map((g) => g.toFixed(3)).join(' ')}`);
  assert.ok(gaps.every((g) => g >= 0.39), `every gap after the change is >= 0.39 s: ${gaps.join(', ')}`);
  const before = pages().slice(0, 20);
  const fastGaps = before.slice(1).map((e, i) => (e.t - before[i].t) / 1000);
  assert.ok(Math.min(...fastGaps) < 0.2, 'before the change the gaps were short');

  // Show the changed row with its "applied at" note.
  await row(page, 'DOWNLOAD_DELAY').scrollIntoViewIfNeeded();
  await page.mouse.move(640, 795);
  const dir = ensureScreenshotsDir();
  await page.screenshot({ path: join(dir, 'settings-light.png') });
  t.log(`saved ${join(dir, 'settings-light.png')}`);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  assertNoPageErrors(p);
});

test('invalid values are refused inline with the allowed range, Apply stays disabled, nothing changes', async (t) => {
  const stack = await startStack(t, { hosts: STEADY }, [{ name: 'e2e invalid settings', settings: { DOWNLOAD_DELAY: 0.25 } }]);
  const [id] = stack.crawlIds;
  const initial = await stack.call<Record<string, unknown>>('settings.get', { id });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('tab', { name: 'Settings' }).click();
  await waitForText(row(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').getByTestId('setting-current'), '1');

  await input(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').fill('0');
  await waitFor(async () => /a number > 0/.test((await textOf(row(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').getByTestId('setting-error'))) ?? ''),
    'the inline error naming "> 0"', 5000, () => textOf(row(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').getByTestId('setting-error')));
  assert.equal(await apply(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').isDisabled(), true);

  await input(page, 'DOWNLOAD_DELAY').fill('-1');
  await waitFor(async () => /a number >= 0/.test((await textOf(row(page, 'DOWNLOAD_DELAY').getByTestId('setting-error'))) ?? ''),
    'the inline error naming ">= 0"', 5000, () => textOf(row(page, 'DOWNLOAD_DELAY').getByTestId('setting-error')));
  assert.equal(await apply(page, 'DOWNLOAD_DELAY').isDisabled(), true);
  // Pressing Enter in the field sends nothing either.
  await input(page, 'DOWNLOAD_DELAY').press('Enter');
  await page.waitForTimeout(300);
  assert.deepEqual(await stack.call('settings.get', { id }), initial, 'settings.get shows nothing changed');
  assert.deepEqual(await stack.call('log.changes', { id }), [], 'no change was recorded');

  // A valid value on a crawl that has not started is applied and listed.
  await input(page, 'DOWNLOAD_DELAY').fill('0.5');
  await apply(page, 'DOWNLOAD_DELAY').click();
  await row(page, 'DOWNLOAD_DELAY').getByTestId('setting-applied').waitFor({ timeout: 5000 });
  assert.equal((await stack.call<{ DOWNLOAD_DELAY: number }>('settings.get', { id })).DOWNLOAD_DELAY, 0.5);
  const change = page.locator('[data-testid="changes-list"] tr[data-setting="DOWNLOAD_DELAY"]').first();
  await change.waitFor({ timeout: 5000 });
  assert.equal(await textOf(change.locator('td[data-col="values"]')), '0.25 → 0.5');
  assertNoPageErrors(p);
});

test('the New crawl form with the Polite preset creates a crawl; a bad seed line is named by its number', async (t) => {
  const stack = await startStack(t, { hosts: STEADY }, []);
  const origin = stack.site.origin('steady.test');
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await page.getByRole('button', { name: 'New crawl' }).click();
  const form = page.getByTestId('new-crawl-form');
  await form.waitFor({ timeout: 5000 });
  await form.getByLabel('Name').fill('e2e from the form');
  await form.getByLabel('Seeds, one URL a line').fill(`${origin}/\nnot a url\n${origin}/page/1\n`);
  await waitFor(async () => /line 2: not a url/.test((await textOf(page.getByTestId('seed-problems'))) ?? ''), 'line 2 reported before submit', 5000);
  await form.getByLabel('Preset').selectOption({ label: 'Polite, one site' });
  assert.match((await textOf(page.getByTestId('preset-help'))) ?? '', /One request at a time per host/);
  await form.getByLabel('Max pages').fill('5');
  // A bad advanced setting blocks Create, inline.
  await form.getByLabel('Advanced settings').fill('{"DOWNLOAD_DELAY": -2}');
  await waitFor(async () => /DOWNLOAD_DELAY: -2 is not allowed/.test((await textOf(page.getByTestId('advanced-error'))) ?? ''), 'the advanced settings error', 5000);
  assert.equal(await form.getByRole('button', { name: 'Create' }).isDisabled(), true);
  await form.getByLabel('Advanced settings').fill('{"ROBOTSTXT_OBEY": false}');
  await form.getByLabel('Resolve').fill(JSON.stringify(stack.site.resolve));
  await form.getByRole('button', { name: 'Create' }).click();

  // The host skipped line 2 too, and says so by number.
  await waitFor(async () => /line 2: not a url/.test((await textOf(page.getByTestId('created-note'))) ?? ''), 'the host\'s seed error for line 2', 5000,
    () => textOf(page.getByTestId('created-note')));
  const listed = page.locator('[data-testid="crawl-list"] tr', { hasText: 'e2e from the form' });
  await listed.waitFor({ timeout: 5000 });
  const crawls = await stack.call<{ id: number; name: string }[]>('crawls.list', {});
  const created = crawls.find((c) => c.name === 'e2e from the form');
  assert.ok(created, 'the crawl is in the host\'s list');
  const s = await stack.call<Record<string, unknown>>('settings.get', { id: created.id });
  assert.equal(s.AUTOTHROTTLE_ENABLED, true);
  assert.equal(s.DOWNLOAD_DELAY, 1);
  assert.equal(s.CONCURRENT_REQUESTS_PER_DOMAIN, 1);
  assert.equal(s.ROBOTSTXT_OBEY, false);

  await page.getByRole('button', { name: 'Show the crawl' }).click();
  await waitForText(page.getByTestId('crawl-name'), 'e2e from the form');
  await waitForText(page.getByTestId('crawl-status'), 'created');
  assertNoPageErrors(p);
});

await runTests('settings.e2e.ts');
