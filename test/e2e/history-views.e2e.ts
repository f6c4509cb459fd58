// The other history views against the real core, after a crawl of three hosts: the overview's charts
// against the host's own series, compared slots, the debug log's filters and downloads through the
// GUI parsed back, and a what-if replay overlaid on the slot's delays. Screenshots of each view.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { type HistoryPoint, type WhatIfResult } from '../../shared/contract';
import type { EventRecord } from '../../shared/types';
import {
  assertNoPageErrors, chartData, ensureScreenshotsDir, openPage, ROOT, runTests, startStack, test, textOf, waitFor, waitForText, type Stack,
} from './harness';

const HOSTS = {
  'shop.views.test': { address: '127.0.71.10', pages: 40, latency_ms: { base: 40, jitter: 10, per_inflight: 15 } },
  'api.views.test': { address: '127.0.71.11', pages: 25, latency_ms: { base: 90, jitter: 20 }, statuses: { '503': 0.12 } },
  'limited.views.test': { address: '127.0.71.12', pages: 25, latency_ms: 10, rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } },
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.1, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4,
  ROBOTSTXT_OBEY: false, RETRY_TIMES: 3, BACKOFF_MIN_DELAY: 0.2, AUTOTHROTTLE_DEBUG: true,
};

async function crawled(t: Parameters<Parameters<typeof test>[1]>[0], scheme: 'light' | 'dark' = 'light'): Promise<{ stack: Stack; page: Page; p: Awaited<ReturnType<typeof openPage>>; crawlId: number }> {
  const stack = await startStack(t, { hosts: HOSTS, seed: 11 }, [{ name: 'e2e history views: three hosts', settings: SETTINGS }]);
  const [crawlId] = stack.crawlIds;
  const p = await openPage(t, stack.server.url, { colorScheme: scheme });
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitFor(async () => (await textOf(page.getByTestId('crawl-status'))) === 'finished', 'the crawl to finish', 90_000);
  return { stack, page, p, crawlId };
}

/** The buckets the history views ask for (MAX_POINTS in renderer/src/views/history/history-api.ts). */
const VIEW_POINTS = 600;

const near = (a: number | null, b: number | null, eps = 1e-9) => a !== null && b !== null && Math.abs(a - b) <= eps * Math.max(1, Math.abs(b));

test('history overview: throughput equals the host series; busiest slots with sparklines; histograms count every slot', async (t) => {
  const { stack, page, p, crawlId } = await crawled(t);
  await page.getByRole('tab', { name: 'Overview' }).click();
  await page.locator('[data-testid="overview-tab"][data-loading="false"]').waitFor({ timeout: 15_000 });

  const series = await stack.call<HistoryPoint[]>('slots.history', { id: crawlId, maxPoints: VIEW_POINTS });
  await waitFor(async () => ((await chartData(page, 'overview-throughput'))?.datasets[0].points.length ?? 0) === series.length,
    'the throughput chart to hold every bucket', 10_000, async () => (await chartData(page, 'overview-throughput'))?.datasets[0].points.length);
  const chart = (await chartData(page, 'overview-throughput'))!;
  const label = ['2xx', '3xx', '4xx (not 429)', '429', '5xx', 'failed'];
  const pick = (q: HistoryPoint, i: number) => [q.s2xx, q.s3xx, q.s4xx - q.s429, q.s429, q.s5xx, q.failures][i];
  label.forEach((l, i) => {
    const d = chart.datasets.find((x) => x.label === l)!;
    d.points.forEach((pt, j) => {
      assert.equal(pt.x, series[j].t + series[j].span / 2, `${l} bar ${j} in the middle of its bucket`);
      assert.ok(near(pt.y, (pick(series[j], i) * 1000) / series[j].span), `${l} bucket ${j}: ${pt.y} per second`);
    });
  });
  // Every response counted once: rates × span add up to the crawl's responses and failures.
  const total = chart.datasets.reduce((a, d) => a + d.points.reduce((b, pt, j) => b + ((pt.y ?? 0) * series[j].span) / 1000, 0), 0);
  const stats = await stack.call<{ responses: number; failures: number }>('crawls.stats', { id: crawlId });
  assert.equal(Math.round(total), stats.responses + stats.failures);

  // The busiest slots, most requests first, each with a delay sparkline.
  const rows = page.locator('[data-testid="top-slots"] tbody tr');
  await waitFor(async () => (await rows.count()) === 3, 'three slots in the busiest list', 10_000);
  const keys = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-slot')));
  const served = Object.keys(HOSTS).map((h) => [h, stack.arrivals(h).length] as const).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  assert.deepEqual(keys, served.map(([h]) => h));
  await waitFor(async () => (await page.locator('[data-testid="top-slots"] td.spark[data-points="0"]').count()) === 0, 'every sparkline to have points', 10_000);

  // Histograms: every slot counted once, in the bin of its figure.
  for (const id of ['overview-delays', 'overview-latencies']) {
    const h = (await chartData(page, id))!;
    assert.equal(h.datasets[0].points.reduce((a, q) => a + (q.y ?? 0), 0), 3, `${id} counts the three slots`);
  }

  const dir = ensureScreenshotsDir();
  await page.setViewportSize({ width: 1280, height: 1110 });
  await page.mouse.move(5, 5);
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(dir, 'history-overview-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(dir, 'history-overview-dark.png') });

  // Compare: the two busiest slots picked, their delays as the host records them.
  await page.getByRole('tab', { name: 'Compare' }).click();
  await page.locator('[data-testid="compare-tab"][data-loading="false"] .compare-chip').nth(1).waitFor({ timeout: 10_000 });
  await page.getByLabel('Add a slot to compare').fill(served[2][0]);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await waitFor(async () => ((await chartData(page, 'compare-delay'))?.datasets.filter((d) => d.label !== '' && d.points.length > 0).length ?? 0) === 3,
    'three slots on the delay chart', 10_000);
  const cmp = (await chartData(page, 'compare-delay'))!;
  for (const [host] of served) {
    const d = cmp.datasets.find((x) => x.label === host)!;
    const truth = await stack.call<HistoryPoint[]>('slots.history', { id: crawlId, slot: host, from: Math.floor(cmp.xMin!), to: Math.ceil(cmp.xMax!) + 1, maxPoints: VIEW_POINTS });
    assert.deepEqual(d.points.map((q) => [q.x, q.y]), truth.map((q) => [q.t, q.avgDelay]), `${host}'s delays`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(dir, 'history-compare-light.png') });
  t.log(`saved history-overview-light/dark.png and history-compare-light.png in ${dir}`);
  assertNoPageErrors(p);
}, { timeoutMs: 180_000 });

test('history debug log: Scrapy-format lines filtered by slot, kind and text; downloads through the GUI parse back', async (t) => {
  const { stack, page, p, crawlId } = await crawled(t);
  await page.getByRole('tab', { name: 'Log' }).click();
  const list = page.getByTestId('log-list');
  await page.locator('[data-testid="log-view"][data-loading="false"]').waitFor({ timeout: 10_000 });
  const all = await stack.call<EventRecord[]>('log.events', { id: crawlId });
  await waitFor(async () => Number(await list.getAttribute('data-lines')) === all.length, 'every event as a line', 10_000, () => list.getAttribute('data-lines'));
  // Virtualised: far fewer rows in the page than lines.
  const inDom = await list.locator('.log-line').count();
  assert.ok(inDom > 0 && inDom < all.length, `${inDom} rows in the page for ${all.length} lines`);
  // Following the tail: the last line is on screen.
  const lastText = await list.locator('.log-line').last().textContent();
  assert.ok(lastText!.endsWith(all[all.length - 1].text), 'the list shows the tail');
  const debug = list.locator('.log-line[data-kind="debug"]').first();
  assert.match((await debug.textContent())!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[scrapy\.extensions\.throttle\] INFO: slot: \S+ \| conc: *\d+ \| delay: *\d+ ms \([+-]\d+\) \| latency: *\d+ ms \| size: *\d+ bytes$/);

  // Filter by slot (asked of the host), kind and text.
  await page.getByLabel('Filter by slot').fill('api.views.test');
  await waitFor(async () => Number(await list.getAttribute('data-lines')) === all.filter((e) => e.slot === 'api.views.test').length, 'the slot filter', 10_000);
  assert.deepEqual([...new Set(await list.locator('.log-line').evaluateAll((els) => els.map((e) => e.getAttribute('data-slot'))))], ['api.views.test']);
  await page.getByRole('checkbox', { name: 'debug' }).uncheck();
  await page.getByRole('checkbox', { name: 'info' }).uncheck();
  const noisy = all.filter((e) => e.slot === 'api.views.test' && (e.kind === 'warning' || e.kind === 'error'));
  await waitFor(async () => Number(await list.getAttribute('data-lines')) === noisy.length, 'the kind filter', 10_000, () => list.getAttribute('data-lines'));
  await page.getByLabel('Filter by text').fill('503');
  const with503 = noisy.filter((e) => e.text.includes('503'));
  await waitFor(async () => Number(await list.getAttribute('data-lines')) === with503.length, 'the text filter', 10_000, () => list.getAttribute('data-lines'));
  await page.getByLabel('Filter by text').fill('');
  await page.getByRole('checkbox', { name: 'debug' }).check();
  await page.getByRole('checkbox', { name: 'info' }).check();

  const dir = ensureScreenshotsDir();
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(dir, 'history-log-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(dir, 'history-log-dark.png') });
  await page.emulateMedia({ colorScheme: 'light' });

  // Downloads through the GUI (browser mode: the host's /export route), each parsed back.
  const responses = await stack.call<{ responses: number; failures: number; requests: number }>('crawls.stats', { id: crawlId });
  const download = async (format: string, scope: string): Promise<string> => {
    await page.getByLabel('Export format').selectOption(format);
    await page.getByLabel('What to export').selectOption(scope);
    const [d] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.getByTestId('export-button').click()]);
    const file = join(t.tmpDir(), d.suggestedFilename());
    await d.saveAs(file);
    return readFileSync(file, 'utf8');
  };
  const slotRows = await stack.call<HistoryPoint[]>('slots.history', { id: crawlId, slot: 'api.views.test', maxPoints: 100_000 });
  const apiRequests = slotRows.reduce((a, q) => a + q.requests, 0);

  const jsonl = (await download('jsonl', 'slot')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(jsonl.length, apiRequests, 'one JSONL record per recorded request of the slot');
  assert.ok(jsonl.every((r) => r.slot === 'api.views.test'));
  assert.ok(jsonl.some((r) => r.status === 503));

  const csv = (await download('csv', 'crawl')).trim().split(/\r?\n/);
  assert.equal(csv.length - 1, responses.requests, 'one CSV row per recorded request of the crawl');
  assert.match(csv[0], /slot/);

  const har = JSON.parse(await download('har', 'crawl')) as { log: { version: string; entries: { response: { status: number } }[] } };
  assert.equal(har.log.version, '1.2');
  assert.equal(har.log.entries.length, responses.requests, 'one HAR entry per recorded request (failures with status 0)');

  const scrapy = (await download('scrapy-debug', 'crawl')).trim().split('\n');
  assert.ok(scrapy.length > 0);
  for (const line of scrapy) assert.match(line, /\[scrapy\.extensions\.throttle\] INFO: slot: \S+ \| conc:/);

  // A time range chosen above the log (its first half): a download narrowed to it.
  await page.getByLabel('Filter by slot').fill('');
  await list.evaluate((el) => { el.scrollTop = 0; });
  const ts = jsonl.map((r) => r.t as number).sort((x, y) => x - y);
  const pad = (n: number) => String(n).padStart(2, '0');
  const local = (ms: number) => { const d = new Date(ms); return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`; };
  const rangeFrom = Math.floor(ts[0] / 1000) * 1000;
  const rangeTo = Math.max(rangeFrom + 1000, Math.floor((ts[0] + ts[ts.length - 1]) / 2000) * 1000);
  await page.locator('input[aria-label="From"]').fill(local(rangeFrom));
  await page.locator('input[aria-label="To"]').fill(local(rangeTo));
  await page.locator('input[aria-label="To"]').press('Enter');
  await page.waitForTimeout(200);
  const ranged = (await download('jsonl', 'range')).trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { t: number });
  assert.ok(ranged.length < responses.requests, `the range export has ${ranged.length} of ${responses.requests} records`);
  assert.ok(ranged.every((r) => r.t >= rangeFrom && r.t < rangeTo), 'every record within the range chosen');
  assert.match((await textOf(page.getByTestId('export-status'))) ?? '', /Downloading/);
  assertNoPageErrors(p);
}, { timeoutMs: 180_000 });

test('history what-if: a replay with another target concurrency is overlaid on the slot\'s delays', async (t) => {
  const { stack, page, p, crawlId } = await crawled(t);
  const host = 'shop.views.test';
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByTestId('history-slot-input').fill(host);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${host}"][data-loading="false"]`).waitFor({ timeout: 15_000 });
  const field = page.locator('.what-if-field', { hasText: 'AUTOTHROTTLE_TARGET_CONCURRENCY' }).locator('input');
  // A refused value is named and nothing is sent.
  await field.fill('0');
  await waitFor(async () => (await page.locator('.what-if .field-error').count()) > 0, 'the refusal of 0', 5000);
  assert.match((await textOf(page.locator('.what-if .field-error').first()))!, /AUTOTHROTTLE_TARGET_CONCURRENCY: 0 is not allowed/);
  assert.equal(await page.getByRole('button', { name: 'Replay' }).isDisabled(), true);
  await field.fill('8');
  await page.getByRole('button', { name: 'Replay' }).click();
  await waitFor(async () => /Replayed \d+ responses into crawl \d+/.test((await textOf(page.getByTestId('what-if-status'))) ?? ''), 'the replay', 60_000,
    () => textOf(page.getByTestId('what-if-status')));
  const derivedId = Number(/into crawl (\d+)/.exec((await textOf(page.getByTestId('what-if-status')))!)![1]);
  const latency = (await chartData(page, 'slot-latency'))!;
  const overlay = latency.datasets.find((d) => d.label === 'What-if delay')!;
  const truth = await stack.call<HistoryPoint[]>('slots.history', { id: derivedId, slot: host, from: Math.floor(latency.xMin!), to: Math.ceil(latency.xMax!) + 1, maxPoints: VIEW_POINTS });
  assert.ok(overlay.points.length > 0);
  assert.deepEqual(overlay.points.map((q) => [q.x, q.y]), truth.map((q) => [q.t, q.avgDelay]));
  const info = await stack.call<WhatIfResult[] | unknown>('crawls.list', {});
  assert.ok(JSON.stringify(info).includes(`"derivedFrom":${crawlId}`), 'the derived crawl is listed with its origin');

  assertNoPageErrors(p);
}, { timeoutMs: 180_000 });

test('history import: a Scrapy log opened from the crawl list becomes a crawl whose slots chart', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, []);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitFor(async () => (await page.getByRole('button', { name: 'Import Scrapy log…' }).count()) === 1, 'the import button', 10_000);
  const fixture = join(ROOT, 'test', 'fixtures', 'scrapy-logs', 'scrapy-2.8.0-debug.log');
  const slots = [...new Set([...readFileSync(fixture, 'utf8').matchAll(/slot: (\S+) \|/g)].map((m) => m[1]))];
  await page.getByTestId('import-log-file').setInputFiles(fixture);
  const status = page.getByTestId('import-status');
  await status.waitFor({ timeout: 20_000 });
  assert.match((await textOf(status)) ?? '', /^Imported scrapy-2\.8\.0-debug\.log \(Scrapy 2\.8\.0\): 39 responses over 2 slots\.$/);
  const crawls = await stack.call<{ id: number; name: string }[]>('crawls.list', {});
  assert.equal(crawls.length, 1);
  // The imported crawl opens with its slots in the table and the overview, as recorded.
  await page.locator(`[data-testid="crawl-panel"][data-crawl="${crawls[0].id}"]`).waitFor({ timeout: 10_000 });
  for (const slot of slots) await page.locator(`[data-testid="slot-table"] [data-slot="${slot}"]`).waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(ensureScreenshotsDir(), 'import-slots-light.png') });
  await page.getByRole('tab', { name: 'Overview' }).click();
  for (const slot of slots) await page.locator(`[data-testid="top-slots"] [data-slot="${slot}"]`).waitFor({ timeout: 10_000 });
  await page.locator('[data-testid="overview-tab"][data-loading="false"]').waitFor({ timeout: 10_000 });
  await page.getByRole('tab', { name: 'History' }).click();
  for (const slot of slots) {
    await page.getByTestId('history-slot-input').fill(slot);
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await page.locator(`[data-testid="slot-detail"][data-slot="${slot}"][data-loading="false"]`).waitFor({ timeout: 15_000 });
    const latency = (await chartData(page, 'slot-latency'))!;
    const delay = latency.datasets.find((d) => d.label === 'Delay')!;
    assert.ok(delay.points.length > 0, `${slot}: the imported delays are charted`);
  }
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

test('history screenshots: a slot of a longer crawl with backoff, Retry-After blocks and a what-if overlay, light and dark', async (t) => {
  const host = 'news.limited.test';
  const stack = await startStack(t, {
    hosts: {
      [host]: {
        address: '127.0.71.20', pages: 90, page_bytes: 6000, latency_ms: { base: 70, jitter: 40, per_inflight: 25 }, statuses: { '503': 0.04 },
        rate_limit: { requests: 5, per_seconds: 1, status: 429, retry_after: 1 },
      },
    },
    seed: 5,
  }, [{
    name: 'Nightly news refresh', paths: ['/', ...Array.from({ length: 50 }, (_, i) => `/page/${i + 1}`)], follow: { scope: 'none' },
    settings: {
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.3, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4,
      ROBOTSTXT_OBEY: false, RETRY_TIMES: 5, BACKOFF_MIN_DELAY: 0.2, BACKOFF_MAX_DELAY: 1, BACKOFF_WINDOW: 3,
    },
  }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitFor(async () => (await textOf(page.getByTestId('crawl-status'))) === 'finished', 'the crawl to finish', 120_000,
    async () => [await textOf(page.getByTestId('crawl-status')), await textOf(page.getByTestId('stat-requests'))]);
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByTestId('history-slot-input').fill(host);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${host}"][data-loading="false"]`).waitFor({ timeout: 15_000 });
  // What if backoff had been capped lower: the overlay then parts from the real delays.
  await page.locator('.what-if-field', { hasText: 'BACKOFF_MAX_DELAY' }).locator('input').fill('0.4');
  await page.getByRole('button', { name: 'Replay' }).click();
  await waitFor(async () => /Replayed/.test((await textOf(page.getByTestId('what-if-status'))) ?? ''), 'the replay', 60_000);
  const all = (await chartData(page, 'slot-backoff'))!.annotations;
  assert.ok(all.some((a) => a.kind === 'retry-after'), 'the crawl met Retry-After blocks');
  // A backoff step standing alone, so its popover shows one mark.
  const alone = all.filter((a) => a.kind === 'backoff' && all.every((o) => o === a || Math.abs(o.t - a.t) > 800));
  const target = alone[alone.length - 1] ?? all[Math.floor(all.length / 2)];

  const dir = ensureScreenshotsDir();
  await page.setViewportSize({ width: 1280, height: 1480 });
  await page.getByTestId('history-tab').evaluate((el) => { el.scrollTop = 0; });
  const hover = async () => {
    const b = (await page.locator('[data-chart="slot-latency"] canvas').boundingBox())!;
    const pt = (await page.evaluate(`window.__slotscopeCharts.pixelFor('slot-latency', ${target.t})`)) as { x: number; y: number };
    await page.mouse.move(b.x + pt.x + 1, b.y + pt.y - 40);
    await page.getByTestId('annotation-popover').waitFor({ timeout: 3000 });
  };
  await page.waitForTimeout(300);
  await hover();
  await page.screenshot({ path: join(dir, 'history-slot-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.mouse.move(5, 5);
  await page.waitForTimeout(300);
  await hover();
  await page.screenshot({ path: join(dir, 'history-slot-dark.png') });
  t.log(`saved ${join(dir, 'history-slot-light.png')} and history-slot-dark.png`);
  assertNoPageErrors(p);
}, { timeoutMs: 200_000 });

await runTests('history-views.e2e.ts');
