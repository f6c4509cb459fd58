// Issue 16, traps: a paused crawl looks paused. Its rows say paused (not waiting with "Next start
// now"), the paused chip counts them, and ELAPSED stops counting until it is resumed.

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, openPage, runTests, sleep, slotCell, slotOrder, slotRow, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOSTS = {
  'one.test': { address: '127.0.94.21', pages: 300, latency_ms: 5 },
  'two.test': { address: '127.0.94.22', pages: 300, latency_ms: 5 },
  'three.test': { address: '127.0.94.23', pages: 300, latency_ms: 5, rate_limit: { requests: 2, per_seconds: 1, status: 429, retry_after: 1 } },
};

const states = (page: Page) => page.locator('[data-testid="slot-table"] [role="row"][data-slot]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));

test('a paused crawl: every row paused, the paused chip counts them, no "now", ELAPSED stops', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{
    name: 'e2e pause me', settings: { DOWNLOAD_DELAY: 0.6, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
  }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  for (const host of Object.keys(HOSTS)) await slotRow(page, host).waitFor({ timeout: 10_000 });
  await sleep(1500);

  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused', 5000);
  await waitFor(async () => (await states(page)).every((s) => s === 'paused'), 'every row to say paused', 5000, () => states(page));
  const chip = page.locator('button[data-state-filter="paused"] .chip-count');
  await waitFor(async () => (await textOf(chip)) === '3', 'the paused chip to count 3', 5000, () => textOf(chip));
  for (const host of Object.keys(HOSTS)) {
    const next = (await textOf(slotCell(page, host, 'next'))) ?? '';
    assert.ok(!/now|\d/.test(next), `${host}: no next start while paused (${JSON.stringify(next)})`);
  }
  assert.equal((await slotOrder(page)).length, 3);

  const elapsed = await textOf(page.getByTestId('stat-elapsed'));
  await sleep(2600);
  assert.equal(await textOf(page.getByTestId('stat-elapsed')), elapsed, 'ELAPSED does not count while paused');

  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running', 5000);
  await waitFor(async () => (await states(page)).some((s) => s !== 'paused'), 'rows to leave paused', 5000, () => states(page));
  await waitFor(async () => (await textOf(page.getByTestId('stat-elapsed'))) !== elapsed, 'ELAPSED to count again', 5000);
  assertNoPageErrors(p);
});

await runTests('traps-paused.e2e.ts');
