// The user's slot controls and robots.txt's Crawl-delay as the history charts show them, against the
// real core: the engine records each as a change row (pin_delay, pin_concurrency, paused, backoff_reset,
// crawl_delay), and every one must reach the charts' series and marks, read through the page's chart data.

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { SLOT_COLUMNS, type SlotTuple } from '../../shared/contract';
import type { ChangeRecord } from '../../shared/types';
import { assertNoPageErrors, chartData, ensureScreenshotsDir, openPage, runTests, sleep, startStack, test, textOf, waitFor, waitForText, type ChartData } from './harness';

const FLAKY = 'flaky.controls.test';
const POLITE = 'polite.controls.test';
const HOSTS = {
  // Most answers are 503 with a Retry-After: each one steps the backoff up and blocks the slot for 2 s.
  [FLAKY]: { address: '127.0.73.1', pages: 400, latency_ms: 5, statuses: { '503': 0.8 }, headers: { 'Retry-After': '2' } },
  [POLITE]: { address: '127.0.73.2', pages: 12, latency_ms: 5, robots: { crawl_delay: 0.3 } },
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 3,
  BACKOFF_MIN_DELAY: 0.05, BACKOFF_MAX_DELAY: 3, BACKOFF_JITTER: false, BACKOFF_WINDOW: 600, RETRY_TIMES: 0, ROBOTSTXT_OBEY: true,
};
const col = (name: (typeof SLOT_COLUMNS)[number]) => SLOT_COLUMNS.indexOf(name);

type Points = ChartData['datasets'][number]['points'];
/** A step line's value at `t`: its last point at or before `t`. */
function at(points: Points, t: number): number | null | undefined {
  let v: number | null | undefined;
  for (const q of points) if (q.x <= t) v = q.y;
  return v;
}
const dataset = (c: ChartData, label: string) => {
  const d = c.datasets.find((x) => x.label === label);
  assert.ok(d, `${c.id} has a "${label}" line (it has ${c.datasets.map((x) => x.label).join(', ')})`);
  return d.points;
};

test('history: pinned delay and concurrency, a paused slot, a backoff reset and a Crawl-delay reach the charts and marks', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS, seed: 3 }, []);
  // The flaky host's pages are seeded (a 503 home page links nowhere); the polite host's are followed.
  const seeds = [`${stack.site.origin(POLITE)}/`, ...Array.from({ length: 300 }, (_, i) => `${stack.site.origin(FLAKY)}/page/${i + 1}`)];
  const { crawl: { id } } = await stack.call<{ crawl: { id: number } }>('crawls.create', {
    config: { name: 'e2e history of slot controls', seeds, resolve: stack.site.resolve, settings: SETTINGS },
  });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');

  // A real burst of 503s raises the backoff to level 3 or more; act while a Retry-After block holds the slot.
  const row = async (): Promise<SlotTuple | undefined> => (await stack.call<{ rows: SlotTuple[] }>('slots.snapshot', { id })).rows.find((r) => r[0] === FLAKY);
  await waitFor(async () => {
    const r = await row();
    return r !== undefined && (r[col('backoffLevel')] as number) >= 3 && r[col('state')] === 'blocked';
  }, `${FLAKY} at backoff level 3 and blocked`, 40_000, async () => (await row())?.slice(0, 8));
  const slot = { id, slot: FLAKY };
  await stack.call('slots.pinDelay', { ...slot, seconds: 0.25 });
  await stack.call('slots.pinConcurrency', { ...slot, value: 1 });
  await stack.call('slots.pause', slot);
  await stack.call('slots.resetBackoff', slot);
  const afterReset = await row();
  assert.equal(afterReset?.[col('backoffLevel')], 0, 'the engine reset the level');
  await sleep(1500);
  await stack.call('slots.resume', slot);
  await sleep(800);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);

  // What the engine recorded: the truth the charts must show.
  const changes = await stack.call<ChangeRecord[]>('log.changes', { id, slot: FLAKY });
  const one = (setting: string, pred: (c: ChangeRecord) => boolean = () => true) => {
    const c = changes.find((x) => x.setting === setting && pred(x));
    assert.ok(c, `a ${setting} change was recorded (${JSON.stringify(changes.map((x) => x.setting))})`);
    return c;
  };
  const pinDelay = one('pin_delay');
  const pinConc = one('pin_concurrency');
  const paused = one('paused', (c) => c.newValue === true);
  const resumed = one('paused', (c) => c.newValue === false);
  const reset = one('backoff_reset');
  const before = reset.oldValue as { level: number; blockedUntil: number | null };
  assert.ok(before.level >= 3, `the reset found level ${before.level}`);
  assert.ok(before.blockedUntil !== null && before.blockedUntil > reset.t, 'the reset lifted a Retry-After block');

  // The slot's history: opened from the history tab, the whole (stopped) crawl.
  await page.getByRole('tab', { name: 'History' }).click();
  await page.getByTestId('history-slot-input').fill(FLAKY);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${FLAKY}"][data-loading="false"]`).waitFor({ timeout: 15_000 });
  await waitFor(async () => ((await chartData(page, 'slot-backoff'))?.annotations.length ?? 0) >= 5, 'the marks', 10_000);

  // Backoff level: back to 0 at the reset, and 0 until the next recorded step (after the resume).
  const backoff = (await chartData(page, 'slot-backoff'))!;
  const level = dataset(backoff, 'Backoff level');
  const nextStep = changes.find((c) => c.setting === 'backoff_level' && c.t > reset.t);
  assert.equal(at(level, reset.t - 1), before.level, 'the level line just before the reset');
  assert.equal(at(level, reset.t), 0, 'the level line at the reset');
  assert.equal(at(level, (nextStep?.t ?? backoff.xMax!) - 1), 0, 'the level line stays at 0 until the next step');

  // Concurrency limit: the pin, from the moment it was set.
  const inflight = (await chartData(page, 'slot-inflight'))!;
  const limit = dataset(inflight, 'Concurrency limit');
  assert.equal(at(limit, pinConc.t - 1), SETTINGS.CONCURRENT_REQUESTS_PER_DOMAIN, 'the limit before the pin');
  assert.equal(at(limit, pinConc.t), 1, 'the limit at the pin');
  assert.equal(at(limit, inflight.xMax!), 1, 'the pin holds to the end');

  // Pinned delay: a step line on the delay chart from the pin on.
  const latency = (await chartData(page, 'slot-latency'))!;
  const pinned = dataset(latency, 'Pinned delay');
  assert.equal(at(pinned, pinDelay.t - 1) ?? null, null, 'no pin before');
  assert.equal(at(pinned, pinDelay.t), 0.25, 'the pinned delay at the pin');
  assert.equal(at(pinned, latency.xMax!), 0.25, 'the pinned delay to the end');

  // The marks say what the user did, in words, and the pause is a band from pause to resume.
  const marks = backoff.annotations;
  const mark = (c: ChangeRecord, kind: string) => {
    const m = marks.find((a) => a.t === c.t && a.kind === kind);
    assert.ok(m, `a ${kind} mark at ${c.t} for ${c.setting}; marks: ${JSON.stringify(marks.map((a) => [a.t, a.kind, a.title]))}`);
    assert.equal(m.source, 'user');
    return m;
  };
  assert.equal(mark(pinDelay, 'slot').title, 'Delay pinned to 0.25 s by you');
  assert.equal(mark(pinConc, 'slot').title, 'Concurrency pinned to 1 by you');
  const pauseMark = mark(paused, 'pause');
  assert.equal(pauseMark.title, 'Slot paused by you');
  assert.equal(pauseMark.until, resumed.t, 'the pause band ends at the resume');
  assert.equal(mark(resumed, 'pause').title, 'Slot resumed by you');
  assert.equal(mark(reset, 'recovery').title, `Backoff reset by you: level ${before.level} → 0`);
  // The Retry-After block the reset lifted ends at the reset on the chart.
  const lifted = marks.filter((a) => a.kind === 'retry-after' && a.until !== undefined && a.t <= reset.t && a.t > reset.t - 3000);
  assert.ok(lifted.length > 0, 'the block in force at the reset is marked');
  for (const m of lifted) assert.ok(m.until! <= reset.t, `a block from ${m.t} ends at the reset (${reset.t}), not at ${m.until}`);
  // Every chart of the slot carries the same marks.
  assert.deepEqual(latency.annotations.map((a) => [a.t, a.kind, a.title]), marks.map((a) => [a.t, a.kind, a.title]));

  // Screenshots at 1024 and 1280 px with the pause mark's popover open.
  const dir = ensureScreenshotsDir();
  for (const width of [1024, 1280]) {
    await page.setViewportSize({ width, height: 1480 });
    await page.mouse.move(5, 5);
    await page.waitForTimeout(300);
    const b = (await page.locator('[data-chart="slot-latency"] canvas').boundingBox())!;
    const pt = (await page.evaluate(`window.__slotscopeCharts.pixelFor('slot-latency', ${paused.t})`)) as { x: number; y: number };
    await page.mouse.move(b.x + pt.x + 1, b.y + pt.y - 30);
    await page.getByTestId('annotation-popover').waitFor({ timeout: 3000 });
    await page.screenshot({ path: join(dir, `history-controls-${width}.png`) });
  }
  t.log(`saved history-controls-1024.png and history-controls-1280.png in ${dir}`);
  await page.setViewportSize({ width: 1280, height: 800 });

  // robots.txt's Crawl-delay on the polite host: a step line on its delay chart and concurrency 1.
  const crawlDelay = (await stack.call<ChangeRecord[]>('log.changes', { id, slot: POLITE })).find((c) => c.setting === 'crawl_delay');
  assert.ok(crawlDelay, 'the engine recorded the Crawl-delay');
  await page.getByTestId('history-slot-input').fill(POLITE);
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator(`[data-testid="slot-detail"][data-slot="${POLITE}"][data-loading="false"]`).waitFor({ timeout: 15_000 });
  await waitFor(async () => ((await chartData(page, 'slot-latency'))?.annotations.some((a) => a.kind === 'robots')) ?? false, 'the robots mark', 10_000);
  const polite = (await chartData(page, 'slot-latency'))!;
  assert.equal(at(dataset(polite, 'Crawl-delay'), crawlDelay.t), 0.3, 'the Crawl-delay line');
  assert.equal(at(dataset((await chartData(page, 'slot-inflight'))!, 'Concurrency limit'), crawlDelay.t), 1, 'a Crawl-delay makes the limit 1');
  assert.equal(polite.annotations.find((a) => a.kind === 'robots')?.title, 'Crawl-delay 0.3 s');
  assert.match((await textOf(page.getByTestId('history-status'))) ?? '', /buckets/);

  // The Changes list says the same in words.
  await page.getByRole('tab', { name: 'Settings' }).click();
  const listed = (setting: string) => page.locator(`[data-testid="changes-list"] tr[data-setting="${setting}"]`).first().locator('td[data-col="values"]');
  await listed('backoff_reset').waitFor({ timeout: 5000 });
  assert.match((await textOf(listed('backoff_reset'))) ?? '', new RegExp(`^level ${before.level}, blocked until .+ → level 0$`));
  assert.equal(await textOf(listed('paused')), 'paused → running', 'the newest pause change is the resume');
  assert.equal(await textOf(listed('pin_delay')), 'none → 0.25');
  assertNoPageErrors(p);
}, { timeoutMs: 150_000 });

await runTests('history-controls.e2e.ts');
