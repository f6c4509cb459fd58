// The slot table at scale in Chromium: 10,000 slots fed through the real WebSocket server beside a
// real running crawl; only a window of rows is in the DOM, and sort, filters and pins work on all.

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import type { SlotTuple } from '../../shared/contract';
import { feedKey, feedSlots, type SlotFeed } from './console-feed';
import { assertNoPageErrors, openPage, runTests, slotOrder, slotRow, startStack, test, textOf, waitFor, waitForText } from './harness';

const N = 10_000;
const HOSTS = { 'anchor.test': { address: '127.0.32.1', pages: 50, latency_ms: 5 } };
const grid = (page: Page) => page.getByTestId('slot-table');
const domRows = (page: Page) => page.locator('[data-testid="slot-table"] [role="row"][data-slot]').count();
const count = (page: Page) => textOf(page.getByTestId('slot-count'));

/** Keys in the order the table should show them: by `value` (desc), ties by key. */
function expectedTop(rows: readonly SlotTuple[], value: (r: SlotTuple) => number, direction: 'asc' | 'desc'): string {
  const sorted = [...rows].sort((a, b) => (direction === 'desc' ? value(b) - value(a) : value(a) - value(b)) || (a[0] < b[0] ? -1 : 1));
  return sorted[0][0];
}

test('10,000 slots: only a window of rows in the DOM; sort, text and state filters and pinned rows work on all of them', async (t) => {
  let feed: SlotFeed | null = null;
  const stack = await startStack(t, { hosts: HOSTS }, [{ name: 'e2e 10k slots', settings: { DOWNLOAD_DELAY: 60, RANDOMIZE_DOWNLOAD_DELAY: false } }], {
    dispatcher: (core, [id]) => (feed = feedSlots(core, id, N, { seed: 3 })).dispatcher,
  });
  const f = feed as unknown as SlotFeed;
  const [id] = stack.crawlIds;
  await stack.call('crawls.start', { id });
  const stop = f.run(10);
  t.defer(stop);

  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(async () => (await count(page)) === '10,001 slots', 'the table to count 10,001 slots', 20_000, () => count(page));
  assert.equal(await grid(page).getAttribute('aria-rowcount'), String(N + 2));
  const inDom = await domRows(page);
  t.log(`rows in the DOM: ${inDom} of ${N + 1}`);
  assert.ok(inDom > 5 && inDom <= 60, `only a window of rows is rendered (${inDom})`);
  assert.deepEqual((await slotOrder(page)).slice(0, 3), ['anchor.test', feedKey(0), feedKey(1)], 'key order, naturally sorted');

  // Scroll to the end: the last rows come in, the window stays small, the header stays on top.
  await grid(page).evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await slotRow(page, feedKey(N - 1)).waitFor({ timeout: 5000 });
  assert.equal(await slotRow(page, feedKey(N - 1)).getAttribute('aria-rowindex'), String(N + 2));
  assert.ok((await domRows(page)) <= 60, 'still a window after scrolling');
  const head = await page.locator('[data-testid="slot-table"] [role="row"][aria-rowindex="1"]').boundingBox();
  const gridBox = await grid(page).boundingBox();
  assert.ok(head && gridBox && Math.abs(head.y - gridBox.y) <= 2, 'the header row stays at the top of the scrolled grid');

  // Sort by requests (numbers, largest first), on values held still for the check.
  stop();
  await page.waitForTimeout(300);
  const rows = f.keys.map((k) => f.row(k)!);
  await page.locator('[data-testid="slot-table"] button[data-sort="requests"]').click();
  const busiest = expectedTop(rows, (r) => r[10], 'desc');
  await waitFor(async () => (await slotOrder(page))[0] === busiest, `${busiest} (most requests) on top`, 5000, () => slotOrder(page));
  assert.equal(await grid(page).evaluate((el) => el.scrollTop), 0, 'a new sort shows the top');
  await page.locator('[data-testid="slot-table"] button[data-sort="requests"]').click();
  await waitFor(async () => (await slotOrder(page))[0] === 'anchor.test' || (await slotOrder(page))[0] === expectedTop(rows, (r) => r[10], 'asc'),
    'the fewest requests on top', 5000, () => slotOrder(page));
  // Text sorts as text: by state puts blocked slots first.
  await page.locator('[data-testid="slot-table"] button[data-sort="state"]').click();
  await waitFor(async () => (await page.locator('[data-testid="slot-table"] [role="row"][data-slot]').first().getAttribute('data-state')) === 'blocked',
    'blocked slots first when sorted by state', 5000);

  // Filter by text: a key substring.
  await page.getByLabel('Filter slots by key').fill('h-0999');
  await waitFor(async () => (await count(page)) === '10 of 10,001 slots', '10 matching slots', 5000, () => count(page));
  const matching = await slotOrder(page);
  assert.equal(matching.length, 10);
  assert.ok(matching.every((k) => k?.includes('h-0999')), `every row matches: ${matching.join(', ')}`);
  await page.getByLabel('Filter slots by key').fill('');

  // Filter by state: paused only, then paused or blocked.
  const paused = rows.filter((r) => r[1] === 'paused').length;
  const blocked = rows.filter((r) => r[1] === 'blocked').length;
  await page.locator('button[data-state-filter="paused"]').click();
  await waitFor(async () => (await count(page)) === `${paused} of 10,001 slots`, `${paused} paused slots`, 5000, () => count(page));
  const states = await page.locator('[data-testid="slot-table"] [role="row"][data-slot]').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
  assert.ok(states.length > 0 && states.every((s) => s === 'paused'), `only paused rows: ${states.join(',')}`);
  await page.locator('button[data-state-filter="blocked"]').click();
  await waitFor(async () => (await count(page)) === `${(paused + blocked).toLocaleString('en-US')} of 10,001 slots`, 'paused or blocked', 5000, () => count(page));
  assert.equal(await page.locator('button[data-state-filter="blocked"]').getAttribute('aria-pressed'), 'true');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await waitFor(async () => (await count(page)) === '10,001 slots', 'all slots again', 5000, () => count(page));

  // Pin a row far down the list: it goes on top and stays there whatever the sort, and after a reload.
  const far = feedKey(7777);
  await page.getByLabel('Filter slots by key').fill(far);
  await page.getByRole('button', { name: `Pin slot ${far} to the top` }).click();
  await page.getByLabel('Filter slots by key').fill('');
  await waitFor(async () => (await slotOrder(page))[0] === far, `${far} pinned on top`, 5000, () => slotOrder(page));
  assert.equal(await slotRow(page, far).getAttribute('data-pinned'), 'true');
  await page.locator('[data-testid="slot-table"] button[data-sort="requests"]').click();
  await page.waitForTimeout(200);
  assert.equal((await slotOrder(page))[0], far, 'the pinned row stays on top when sorted by requests');
  await page.locator('[data-testid="slot-table"] button[data-sort="key"]').click();
  await page.locator('[data-testid="slot-table"] button[data-sort="key"]').click();
  await page.waitForTimeout(200);
  assert.equal((await slotOrder(page))[0], far, 'and by key, descending');
  assert.match((await count(page)) ?? '', /1 pinned/);

  await page.reload();
  await waitFor(async () => (await count(page))?.startsWith('10,001 slots') === true, 'the table after a reload', 20_000, () => count(page));
  await waitFor(async () => (await slotOrder(page))[0] === far, 'the pin kept across a reload (localStorage)', 5000, () => slotOrder(page));
  await page.getByRole('button', { name: `Unpin slot ${far} from the top` }).click();
  await waitFor(async () => (await slotOrder(page))[0] !== far, 'unpinned: back in its place', 5000);
  assert.equal(await page.evaluate(`localStorage.getItem('slotscope.pinned-rows.${id}')`), null);
  await stack.call('crawls.stop', { id });
  assertNoPageErrors(p);
}, { timeoutMs: 150_000 });

await runTests('console-scale.e2e.ts');
