// Issue 16, traps in forms: Create cannot make a second crawl after it succeeded; a delay pin above
// the crawl's largest delay bound (BACKOFF_MAX_DELAY / AUTOTHROTTLE_MAX_DELAY) asks first, and a long
// delay is written as a duration ("22 h 13 min"), never as "80147.6 s".

import { strict as assert } from 'node:assert';
import type { SlotTuple } from '../../shared/contract';
import type { CrawlInfo } from '../../shared/contract';
import { assertNoPageErrors, openPage, runTests, sleep, slotCell, slotRow, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOSTS = {
  'form.test': { address: '127.0.94.51', pages: 400, latency_ms: 5 },
  'other.test': { address: '127.0.94.52', pages: 400, latency_ms: 5 },
};

test('Create is off once the crawl is created (no second crawl from a second click)', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, []);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await page.getByRole('button', { name: 'New crawl', exact: true }).click();
  const form = page.getByTestId('new-crawl-form');
  await form.getByRole('textbox', { name: 'Name' }).fill('e2e create once');
  // A bad line makes the host report it, so the form stays open with its note after Create.
  await form.getByRole('textbox', { name: /Seeds/ }).fill(`${stack.site.hosts['form.test']}/\nnot a url`);
  const create = form.getByRole('button', { name: 'Create', exact: true });
  await create.click();
  await page.getByTestId('created-note').waitFor({ timeout: 5000 });
  const count = async () => (await stack.call<CrawlInfo[]>('crawls.list', {})).length;
  assert.equal(await count(), 1);
  assert.equal(await create.isDisabled(), true, 'Create is off after the crawl was created');
  await create.click({ force: true }).catch(() => undefined);
  await sleep(500);
  assert.equal(await count(), 1, 'a second click made no second crawl');
  assertNoPageErrors(p);
});

test('a delay pin above the crawl\'s max delays asks first; long delays read as durations', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{
    name: 'e2e long pin',
    settings: { DOWNLOAD_DELAY: 0.3, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_MAX_DELAY: 60, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
  }]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await slotRow(page, 'form.test').waitFor({ timeout: 10_000 });
  await sleep(800);

  await page.getByRole('button', { name: 'More actions for slot form.test' }).click();
  await page.getByTestId('row-menu').getByRole('menuitem', { name: 'Pin delay…' }).click();
  const input = page.getByLabel('Pinned delay for form.test, seconds');
  await input.fill('80000');
  await input.press('Enter');
  const pinned = async () => (await stack.call<{ rows: SlotTuple[] }>('slots.snapshot', { id })).rows.find((r) => r[0] === 'form.test')?.[20] ?? null;
  const confirm = page.getByTestId('pin-confirm');
  await confirm.waitFor({ timeout: 3000 });
  const words = (await textOf(confirm)) ?? '';
  assert.match(words, /MAX_DELAY/, `the bound is named: ${words}`);
  assert.match(words, /22 h 13 min/, `the pin as a duration: ${words}`);
  assert.equal(await pinned(), null, 'nothing pinned before the answer');
  await confirm.getByRole('button', { name: /^Pin/ }).click();
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  assert.equal(await pinned(), 80000);

  // Every cell of the row reads as a duration; none shows thousands of seconds.
  await waitFor(async () => /\d+ h \d+ min/.test((await textOf(slotCell(page, 'form.test', 'next'))) ?? ''), 'next start as a duration', 10_000,
    () => textOf(slotCell(page, 'form.test', 'next')));
  const row = (await textOf(slotRow(page, 'form.test'))) ?? '';
  assert.doesNotMatch(row, /\d{4,}(\.\d+)? ?s\b/, `no thousands of seconds in the row: ${row}`);
  assert.doesNotMatch(row, /80000/, `no raw delay: ${row}`);
  for (const col of ['delay', 'cause', 'next']) {
    const fits = await slotCell(page, 'form.test', col).evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    assert.ok(fits, `${col} fits its cell: ${await textOf(slotCell(page, 'form.test', col))}`);
  }

  // A pin below the bounds is taken at once.
  await page.getByRole('button', { name: 'More actions for slot other.test' }).click();
  await page.getByTestId('row-menu').getByRole('menuitem', { name: 'Pin delay…' }).click();
  await page.getByLabel('Pinned delay for other.test, seconds').fill('2');
  await page.getByLabel('Pinned delay for other.test, seconds').press('Enter');
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  assertNoPageErrors(p);
});

await runTests('traps-forms.e2e.ts');
