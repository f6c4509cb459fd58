// The action journal (issue 16): every operator action on a real crawl, the crawl's own start, pause,
// resume and stop included, is recorded, listed in the Journal tab in words ("Delay pinned to 0.30 s
// by you", "Backoff reset by you: level 3 → 0", "Crawl paused by you") and marked on the slot's charts
// (the crawl's pause a band until its resume); no internal name, no JSON, no change that changed nothing.

import { strict as assert } from 'node:assert';
import type { ChangeRecord } from '../../shared/types';
import { join } from 'node:path';
import { assertNoPageErrors, chartData, ensureScreenshotsDir, openPage, runTests, sleep, startStack, test, textOf, waitFor, waitForText } from './harness';

const FLAKY = 'flaky.journal.test';
const CALM = 'calm.journal.test';
const SITE = {
  hosts: {
    [FLAKY]: { address: '127.0.95.51', pages: 400, latency_ms: 5, statuses: { '503': 0.7 }, headers: { 'Retry-After': '1' } },
    [CALM]: { address: '127.0.95.52', pages: 400, latency_ms: 5 },
  },
  seed: 8,
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2,
  BACKOFF_MIN_DELAY: 0.05, BACKOFF_MAX_DELAY: 2, BACKOFF_JITTER: false, BACKOFF_WINDOW: 600, RETRY_TIMES: 0, ROBOTSTXT_OBEY: false,
};

test('journal: every action of yours, the crawl\'s own included, in words in the Journal and marked on the charts', async (t) => {
  const stack = await startStack(t, SITE, []);
  const seeds = [...Array.from({ length: 300 }, (_, i) => `${stack.site.origin(FLAKY)}/page/${i + 1}`), ...Array.from({ length: 300 }, (_, i) => `${stack.site.origin(CALM)}/page/${i + 1}`)];
  const { crawl: { id } } = await stack.call<{ crawl: { id: number } }>('crawls.create', {
    config: { name: 'e2e journal', seeds, resolve: stack.site.resolve, follow: { scope: 'none' }, settings: SETTINGS },
  });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'e2e journal');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  // Backoff climbs on the flaky host; then the operator acts.
  await waitFor(async () => (await stack.call<ChangeRecord[]>('log.changes', { id, slot: FLAKY })).some((c) => c.setting === 'backoff_level' && (c.newValue as number) >= 2),
    'backoff level 2 on the flaky host', 30_000);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused');
  await sleep(400);
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await stack.call('slots.pinDelay', { id, slot: CALM, seconds: 0.3 });
  await stack.call('slots.resetBackoff', { id, slot: FLAKY });
  await stack.call('slots.pause', { id, slot: CALM });
  await stack.call('settings.update', { id, changes: { DOWNLOAD_DELAY: 0.08 } });
  await sleep(300);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: 'Stop “e2e journal”' }).click();
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 20_000);

  const changes = await stack.call<ChangeRecord[]>('log.changes', { id });
  const reset = changes.find((c) => c.setting === 'backoff_reset')!;
  const level = (reset.oldValue as { level: number }).level;
  assert.ok(level >= 1, `the reset cleared a level (${JSON.stringify(reset.oldValue)})`);
  const crawlActions = changes.filter((c) => c.slot === null && ['started', 'paused', 'stopped'].includes(c.setting)).map((c) => [c.setting, c.oldValue, c.newValue]);
  assert.deepEqual(crawlActions, [['started', null, true], ['paused', false, true], ['paused', true, false], ['stopped', null, 'user']], 'the crawl\'s own actions are recorded');

  await page.getByRole('tab', { name: 'Journal' }).click();
  const table = page.getByTestId('journal-table');
  await table.waitFor();
  const titles = await table.locator('.journal-title').allTextContents();
  const want = ['Crawl stopped by you', 'Delay between requests set to 0.08 s by you', 'Slot paused by you', `Backoff reset by you: level ${level} → 0`,
    'Delay pinned to 0.30 s by you', 'Crawl resumed by you', 'Crawl paused by you', 'Crawl started by you'];
  assert.deepEqual(titles, want, 'the journal lists every action of yours, newest first, in words');
  for (const text of await table.locator('tbody tr').allTextContents()) {
    assert.ok(!/[{}"]|\b(pin_delay|backoff_reset|blocked_until|paused|started)\b|→ ?\S+ → /.test(text.replace(/Crawl (paused|started)|Slot paused/g, '')), `plain words: ${text}`);
  }
  // Screenshots of the journal at 1280 and 1024 px, light and dark (.tmp/screenshots, or docs/ with SLOTSCOPE_UPDATE_SCREENSHOTS=1).
  const dir = ensureScreenshotsDir();
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.mouse.move(width - 4, 796);
      await page.waitForTimeout(200);
      await page.screenshot({ path: join(dir, `journal-${width}-${scheme}.png`) });
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  t.log(`saved journal-{1280,1024}-{light,dark}.png in ${dir}`);
  // With what the throttle did too: backoff steps and blocks, and never a change that changed nothing.
  await page.getByTestId('journal-view').getByRole('checkbox').check();
  await waitFor(async () => (await table.locator('tbody tr').count()) > want.length, 'the throttle\'s changes too');
  const all = await table.locator('.journal-title').allTextContents();
  assert.ok(all.some((x) => /^Backoff level \d+ → \d+$/.test(x)), 'backoff steps listed');
  const noops = changes.filter((c) => JSON.stringify(c.oldValue ?? null) === JSON.stringify(c.newValue ?? null) && !['started', 'stopped'].includes(c.setting));
  assert.equal(all.length, Math.min(500, changes.length - noops.length), `every change but the ${noops.length} that changed nothing`);

  // On the charts: the crawl's pause is a band until its resume on every slot; the pin is marked in words.
  await page.locator(`[data-testid="journal-table"] tr[data-slot="${CALM}"] button.link`).first().click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${CALM}"]`).waitFor();
  await page.getByRole('button', { name: 'All', exact: true }).click();
  const paused = changes.find((c) => c.slot === null && c.setting === 'paused' && c.newValue === true)!;
  const resumed = changes.find((c) => c.slot === null && c.setting === 'paused' && c.newValue === false)!;
  await waitFor(async () => ((await chartData(page, 'slot-latency'))?.annotations.some((a) => a.title === 'Crawl paused by you')) ?? false, 'the crawl\'s pause on the chart', 15_000);
  const marks = (await chartData(page, 'slot-latency'))!.annotations;
  const band = marks.find((a) => a.title === 'Crawl paused by you')!;
  assert.equal(band.t, paused.t);
  assert.equal(band.until, resumed.t, 'the band ends at the resume');
  assert.ok(marks.some((a) => a.title === 'Delay pinned to 0.30 s by you' && a.source === 'user'));
  assert.ok(marks.some((a) => a.title === 'Crawl stopped by you'));
  assert.ok(marks.every((a) => !/_/.test(a.title)), `no internal names on the chart: ${marks.map((a) => a.title).join(' | ')}`);
  assert.match((await textOf(page.getByTestId('history-status'))) ?? '', /buckets/);
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

await runTests('journal-actions.e2e.ts');
