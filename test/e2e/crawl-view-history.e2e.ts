// A crawl's history views as users found them (issue 16): a typed From/To applies and an inverted
// range says why; a slot the crawl never had is refused with a message; a crawl that has run for 30 s
// opens on all of it, not on 5 empty minutes; the log's time-range export takes the range chosen
// (not what the panel's height shows) and names it in the file's name; a what-if replay is named in
// words and listed under its crawl.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, chartData, openPage, runTests, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOST = 'steady.ranges.test';
const OTHER = 'other.ranges.test';
const SITE = {
  hosts: {
    [HOST]: { address: '127.0.95.61', pages: 60, latency_ms: 5 },
    [OTHER]: { address: '127.0.95.62', pages: 20, latency_ms: 5 },
  },
  seed: 6,
};
const SETTINGS = { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.1, AUTOTHROTTLE_DEBUG: true, ROBOTSTXT_OBEY: false };

const pad = (n: number) => String(n).padStart(2, '0');
const local = (ms: number) => {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

async function typeRange(page: Page, from: number, to: number): Promise<void> {
  await page.locator('input[aria-label="From"]').fill(local(from));
  await page.locator('input[aria-label="To"]').fill(local(to));
  await page.locator('input[aria-label="To"]').press('Enter');
}

test('history ranges: a typed range applies, an inverted one says why, an unknown slot is refused, a short crawl opens on all of it', async (t) => {
  const stack = await startStack(t, SITE, [{ name: 'e2e ranges', follow: { scope: 'host' }, settings: SETTINGS }]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(async () => (await stack.call<{ responses: number }>('crawls.stats', { id })).responses >= 5, 'a few responses', 20_000);
  // A crawl running for seconds opens on all of it.
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByTestId('history-slot-input').fill(HOST);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${HOST}"]`).waitFor();
  assert.equal(await page.getByRole('button', { name: 'All', exact: true }).getAttribute('aria-pressed'), 'true', 'All, not Last 5 min');
  assert.equal(await page.getByRole('button', { name: 'Last 5 min' }).getAttribute('aria-pressed'), 'false');
  await waitForText(page.getByTestId('crawl-status'), 'finished', 60_000);

  // A typed range applies (Enter, or leaving the field), and the charts show just it.
  const info = await stack.call<{ startedAt: number; finishedAt: number }>('crawls.stats', { id });
  const from = Math.floor(info.startedAt / 1000) * 1000 + 1000;
  const to = from + 3000;
  await page.getByRole('button', { name: 'All', exact: true }).click();
  await page.locator('[data-testid="slot-detail"][data-loading="false"]').waitFor();
  const before = Number(await page.getByTestId('slot-detail').getAttribute('data-generation'));
  await typeRange(page, from, to);
  await waitFor(async () => Number(await page.getByTestId('slot-detail').getAttribute('data-generation')) > before, 'the typed range to load');
  assert.equal(await page.getByRole('button', { name: 'Custom' }).getAttribute('aria-pressed'), 'true');
  await waitFor(async () => { const c = await chartData(page, 'slot-latency'); return c !== null && c.xMin === from; }, 'the chart on the typed range', 10_000,
    async () => { const c = await chartData(page, 'slot-latency'); return [c?.xMin, c?.xMax, from, to]; });
  const chart = (await chartData(page, 'slot-latency'))!;
  assert.ok(chart.xMax !== null && chart.xMax >= to && chart.xMax <= to + 1000, `the chart ends at the typed To (${chart.xMax} vs ${to})`);
  // Leaving a field applies it too.
  const g2 = Number(await page.getByTestId('slot-detail').getAttribute('data-generation'));
  await page.locator('input[aria-label="To"]').fill(local(to + 2000));
  await page.getByTestId('history-status').click();
  await waitFor(async () => Number(await page.getByTestId('slot-detail').getAttribute('data-generation')) > g2, 'the range applied on leaving the field');

  // An inverted range is refused, saying why; the charts keep the range they had.
  const g3 = Number(await page.getByTestId('slot-detail').getAttribute('data-generation'));
  await typeRange(page, to, from);
  await waitFor(async () => /is before From .*: the range would run backwards/.test((await textOf(page.getByTestId('range-error'))) ?? ''), 'the inverted range refused in words');
  assert.equal(Number(await page.getByTestId('slot-detail').getAttribute('data-generation')), g3, 'nothing reloaded');

  // A slot the crawl never had: refused with a message, no empty charts.
  await page.getByTestId('history-slot-input').fill('nope.example');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await waitFor(async () => /This crawl has no slot “nope\.example”: it has 2 slots/.test((await textOf(page.getByTestId('history-unknown'))) ?? ''), 'the unknown slot refused');
  assert.equal(await page.getByTestId('slot-detail').count(), 0);
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

test('log export: the time range chosen, whatever the panel\'s height, named in the file; a what-if named in words and listed under its crawl', async (t) => {
  const stack = await startStack(t, SITE, [{ name: 'e2e log range', follow: { scope: 'host' }, settings: SETTINGS }]);
  const [id] = stack.crawlIds;
  await stack.call('crawls.start', { id });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id })).status === 'finished', 'the crawl to finish', 60_000);
  const info = await stack.call<{ startedAt: number; finishedAt: number }>('crawls.stats', { id });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'finished');
  await page.getByRole('tab', { name: 'Log' }).click();
  await page.getByTestId('log-list').waitFor();
  const from = Math.floor(info.startedAt / 1000) * 1000 + 1000;
  const to = from + 2000;
  await typeRange(page, from, to);
  await page.getByLabel('What to export').selectOption({ label: (await page.getByLabel('What to export').locator('option', { hasText: 'The time range chosen' }).textContent())! });
  const optionText = async () => (await page.getByLabel('What to export').locator('option', { hasText: 'The time range chosen' }).textContent()) ?? '';
  const label = await optionText();
  // A shorter window (the log panel loses height): the range to export stays the range chosen.
  await page.setViewportSize({ width: 1280, height: 620 });
  await page.waitForTimeout(300);
  assert.equal(await optionText(), label, 'the range does not move with the panel\'s height');
  await page.getByLabel('Export format').selectOption('jsonl');
  const download = page.waitForEvent('download');
  await page.getByTestId('export-button').click();
  const d = await download;
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  assert.equal(d.suggestedFilename(), `slotscope-crawl-${id}-${stamp(from)}-${stamp(to)}.jsonl`, 'the file name says the range');
  const rows = readFileSync(await d.path(), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { t: number });
  assert.ok(rows.length > 0 && rows.every((r) => r.t >= from && r.t < to), `${rows.length} rows, all within the range`);

  // A what-if replay: named in words, listed under the crawl it replays.
  await stack.call('history.whatIf', { crawlId: id, settings: { AUTOTHROTTLE_TARGET_CONCURRENCY: 4 } });
  const child = page.locator('[data-testid="crawl-list"] tr.nested-row');
  await child.waitFor();
  assert.equal((await textOf(child.locator('button.link'))), `What if: target 4, from crawl ${id}`);
  const order = await page.locator('[data-testid="crawl-list"] tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-crawl')));
  assert.deepEqual(order, [String(id), await child.getAttribute('data-crawl')], 'the replay right under its crawl');
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

await runTests('crawl-view-history.e2e.ts');
