// The console's controls against the real core and test site: row actions (pin delay and
// concurrency, clear pins, reset backoff, open history), the keyboard (Space, /), and a crawl
// duplicated and deleted through the UI with a confirmation that names it.

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import type { SlotTuple } from '../../shared/contract';
import type { ChangeRecord } from '../../shared/types';
import {
  assertNoPageErrors, numberOf, openPage, runTests, sleep, slotCell, slotOrder, slotRow, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'alpha.test': { address: '127.0.32.11', pages: 400, latency_ms: 10 },
  'beta.test': { address: '127.0.32.12', pages: 400, latency_ms: 10 },
  'limited.test': { address: '127.0.32.13', pages: 400, latency_ms: 5, rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 1 } },
};

const count = (page: Page) => textOf(page.getByTestId('slot-count'));
const menuItem = (page: Page, name: string) => page.getByTestId('row-menu').getByRole('menuitem', { name });

async function snapshotRow(call: <T>(m: string, p: unknown) => Promise<T>, id: number, key: string): Promise<SlotTuple> {
  const { rows } = await call<{ rows: SlotTuple[] }>('slots.snapshot', { id });
  const row = rows.find((r) => r[0] === key);
  assert.ok(row, `${key} is in the engine's snapshot`);
  return row;
}

test('row actions: filter and sort the live rows, pin delay and concurrency, clear pins, reset backoff, open history', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{
    name: 'e2e row actions', settings: { DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2 },
  }]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });

  // Filter by text, then by state (a slot paused by hand).
  await page.getByLabel('Filter slots by key').fill('limit');
  await waitFor(async () => (await slotOrder(page)).join() === 'limited.test', 'only limited.test', 5000, () => slotOrder(page));
  assert.equal(await count(page), '1 of 3 slots');
  await page.getByLabel('Filter slots by key').fill('');
  await page.getByRole('button', { name: 'Pause slot beta.test' }).click();
  await waitFor(async () => (await slotRow(page, 'beta.test').getAttribute('data-state')) === 'paused', 'beta.test paused', 5000);
  await page.locator('button[data-state-filter="paused"]').click();
  await waitFor(async () => (await slotOrder(page)).join() === 'beta.test', 'only the paused slot', 5000, () => slotOrder(page));
  await page.locator('button[data-state-filter="paused"]').click();
  await waitFor(async () => (await slotOrder(page)).length === 3, 'all three again', 5000);
  await page.getByRole('button', { name: 'Resume slot beta.test' }).click();

  // Sort by a column, pin a row on top.
  await page.locator('[data-testid="slot-table"] button[data-sort="s429"]').click();
  await waitFor(async () => (await slotOrder(page))[0] === 'limited.test', 'the slot with 429s on top', 15_000, () => slotOrder(page));
  await page.getByRole('button', { name: 'Pin slot beta.test to the top' }).click();
  await waitFor(async () => (await slotOrder(page))[0] === 'beta.test', 'beta.test pinned on top of a sort by 429s', 5000, () => slotOrder(page));
  assert.match((await count(page)) ?? '', /1 pinned/);

  // Pin delay: a bad value is refused in the menu and nothing is sent; a good one reaches the engine.
  await page.getByRole('button', { name: 'More actions for slot alpha.test' }).click();
  await menuItem(page, 'Pin delay…').click();
  const delayInput = page.getByLabel('Pinned delay for alpha.test, seconds');
  await delayInput.fill('-1');
  await delayInput.press('Enter');
  await waitFor(async () => /Delay: "-1" is not allowed \(a number of seconds >= 0\)/.test((await textOf(page.getByTestId('row-menu-error'))) ?? ''),
    'the inline error', 5000, () => textOf(page.getByTestId('row-menu-error')));
  assert.equal((await snapshotRow(stack.call, id, 'alpha.test'))[20], null, 'nothing pinned after a refused value');
  await delayInput.fill('0.6');
  await delayInput.press('Enter');
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  assert.equal((await snapshotRow(stack.call, id, 'alpha.test'))[20], 0.6);
  await waitFor(async () => (await textOf(slotCell(page, 'alpha.test', 'cause'))) === 'pinned at 0.6 s', 'the cause in words', 5000,
    () => textOf(slotCell(page, 'alpha.test', 'cause')));
  assert.match((await textOf(slotCell(page, 'alpha.test', 'key'))) ?? '', /pinned/);
  // The arrivals after the pin (the first one may have been started before it) are 0.6 s apart.
  const n0 = stack.arrivals('alpha.test').length + 1;
  await waitFor(() => stack.arrivals('alpha.test').length >= n0 + 4, 'alpha.test arrivals after the pin', 15_000);
  const after = stack.arrivals('alpha.test').slice(n0);
  const gaps = after.slice(1).map((e, i) => e.t - after[i].t);
  assert.ok(gaps.every((g) => g >= 580), `arrivals 0.6 s apart after the pin: ${gaps.join(', ')} ms`);

  // Pin concurrency, then clear both pins.
  await page.getByRole('button', { name: 'More actions for slot alpha.test' }).click();
  await menuItem(page, 'Pin concurrency…').click();
  await page.getByLabel('Pinned concurrency for alpha.test').fill('1.5');
  await page.getByLabel('Pinned concurrency for alpha.test').press('Enter');
  await waitFor(async () => /a whole number >= 1/.test((await textOf(page.getByTestId('row-menu-error'))) ?? ''), 'the inline error for 1.5', 5000);
  await page.getByLabel('Pinned concurrency for alpha.test').fill('1');
  await page.getByTestId('row-menu').getByRole('button', { name: 'Pin', exact: true }).click();
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  assert.equal((await snapshotRow(stack.call, id, 'alpha.test'))[21], 1);
  await waitFor(async () => /\/ 1$/.test((await textOf(slotCell(page, 'alpha.test', 'inflight'))) ?? ''), 'concurrency 1 in the row', 5000);
  await page.getByRole('button', { name: 'More actions for slot alpha.test' }).click();
  await menuItem(page, 'Clear pins').click();
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  const cleared = await snapshotRow(stack.call, id, 'alpha.test');
  assert.deepEqual([cleared[20], cleared[21]], [null, null], 'both pins cleared in the engine');

  // Reset backoff on the rate-limited host once it backs off.
  await waitFor(async () => (await numberOf(slotCell(page, 'limited.test', 'backoff'))) > 0 || (await slotRow(page, 'limited.test').getAttribute('data-state')) === 'blocked',
    'limited.test to back off', 20_000);
  await page.getByRole('button', { name: 'More actions for slot limited.test' }).click();
  await menuItem(page, 'Reset backoff').click();
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  const changes = await stack.call<ChangeRecord[]>('log.changes', { id, slot: 'limited.test' });
  assert.ok(changes.some((c) => c.setting === 'backoff_reset' && c.source === 'user'), 'the engine recorded the reset by the user');

  // Open history: the crawl panel's history view when it has one, else a note that it comes later.
  await page.getByRole('button', { name: 'More actions for slot beta.test' }).click();
  await page.keyboard.press('ArrowUp'); // the menu takes arrow keys: up from the first item wraps to the last
  assert.equal(await page.evaluate('document.activeElement && document.activeElement.textContent'), 'Open history');
  await page.keyboard.press('Enter');
  const historyTab = page.getByRole('tab', { name: 'History', exact: true });
  await waitFor(async () => /history view of a slot comes in a later version/.test((await textOf(page.getByTestId('slot-note'))) ?? '') ||
    ((await historyTab.count()) > 0 && (await historyTab.getAttribute('aria-selected')) === 'true'), 'the history view (or the note that it comes later)', 5000);
  if ((await historyTab.count()) > 0 && (await historyTab.getAttribute('aria-selected')) === 'true') {
    t.log('Open history showed the History tab');
    await page.getByRole('tab', { name: 'Slots', exact: true }).click();
    await slotRow(page, 'beta.test').waitFor({ timeout: 5000 });
  }
  // Escape closes a menu and gives the focus back to its button.
  await page.getByRole('button', { name: 'More actions for slot beta.test' }).click();
  await page.keyboard.press('Escape');
  await page.getByTestId('row-menu').waitFor({ state: 'detached', timeout: 5000 });
  assert.equal(await page.evaluate('document.activeElement && document.activeElement.getAttribute("aria-label")'), 'More actions for slot beta.test');

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  assertNoPageErrors(p);
});

test('keyboard: Space pauses and resumes the crawl (not while typing or on a button), / focuses the slot filter', async (t) => {
  const stack = await startStack(t, { hosts: { 'alpha.test': HOSTS['alpha.test'] } }, [{
    name: 'e2e keyboard', settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
  }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await slotRow(page, 'alpha.test').waitFor({ timeout: 10_000 });
  assert.match((await page.getByRole('button', { name: 'Pause', exact: true }).getAttribute('title')) ?? '', /Space/, 'the shortcut is shown on the button');

  // Nothing focused: Space pauses the crawl, and the site stops receiving requests.
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  await page.keyboard.press('Space');
  await waitForText(page.getByTestId('crawl-status'), 'paused', 5000);
  await sleep(300); // a request in flight may still land
  const atPause = stack.arrivals('alpha.test').length;
  await sleep(1200);
  assert.equal(stack.arrivals('alpha.test').length, atPause, 'no request while paused by Space');
  await page.keyboard.press('Space');
  await waitForText(page.getByTestId('crawl-status'), 'running', 5000);
  await waitFor(() => stack.arrivals('alpha.test').length > atPause, 'requests again after Space', 5000);

  // `/` focuses the filter, even from another tab; Space typed there is text, not a command.
  await page.getByRole('tab', { name: 'Settings' }).click();
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  await page.keyboard.press('/');
  await waitFor(async () => (await page.evaluate('document.activeElement && document.activeElement.id')) === 'slot-filter', 'the filter to have the focus', 5000);
  assert.equal(await page.getByLabel('Filter slots by key').inputValue(), '', 'the / itself is not typed');
  await page.keyboard.type('alpha test');
  assert.equal(await page.getByLabel('Filter slots by key').inputValue(), 'alpha test');
  assert.equal(await textOf(page.getByTestId('crawl-status')), 'running', 'Space in the filter did not pause');
  await page.keyboard.press('Escape');
  assert.equal(await page.getByLabel('Filter slots by key').inputValue(), '', 'Escape clears the filter');

  // Space on a focused button presses that button, not the crawl's pause.
  await page.getByRole('tab', { name: 'Warnings' }).focus();
  await page.keyboard.press('Space');
  await waitFor(async () => (await page.getByRole('tab', { name: /Warnings/ }).getAttribute('aria-selected')) === 'true', 'the focused tab to be pressed', 5000);
  await sleep(300);
  assert.equal(await textOf(page.getByTestId('crawl-status')), 'running', 'Space on a button did not pause the crawl');

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  // A stopped crawl ignores Space.
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  await page.keyboard.press('Space');
  await sleep(300);
  assert.equal(await textOf(page.getByTestId('crawl-status')), 'stopped');
  assert.equal(await page.locator('[data-testid="message-line"]').count(), 0, 'no refused command');
  assertNoPageErrors(p);
});

test('duplicate and delete a crawl through the UI, the deletion confirmed by name', async (t) => {
  const stack = await startStack(t, { hosts: { 'alpha.test': HOSTS['alpha.test'] } }, [
    { name: 'e2e original', settings: { DOWNLOAD_DELAY: 0.3 } },
  ]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'e2e original');
  // A settings change before duplicating: the copy takes the latest settings.
  await stack.call('settings.update', { id, changes: { DOWNLOAD_DELAY: 0.7 } });

  await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
  await waitForText(page.getByTestId('crawl-name'), 'e2e original (copy)');
  const list = await stack.call<{ id: number; name: string }[]>('crawls.list', {});
  const copy = list.find((c) => c.name === 'e2e original (copy)');
  assert.ok(copy, 'the copy is in the host\'s list');
  assert.equal((await stack.call<{ DOWNLOAD_DELAY: number }>('settings.get', { id: copy.id })).DOWNLOAD_DELAY, 0.7);
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${copy.id}"]`).waitFor({ timeout: 5000 });

  // Delete: the dialog names the crawl; Cancel keeps it.
  await page.getByRole('button', { name: 'Delete…' }).click();
  const dialog = page.getByTestId('confirm-delete');
  await dialog.waitFor({ timeout: 5000 });
  assert.match((await textOf(dialog)) ?? '', /Delete the crawl “e2e original \(copy\)”\?/);
  assert.match((await textOf(dialog)) ?? '', /cannot be undone/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached', timeout: 5000 });
  assert.ok((await stack.call<{ id: number }[]>('crawls.list', {})).some((c) => c.id === copy.id), 'Cancel deleted nothing');

  // Space while the dialog is open does not start or pause anything; Escape cancels too.
  await page.getByRole('button', { name: 'Delete…' }).click();
  await dialog.waitFor({ timeout: 5000 });
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached', timeout: 5000 });

  await page.getByRole('button', { name: 'Delete…' }).click();
  await dialog.getByRole('button', { name: 'Delete “e2e original (copy)”' }).click();
  await waitFor(async () => (await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${copy.id}"]`).count()) === 0, 'the copy to leave the list', 5000);
  assert.ok(!(await stack.call<{ id: number }[]>('crawls.list', {})).some((c) => c.id === copy.id), 'the host deleted it');
  await waitForText(page.getByTestId('crawl-name'), 'e2e original');

  // A running crawl cannot be deleted: the button says why.
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  const del = page.getByRole('button', { name: 'Delete…' });
  assert.equal(await del.isDisabled(), true);
  assert.match((await del.getAttribute('title')) ?? '', /Stop the crawl before deleting it/);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  assertNoPageErrors(p);
});

await runTests('console-controls.e2e.ts');
