// The console in Chromium against the real core: the page loads with the token URL, lists the
// crawl, starts it, shows a live row per host until the crawl finishes, and shows refusals.

import { strict as assert } from 'node:assert';
import {
  assertNoPageErrors, numberOf, openPage, runTests, slotCell, slotOrder, slotRow, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'fast.test': { address: '127.0.30.1', pages: 40, latency_ms: 50 },
  'limited.test': { address: '127.0.30.2', pages: 20, latency_ms: 10, rate_limit: { requests: 4, per_seconds: 1, retry_after: 1 } },
  'plain.test': { address: '127.0.30.3', pages: 20, latency_ms: 20 },
};

test('loads with the token URL, starts the crawl, shows a live row per host until it finishes', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [
    { name: 'e2e console', settings: { DOWNLOAD_DELAY: 0.15, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false } },
  ]);
  assert.match(stack.server.url, /\/\?token=/);
  const p = await openPage(t, stack.server.url);
  const { page } = p;

  await waitForText(page.getByTestId('connection').locator('.badge'), 'Connected');
  const listRow = page.locator(`[data-testid="crawl-list"] tr[data-crawl="${stack.crawlIds[0]}"]`);
  await listRow.waitFor({ timeout: 10_000 });
  assert.equal(await textOf(listRow.locator('td').first()), 'e2e console');
  await waitForText(page.getByTestId('crawl-status'), 'created');
  assert.equal(await textOf(page.getByTestId('crawl-name')), 'e2e console');
  // The token went into a cookie; the address bar no longer shows it.
  assert.ok(!page.url().includes('token='), `the token is still in the address bar: ${page.url()}`);

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  assert.equal(await page.getByRole('button', { name: 'Start', exact: true }).isDisabled(), true);
  assert.equal(await page.getByRole('button', { name: 'Pause', exact: true }).isEnabled(), true);

  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });
  const first = await numberOf(slotCell(page, 'fast.test', 'requests'));
  assert.ok(first >= 1, `fast.test shows ${first} requests`);
  await waitFor(async () => (await numberOf(slotCell(page, 'fast.test', 'requests'))) >= first + 3, 'the request count of fast.test to grow', 10_000);
  // The crawl header follows 'crawl.status'.
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) > 0, 'requests in the crawl header', 5000);

  await waitForText(page.getByTestId('crawl-status'), 'finished', 60_000);
  await waitForText(page.getByTestId('stat-status'), 'finished');
  // The final rows match what the site served, host by host (robots.txt and retries included).
  for (const host of Object.keys(HOSTS)) {
    await waitFor(
      async () => (await numberOf(slotCell(page, host, 'requests'))) === stack.arrivals(host).length,
      `${host}'s row to show the ${stack.arrivals(host).length} requests the site served`,
      5000,
      () => numberOf(slotCell(page, host, 'requests')),
    );
  }
  assert.ok((await numberOf(slotCell(page, 'limited.test', 's429'))) > 0, 'the rate-limited host shows its 429s');
  await waitForText(listRow.locator('.badge'), 'finished');

  // Sorting by a header click: Requests first puts the busiest slot on top, a second click reverses.
  const finalCounts = Object.fromEntries(Object.keys(HOSTS).map((h) => [h, stack.arrivals(h).length]));
  // Ties keep the key order in both directions.
  const busiest = Object.keys(HOSTS).sort((a, b) => finalCounts[b] - finalCounts[a] || a.localeCompare(b))[0];
  const quietest = Object.keys(HOSTS).sort((a, b) => finalCounts[a] - finalCounts[b] || a.localeCompare(b))[0];
  const order = () => slotOrder(page);
  assert.deepEqual(await order(), Object.keys(HOSTS).sort(), 'rows start sorted by slot key');
  await page.locator('[data-testid="slot-table"] button[data-sort="requests"]').click();
  await waitFor(async () => (await order())[0] === busiest, 'the busiest slot on top', 5000, order);
  await page.locator('[data-testid="slot-table"] button[data-sort="requests"]').click();
  await waitFor(async () => (await order())[0] === quietest, 'the quietest slot on top', 5000, order);
  assert.equal(await page.locator('[data-testid="slot-table"] [role="columnheader"][aria-sort]').getAttribute('aria-sort'), 'ascending');
  assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).isDisabled(), true);
  assertNoPageErrors(p);
});

test('a refused command shows the host\'s error in the message line', async (t) => {
  const stack = await startStack(t, { hosts: { 'fast.test': HOSTS['fast.test'] } }, [
    // A module inside the data folder's plugins/ (the only place the app may name) that throws when loaded: Start fails.
    { name: 'broken plug-in', settings: { THROTTLING_MANAGER: 'broken-manager.mjs' } },
  ], { plugins: { 'broken-manager.mjs': "throw new Error('this plug-in is broken');\n" } });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const line = page.getByTestId('message-line');
  await line.waitFor({ timeout: 10_000 });
  const text = (await textOf(line)) ?? '';
  assert.match(text, /Starting “broken plug-in” failed:/);
  assert.match(text, /invalid, field THROTTLING_MANAGER/);
  assert.equal(await textOf(page.getByTestId('crawl-status')), 'created');
  await page.getByRole('button', { name: 'Dismiss message' }).click();
  await waitFor(async () => (await line.count()) === 0, 'the message line to go away', 5000);
  assertNoPageErrors(p);
});

await runTests('console.e2e.ts');
