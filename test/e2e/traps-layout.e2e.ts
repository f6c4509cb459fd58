// Issue 16, layout: at 1024 and 1280 px nothing is cut. Header figures wrap instead of ending in
// "stop…", slot columns give way by priority so the row actions stay in view, a long pinned delay
// fits its cells, the crawl list's sticky header never covers the selected crawl, log lines scroll.

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import type { CrawlInfo } from '../../shared/contract';
import { assertNoPageErrors, openPage, runTests, slotRow, startStack, test, waitFor, waitForText } from './harness';

const HOSTS = {
  'a-rather-long-host-name.example-shop.test': { address: '127.0.94.71', pages: 300, latency_ms: 5 },
  'beta.test': { address: '127.0.94.72', pages: 300, latency_ms: 5, rate_limit: { requests: 2, per_seconds: 1, status: 429, retry_after: 1 } },
};
const LONG = 'a-rather-long-host-name.example-shop.test';

/** Elements under `selector` whose text is cut (wider than their box), with their text. */
function cut(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((els) => els.filter((el) => el.scrollWidth > el.clientWidth + 1)
    .map((el) => `${el.getAttribute('data-col') ?? el.getAttribute('data-testid') ?? el.className}: ${JSON.stringify((el.textContent ?? '').trim())} (${el.scrollWidth} > ${el.clientWidth})`));
}

async function checkWidth(page: Page, width: number, stopped: number, running: number): Promise<void> {
  await page.setViewportSize({ width, height: width === 1024 ? 768 : 800 });
  await page.waitForTimeout(300);
  const open = async (id: number) => {
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${id}"] button.link`).click();
    await waitFor(async () => (await page.getByTestId('crawl-panel').getAttribute('data-crawl')) === String(id), `crawl ${id} shown`, 5000);
  };

  // Header figures: every card's value and label whole, for a stopped and a running crawl.
  await open(stopped);
  await waitForText(page.getByTestId('crawl-status'), 'stopped');
  assert.deepEqual(await cut(page, '[data-testid="crawl-stats"] .stat-value, [data-testid="crawl-stats"] .stat-label'), [], `${width} px: no header figure cut (stopped)`);
  await open(running);
  await slotRow(page, LONG).waitFor({ timeout: 10_000 });
  await page.waitForTimeout(1200);
  assert.deepEqual(await cut(page, '[data-testid="crawl-stats"] .stat-value, [data-testid="crawl-stats"] .stat-label'), [], `${width} px: no header figure cut (running)`);
  assert.deepEqual(await cut(page, '.crawl-header .btn'), [], `${width} px: no command cut`);

  // Slot rows: the actions in view without scrolling sideways; no cell cut but the slot key (which says it in its title).
  const grid = page.getByTestId('slot-table');
  const box = (await grid.boundingBox())!;
  for (const name of [`More actions for slot ${LONG}`, `Pause slot ${LONG}`]) {
    const b = (await page.getByRole('button', { name }).boundingBox())!;
    assert.ok(b.x >= box.x && b.x + b.width <= box.x + box.width + 0.5, `${width} px: "${name}" in view (${b.x}+${b.width} within ${box.x}+${box.width})`);
  }
  assert.equal(await grid.evaluate((el) => el.scrollWidth <= el.clientWidth + 1), true, `${width} px: the slot grid needs no sideways scroll`);
  assert.deepEqual(await cut(page, '[data-testid="slot-table"] [role="gridcell"]:not([data-col="key"])'), [], `${width} px: no slot cell cut`);
  assert.deepEqual(await cut(page, '[data-testid="slot-table"] [role="columnheader"] button'), [], `${width} px: no column header cut`);

  // Log lines: a long line can be read whole, by scrolling sideways or wrapped.
  await page.getByRole('tab', { name: 'Log', exact: true }).click();
  await page.locator('[data-testid="log-list"] .log-line').first().waitFor({ timeout: 10_000 });
  // A line is readable when it shows whole, or when the list scrolls sideways as far as it reaches.
  const unreadable = await page.evaluate(`(() => {
    const list = document.querySelector('[data-testid="log-list"]');
    return [...list.querySelectorAll('.log-line')].filter((el) => {
      if (el.scrollWidth > el.clientWidth + 1) return true;
      return el.offsetLeft + el.scrollWidth > list.scrollWidth + 1;
    }).map((el) => el.textContent.slice(0, 60));
  })()`) as string[];
  assert.deepEqual(unreadable, [], `${width} px: every log line can be read whole`);
  await page.getByRole('tab', { name: 'Slots', exact: true }).click();
}

test('at 1024 and 1280 px nothing is cut: header figures, slot columns and actions, long durations, log lines', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [
    { name: 'e2e stopped crawl', settings: { AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0.2 } },
    { name: 'e2e running crawl with a long name, to see that the header keeps its commands in view',
      settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_START_DELAY: 0.3, CONCURRENT_REQUESTS_PER_DOMAIN: 1 } },
  ]);
  const [stopped, running] = stack.crawlIds;
  await stack.call('crawls.start', { id: stopped });
  await new Promise((r) => setTimeout(r, 600));
  await stack.call('crawls.stop', { id: stopped });
  await stack.call('crawls.start', { id: running });
  await waitFor(async () => (await stack.call<{ requests: number }>('crawls.stats', { id: running })).requests >= 3, 'traffic', 10_000);
  // A long pin: a delay of most of a day, as a user might type by mistake and confirm.
  await stack.call('slots.pinDelay', { id: running, slot: LONG, seconds: 80_000 });
  const p = await openPage(t, stack.server.url);
  for (const width of [1024, 1280]) await checkWidth(p.page, width, stopped, running);
  assertNoPageErrors(p);
});

test('the crawl list\'s sticky header never covers the selected crawl', async (t) => {
  const stack = await startStack(t, { hosts: { 'beta.test': HOSTS['beta.test'] } }, Array.from({ length: 24 }, (_, i) => ({ name: `e2e crawl ${i + 1}` })));
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  for (const width of [1024, 1280]) {
    await page.setViewportSize({ width, height: width === 1024 ? 768 : 800 });
    const scroll = page.locator('.crawl-list-scroll');
    await scroll.waitFor();
    const visibleUnderHead = async (id: number) => page.evaluate(`(() => {
      const box = document.querySelector('.crawl-list-scroll').getBoundingClientRect();
      const head = document.querySelector('.crawl-list-scroll thead th').getBoundingClientRect();
      const el = document.querySelector('[data-testid="crawl-list"] tr[data-crawl="${id}"]');
      if (!el) return { ok: false, row: null, head: head.bottom, box: [box.top, box.bottom] };
      const row = el.getBoundingClientRect();
      return { ok: row.top >= head.bottom - 1 && row.bottom <= box.bottom + 1, row: [row.top, row.bottom], head: head.bottom, box: [box.top, box.bottom] };
    })()`) as Promise<{ ok: boolean }>;

    // Duplicate while the list is scrolled down: the copy (newest, on top) is selected and shown whole.
    const list = await stack.call<CrawlInfo[]>('crawls.list', {});
    const bottom = list[list.length - 1];
    await scroll.evaluate((el) => void (el.scrollTop = el.scrollHeight));
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${bottom.id}"] button.link`).click();
    await waitForText(page.getByTestId('crawl-name'), bottom.name);
    await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
    await waitFor(async () => (await stack.call<CrawlInfo[]>('crawls.list', {})).length === list.length + 1, 'the copy', 5000);
    const copy = (await stack.call<CrawlInfo[]>('crawls.list', {}))[0];
    await waitForText(page.getByTestId('crawl-name'), copy.name);
    await waitFor(async () => (await visibleUnderHead(copy.id)).ok, `${width} px: the selected copy shown whole under the sticky header`, 3000,
      () => visibleUnderHead(copy.id));

    // Keyboard: focusing a crawl above the view brings it below the header, not under it.
    await scroll.evaluate((el) => void (el.scrollTop = el.scrollHeight));
    const target = list[Math.floor(list.length / 2)];
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${target.id}"] button.link`).focus();
    await page.keyboard.press('Enter');
    await waitForText(page.getByTestId('crawl-name'), target.name);
    await waitFor(async () => (await visibleUnderHead(target.id)).ok, `${width} px: the focused crawl shown whole under the sticky header`, 3000,
      () => visibleUnderHead(target.id));
    assert.equal(await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${target.id}"]`).getAttribute('aria-selected'), 'true');
  }
  assertNoPageErrors(p);
});

await runTests('traps-layout.e2e.ts');
