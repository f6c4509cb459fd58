// The slot history view against the real core: a crawl of the test site's rate-limited host (429 +
// Retry-After), then the slot opened from the slot table; the charts' data (not pixels) must put the
// backoff step and the Retry-After blocks where the database and the site's own log say they were.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { LogEntry } from '../../electron/core/testsite';
import type { ChangeRecord } from '../../shared/types';
import {
  assertNoPageErrors, chartData, ensureScreenshotsDir, openPage, runTests, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const HOST = 'limited.history.test';
const HOSTS = {
  [HOST]: { address: '127.0.71.1', pages: 36, latency_ms: 15, rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } },
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.05, AUTOTHROTTLE_TARGET_CONCURRENCY: 1, DOWNLOAD_DELAY: 0,
  RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2, BACKOFF_MIN_DELAY: 0.2, RETRY_TIMES: 5,
  AUTOTHROTTLE_DEBUG: true,
};

test('slot history: backoff step and Retry-After blocks on the charts where the database and the site log put them; table fallback has the same numbers', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{ name: 'e2e history: rate-limited host', settings: SETTINGS }]);
  const [crawlId] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');

  // Open the slot from the slot table's row menu while the crawl runs: the charts follow it live.
  await page.getByRole('button', { name: `More actions for slot ${HOST}` }).click();
  await page.getByRole('menuitem', { name: 'Open history' }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${HOST}"]`).waitFor({ timeout: 15_000 });
  assert.equal(await page.getByRole('tab', { name: 'History' }).getAttribute('aria-selected'), 'true');
  // A crawl that has run for less than five minutes opens on all of it (issue 16), live.
  assert.equal(await page.getByRole('button', { name: 'All', exact: true }).getAttribute('aria-pressed'), 'true', 'a young running crawl opens on all of it');
  const scatterPoints = async () => ((await chartData(page, 'slot-latency'))?.datasets ?? []).slice(0, 6).reduce((a, d) => a + d.points.length, 0);
  await waitFor(async () => (await scatterPoints()) > 0, 'the first response points', 10_000);
  const early = await scatterPoints();
  const earlyMax = (await chartData(page, 'slot-latency'))!.xMax!;
  await waitFor(async () => (await scatterPoints()) >= early + 3, 'new responses to reach the chart while the crawl runs', 15_000, scatterPoints);
  assert.ok((await chartData(page, 'slot-latency'))!.xMax! > earlyMax, 'the time axis moves with the crawl');
  assert.match((await textOf(page.getByTestId('history-status'))) ?? '', /live/);

  // The debug log follows the crawl too: new lines arrive and the view stays on the last one.
  await page.getByRole('tab', { name: 'Log' }).click();
  const list = page.getByTestId('log-list');
  await waitFor(async () => Number(await list.getAttribute('data-lines')) > 0, 'the first log lines', 10_000);
  const firstCount = Number(await list.getAttribute('data-lines'));
  await waitFor(async () => Number(await list.getAttribute('data-lines')) > firstCount, 'new log lines while the crawl runs', 15_000);
  const atBottom = await list.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 21);
  assert.equal(atBottom, true, 'the log view follows the tail');
  assert.match((await textOf(page.getByTestId('log-count'))) ?? '', /live/);

  // So does the crawl overview: its throughput chart grows a bucket at a time.
  await page.getByRole('tab', { name: 'Overview' }).click();
  const buckets = async () => (await chartData(page, 'overview-throughput'))?.datasets[0].points.length ?? 0;
  await waitFor(async () => (await buckets()) > 0, 'the first throughput buckets', 10_000);
  const b0 = await buckets();
  await waitFor(async () => (await buckets()) > b0, 'new throughput buckets while the crawl runs', 10_000, buckets);
  await page.getByRole('tab', { name: 'History' }).click();

  await waitFor(async () => (await textOf(page.getByTestId('crawl-status'))) === 'finished', 'the crawl to finish', 60_000, () => textOf(page.getByTestId('crawl-status')));
  await page.getByRole('button', { name: 'All', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${HOST}"][data-loading="false"]`).waitFor({ timeout: 15_000 });

  // The database's record of the slot's changes: the truth the charts must show.

  const changes = await stack.call<ChangeRecord[]>('log.changes', { id: crawlId, slot: HOST });
  const steps = changes.filter((c) => c.setting === 'backoff_level');
  const blocks = changes.filter((c) => c.setting === 'blocked_until' && typeof c.newValue === 'number');
  assert.ok(steps.length > 0, 'the crawl stepped the backoff at least once');
  assert.ok(blocks.length > 0, 'the crawl was blocked by a Retry-After at least once');

  await waitFor(async () => ((await chartData(page, 'slot-backoff'))?.annotations.length ?? 0) >= steps.length + blocks.length,
    'the marks on the backoff chart', 10_000, async () => (await chartData(page, 'slot-backoff'))?.annotations.length);
  const backoff = (await chartData(page, 'slot-backoff'))!;
  const marks = backoff.annotations;

  // Every backoff step is a mark at its recorded time, saying who changed it.
  for (const s of steps) {
    const up = (s.newValue as number) > (s.oldValue as number);
    const m = marks.find((a) => a.t === s.t && a.kind === (up ? 'backoff' : 'recovery'));
    assert.ok(m, `a ${up ? 'backoff' : 'recovery'} mark at ${s.t} (${JSON.stringify(s)}); marks: ${JSON.stringify(marks.map((a) => [a.t, a.kind]))}`);
    assert.equal(m.source, 'backoff');
    assert.equal(m.title, `Backoff level ${s.oldValue} → ${s.newValue}`);
  }
  // The level line steps at those same instants to the recorded levels.
  const level = backoff.datasets[0].points;
  for (const s of steps) {
    const at = level.find((q) => q.x === s.t);
    if (s.t > (backoff.xMin ?? -Infinity) && s.t < (backoff.xMax ?? Infinity)) assert.equal(at?.y, s.newValue, `the level line at ${s.t}`);
  }
  // Every Retry-After block is a shaded mark from the refusal to the end of the announced wait.
  const raMarks = marks.filter((a) => a.kind === 'retry-after' && a.until !== undefined);
  assert.equal(raMarks.length, blocks.length);
  for (const b of blocks) {
    const m = raMarks.find((a) => a.t === b.t);
    assert.ok(m, `a Retry-After mark at ${b.t}`);
    assert.equal(m.until, b.newValue);
    assert.match(m.detail ?? '', /Retry-After: 1/, 'the mark says why (the header)');
  }

  // The site's own log: each block it announced matches a mark (same order, same length, same moment
  // within the few ms between the site sending the 429 and the engine reading it), and nothing
  // arrived at the site while a marked block was in force.
  const siteBlocks = stack.site.blocks(HOST);
  assert.equal(siteBlocks.length, raMarks.length, 'one mark per block the site announced');
  const offsets = raMarks.map((m, i) => m.t - (stack.siteStartedAt + siteBlocks[i].from));
  for (const [i, m] of raMarks.entries()) {
    const lasts = siteBlocks[i].to - siteBlocks[i].from;
    assert.ok(Math.abs(m.until! - m.t - lasts) < 1, `block ${i} lasts ${m.until! - m.t} ms on the chart, ${lasts} ms as the site announced it`);
    assert.ok(Math.abs(offsets[i]) < 150, `mark ${i} is ${offsets[i].toFixed(1)} ms from the site's refusal`);
  }
  assert.ok(Math.max(...offsets) - Math.min(...offsets) < 40, `marks keep one offset to the site's clock (${offsets.map((o) => o.toFixed(1)).join(', ')})`);
  // With two lanes, the other lane's request may already be on its way when the site refuses one:
  // an arrival inside a block is the engine's fault only when the engine started it after it had
  // read the refusal (the mark's time). Starts come from the database, on the same clock as the marks.
  const db = new Database(stack.dbFile, { readonly: true });
  const starts = db.prepare('SELECT r.url AS url, r.started_at AS startedAt FROM responses r JOIN slots s ON s.id = r.slot_id WHERE r.crawl_id = ? AND s.key = ?')
    .all(crawlId, HOST) as { url: string; startedAt: number }[];
  db.close();
  const arrivals = stack.arrivals(HOST);
  assert.equal(starts.length, arrivals.length, 'one recorded response per arrival at the site');
  const startOf = (e: LogEntry): number => {
    const at = stack.siteStartedAt + e.t;
    const mine = starts.filter((r) => new URL(r.url).pathname === e.path && r.startedAt <= at).map((r) => r.startedAt);
    assert.ok(mine.length > 0, `a recorded start before the arrival of ${e.path} at ${e.t}`);
    return Math.max(...mine);
  };
  for (const [i, m] of raMarks.entries()) {
    const { from, to } = siteBlocks[i];
    const inside = arrivals.filter((e) => e.t > from + 5 && e.t < to - 5);
    const late = inside.filter((e) => startOf(e) >= m.t).map((e) => ({ ...e, startedAfterMarkMs: startOf(e) - m.t }));
    assert.deepEqual(late, [], `no request started after the engine read block ${i} arrived at the site inside it`);
    assert.ok(inside.length <= SETTINGS.CONCURRENT_REQUESTS_PER_DOMAIN - 1, `at most the other lane's request inside block ${i}: ${JSON.stringify(inside)}`);
  }
  // And on the engine's own record: no start while a marked block was in force.
  for (const m of raMarks) assert.deepEqual(starts.filter((r) => r.startedAt >= m.t && r.startedAt < m.until!), [], `no start inside ${m.t}..${m.until}`);

  // The same marks on every chart of the slot, and the latency chart has the delay line and response points.
  const latency = (await chartData(page, 'slot-latency'))!;
  assert.deepEqual(latency.annotations.map((a) => [a.t, a.kind]), marks.map((a) => [a.t, a.kind]));
  const delay = latency.datasets.find((d) => d.label === 'Delay')!;
  assert.ok(delay.points.length > 0, 'the delay line has points');
  const r429 = latency.datasets.find((d) => d.label === '429')!;
  const r2xx = latency.datasets.find((d) => d.label === '2xx')!;
  assert.ok(r2xx.points.length > 0, 'latency points of 2xx responses');
  assert.ok(r429.points.length > 0 || (await page.getByTestId('history-status').textContent())!.includes('averages'), 'latency points of 429s');
  const rate = (await chartData(page, 'slot-rate'))!;
  const total = (label: string) => rate.datasets.find((d) => d.label === label)!.points.reduce((a, q) => a + (q.y ?? 0), 0);
  assert.equal(Math.round(total('429')), siteBlocks.length, 'the responses-per-second chart counts every 429 (1 s buckets)');

  // Table fallback: the same numbers as the chart, and the marks listed with who made them.
  await page.getByTestId('table-toggle-slot-backoff').click();
  const table = page.getByTestId('chart-table-slot-backoff');
  await table.waitFor();
  const rows = (await table.locator('table.chart-table:not(.chart-notes) tbody tr').allTextContents()).length;
  assert.equal(rows, new Set(level.map((q) => q.x)).size, 'one table row per time of the level line');
  const cells = await table.locator('table.chart-table:not(.chart-notes) tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(cells.map(Number), level.map((q) => q.y));
  const noteRows = page.getByTestId('chart-notes-slot-backoff').locator('tbody tr');
  assert.equal(await noteRows.count(), marks.length);
  const firstStep = page.getByTestId('chart-notes-slot-backoff').locator('tbody tr[data-kind="backoff"]').first();
  assert.match((await textOf(firstStep)) ?? '', /Backoff level 0 → 1.*backoff/);
  await page.getByTestId('table-toggle-slot-backoff').click();

  // PNG export: a real PNG image of the chart.
  const [png] = await Promise.all([
    page.waitForEvent('download', { timeout: 10_000 }),
    page.locator('[data-chart="slot-backoff"]').getByRole('button', { name: 'PNG' }).click(),
  ]);
  assert.equal(png.suggestedFilename(), 'slotscope-slot-backoff.png');
  const pngFile = join(t.tmpDir(), 'chart.png');
  await png.saveAs(pngFile);
  const bytes = readFileSync(pngFile);
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  assert.ok(bytes.length > 2000, `a picture, not an empty canvas (${bytes.length} bytes)`);

  // Hovering a Retry-After line shows what and who.
  const box = (await page.locator('[data-chart="slot-backoff"] canvas').boundingBox())!;
  const at = (await page.evaluate(`window.__slotscopeCharts.pixelFor('slot-backoff', ${raMarks[0].t})`)) as { x: number; y: number };
  await page.mouse.move(box.x + at.x, box.y + at.y);
  const pop = page.getByTestId('annotation-popover');
  await pop.waitFor({ timeout: 3000 });
  assert.match((await textOf(pop)) ?? '', /Blocked 1\.0 s \(Retry-After\).*by backoff/s);
  await page.mouse.move(box.x + 2, box.y + 2);

  // Zooming one chart (as the wheel does) moves all four and refetches the range.
  const z0 = blocks[0].t - 1500;
  const z1 = blocks[0].t + 2500;
  assert.equal(await page.evaluate(`window.__slotscopeCharts.zoomTo('slot-latency', ${z0}, ${z1})`), true);
  await waitFor(async () => {
    const b = await chartData(page, 'slot-backoff');
    return b !== null && Math.abs((b.xMin ?? 0) - z0) < 2 && Math.abs((b.xMax ?? 0) - z1) < 2;
  }, 'the other charts to follow the zoom', 5000, async () => { const b = await chartData(page, 'slot-backoff'); return [b?.xMin, b?.xMax, z0, z1]; });
  await page.locator('[data-testid="slot-detail"][data-loading="false"]').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Custom' }).getAttribute('aria-pressed'), 'true');

  const dir = ensureScreenshotsDir();
  await page.getByRole('button', { name: 'Reset zoom' }).click();
  await page.locator('[data-testid="slot-detail"][data-loading="false"]').waitFor();
  // Taller than the console's 1280×800 so the four charts show together, with one mark's popover open.
  await page.setViewportSize({ width: 1280, height: 1480 });
  const hoverMark = async () => {
    const b = (await page.locator('[data-chart="slot-latency"] canvas').boundingBox())!;
    const pt = (await page.evaluate(`window.__slotscopeCharts.pixelFor('slot-latency', ${raMarks[raMarks.length - 1].t})`)) as { x: number; y: number };
    await page.mouse.move(b.x + pt.x + 1, b.y + pt.y - 30);
    await page.getByTestId('annotation-popover').waitFor({ timeout: 3000 });
  };
  await page.waitForTimeout(300);
  await hoverMark();
  await page.screenshot({ path: join(dir, 'history-backoff-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.mouse.move(5, 5);
  await page.waitForTimeout(300);
  await hoverMark();
  await page.screenshot({ path: join(dir, 'history-backoff-dark.png') });
  t.log(`saved ${join(dir, 'history-backoff-light.png')} and history-backoff-dark.png`);
  // The marks survive the scheme change (the charts are rebuilt with the dark colours).
  assert.equal((await chartData(page, 'slot-backoff'))!.annotations.length, marks.length);
  assertNoPageErrors(p);
}, { timeoutMs: 150_000 });

await runTests('history.e2e.ts');
