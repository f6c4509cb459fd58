// Issue 7's figures, in Chromium through playwright-core against the real core and browser host:
// (a) opening a slot with 1,000,000 recorded responses to its first chart painted, (b) zooming to a
// range to the repaint with the refetched data, (c) frame times of the live charts during a crawl.
//
// Knobs: BENCH_VIEWS_PARTS (`open,zoom,live`), BENCH_VIEWS_SAMPLES (1000000; the database is cached
// under .tmp/bench-history-views/ by schema and generator version), BENCH_VIEWS_RATE (responses/s
// the live crawl should reach, 5000), BENCH_VIEWS_CONCURRENCY (its requests in flight, 8), BENCH_VIEWS_TARGET (`canned` or `site`),
// BENCH_VIEWS_SECONDS (live measurement, 10), SLOTSCOPE_CHROMIUM.

import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createCore, type Core } from '../../electron/core/create-core';
import { SeriesAggregator } from '../../electron/core/store/aggregates';
import { openDatabase } from '../../electron/core/store/database';
import { LATEST_SCHEMA_VERSION } from '../../electron/core/store/migrate';
import { startServer, type RunningServer } from '../../electron/server/ws-server';
import { benchFile, startChild } from './lib/children';
import { detail, figure, fmt, median, percentile, sleep } from './lib/report';
import { mulberry32 as rng } from '../../electron/core/testsite/random';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PARTS = new Set((process.env.BENCH_VIEWS_PARTS ?? 'open,zoom,live').split(',').map((s) => s.trim()));
const SAMPLES = Number(process.env.BENCH_VIEWS_SAMPLES ?? 1_000_000);
const RATE = Number(process.env.BENCH_VIEWS_RATE ?? 5000);
const LIVE_SECONDS = Number(process.env.BENCH_VIEWS_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_VIEWS_CONCURRENCY ?? 8);
const CHROMIUM = process.env.SLOTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const RENDERER_DIR = join(ROOT, 'dist', 'renderer');
const BIG = 'big.bench.test';
const SMALL = 'small.bench.test';
const HOURS = 2;
const CHARTS = ['slot-latency', 'slot-inflight', 'slot-rate', 'slot-backoff'];

/** Bumped when the generated data changes, so an older cached database is not reused. */
const GENERATOR = 1;


/**
 * A finished crawl with one slot of SAMPLES responses over two hours (and a small one), written with
 * the real schema and the store's own aggregator, with a backoff step, a Retry-After block and a
 * recovery every 30 s, a few settings changes and warnings: what the slot view reads.
 */
function database(): { file: string; t0: number } {
  const dir = join(ROOT, '.tmp', 'bench-history-views');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `views-${SAMPLES}-schema${LATEST_SCHEMA_VERSION}-gen${GENERATOR}.sqlite`);
  const t0 = Date.UTC(2026, 10, 22, 8, 0, 0);
  if (existsSync(`${file}.done`)) return { file, t0 };
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { force: true });
  const started = performance.now();
  const db = openDatabase(file);
  db.pragma('synchronous = OFF');
  const end = t0 + HOURS * 3_600_000;
  const settings = { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 8, DOWNLOAD_DELAY: 0 };
  db.prepare(`INSERT INTO crawls (id, name, config_json, settings_json, status, created_at, started_at, finished_at)
    VALUES (1, 'bench: one slot of ${SAMPLES} responses', ?, ?, 'finished', ?, ?, ?)`)
    .run(JSON.stringify({ name: 'bench', seeds: [`https://${BIG}/`] }), JSON.stringify(settings), t0, t0, end);
  const big = Number(db.prepare(`INSERT INTO slots (crawl_id, key) VALUES (1, ?)`).run(BIG).lastInsertRowid);
  const small = Number(db.prepare(`INSERT INTO slots (crawl_id, key) VALUES (1, ?)`).run(SMALL).lastInsertRowid);
  const insert = db.prepare(
    `INSERT INTO responses (id, crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time, bytes, in_flight,
       delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message, depth, content_type)
     VALUES (?, 1, ?, ?, ?, 2, ?, 'GET', ?, ?, 0.002, ?, ?, ?, ?, ?, ?, 1, NULL, NULL, 1, 'text/html')`,
  );
  const change = db.prepare(`INSERT INTO changes (crawl_id, t, slot_id, setting, source, old_json, new_json) VALUES (1, ?, ?, ?, ?, ?, ?)`);
  const event = db.prepare(`INSERT INTO events (crawl_id, t, slot_id, kind, code, text, data_json) VALUES (1, ?, ?, ?, ?, ?, NULL)`);
  const agg = new SeriesAggregator(db);
  const r = rng(7);
  const stats = new Map<number, { n: number; s2: number; s4: number; s5: number; s429: number; lat: number; lastLat: number; lastT: number; lastDelay: number; bytes: number }>();
  const statusCount = new Map<number, number>();
  let id = 0;
  let delay = 0.25;
  let level = 0;
  let blockedUntil = 0;
  const add = (slot: number, t: number, key: string): void => {
    id++;
    const inBurst = blockedUntil > 0 && t - blockedUntil < 2000 && t > blockedUntil - 2500;
    const status = r() < (inBurst ? 0.3 : 0.01) ? 429 : r() < 0.01 ? 503 : 200;
    const lat = 0.04 * Math.exp(0.5 * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r())) * (r() < 0.01 ? 15 : 1);
    const before = delay;
    delay = Math.max(0.05, (delay + lat / 2) / 2) * (1 + level * 0.5);
    const bytes = 800 + Math.floor(r() * 20_000);
    const inFlight = 1 + Math.floor(r() * 6);
    insert.run(id, slot, t, t - lat * 1000 - 2, `https://${key}/p/${id}`, status, lat, bytes, inFlight, before, delay, level > 0 ? 'backoff' : 'autothrottle', level);
    agg.add(1, slot, t, status, lat, false, delay, bytes, inFlight);
    agg.coverUpTo(id);
    const s = stats.get(slot) ?? { n: 0, s2: 0, s4: 0, s5: 0, s429: 0, lat: 0, lastLat: 0, lastT: 0, lastDelay: 0, bytes: 0 };
    s.n++;
    if (status === 200) s.s2++;
    else if (status < 500) s.s4++;
    else s.s5++;
    if (status === 429) s.s429++;
    s.lat += lat;
    s.lastLat = lat;
    s.lastT = t;
    s.lastDelay = delay;
    s.bytes += bytes;
    stats.set(slot, s);
    statusCount.set(status, (statusCount.get(status) ?? 0) + 1);
  };
  db.exec('BEGIN');
  const step = (HOURS * 3_600_000) / SAMPLES;
  let nextMark = t0 + 30_000;
  for (let i = 0; i < SAMPLES; i++) {
    const t = t0 + i * step + r() * step;
    if (t >= nextMark) {
      // Every 30 s: a backoff step with a 2 s Retry-After block, recovered 10 s later.
      change.run(nextMark, big, 'backoff_level', 'backoff', String(level), String(level + 1));
      event.run(nextMark + 0.4, big, 'info', 'backoff-step', `backing off ${BIG}: level ${level + 1}, after 429`);
      level++;
      blockedUntil = nextMark + 2000;
      change.run(nextMark, big, 'blocked_until', 'backoff', 'null', String(blockedUntil));
      event.run(nextMark + 0.5, big, 'info', 'retry-after', `${BIG} blocked for 2.0 s (Retry-After: 2)`);
      change.run(nextMark + 10_000, big, 'backoff_level', 'backoff', String(level), String(level - 1));
      level--;
      if (Math.floor((nextMark - t0) / 30_000) % 40 === 0) {
        event.run(nextMark + 1, null, 'warning', 'slow-host', `${BIG} answers slowly: consider a lower AUTOTHROTTLE_TARGET_CONCURRENCY`);
        change.run(nextMark + 5, null, 'AUTOTHROTTLE_TARGET_CONCURRENCY', 'user', '2', '2');
      }
      nextMark += 30_000;
    }
    add(big, t, BIG);
    if (i % 100 === 0) add(small, t + 1, SMALL);
    if (id % 200_000 < 101) {
      agg.write();
      db.exec('COMMIT');
      db.exec('BEGIN');
    }
  }
  agg.write();
  const putStats = db.prepare(`INSERT INTO slot_stats (crawl_id, slot_id, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
    latency_sum, latency_n, last_latency, last_latency_t, last_delay, last_t, bytes) VALUES (1, ?, ?, ?, ?, 0, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`);
  for (const [slot, s] of stats) putStats.run(slot, s.n, s.n, s.s2, s.s4, s.s5, s.s429, s.lat, s.n, s.lastLat, s.lastT, s.lastDelay, s.lastT, s.bytes);
  const putStatus = db.prepare(`INSERT INTO status_counts (crawl_id, status, n) VALUES (1, ?, ?)`);
  for (const [code, k] of statusCount) putStatus.run(code, k);
  db.exec('COMMIT');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  db.close();
  writeFileSync(`${file}.done`, `${id} responses\n`);
  detail(`generated ${fmt(id)} responses in ${fmt((performance.now() - started) / 1000)} s (${fmt(statSync(file).size / 1e6)} MB), cached as ${file}`);
  return { file, t0 };
}

interface Stack {
  readonly core: Core;
  readonly server: RunningServer;
  readonly browser: Browser;
  readonly page: Page;
  readonly errors: string[];
}

async function open(db: string): Promise<Stack> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);
  if (!existsSync(join(RENDERER_DIR, 'index.html'))) throw new Error(`${RENDERER_DIR}/index.html is missing: run \`node renderer/build.mjs\``);
  const core = await createCore({ db });
  const server = await startServer({ dispatcher: core, staticDir: RENDERER_DIR, log: () => {} });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1400 } })).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  return { core, server, browser, page, errors };
}

async function close(s: Stack): Promise<void> {
  await s.browser.close();
  await s.server.close();
  await s.core.close();
}

/** In the page: t0, click, then the first paint with data of each chart (ms after t0). */
const TIME_OPEN = `(async ({ selector, charts }) => {
  const before = new Map(charts.map((id) => [id, window.__slotscopeCharts?.get(id)?.firstDataDrawAt ?? null]));
  const t0 = performance.now();
  document.querySelector(selector).click();
  const deadline = t0 + 30000;
  const seen = {};
  while (performance.now() < deadline) {
    await new Promise((r) => requestAnimationFrame(() => r()));
    for (const id of charts) {
      const s = window.__slotscopeCharts?.get(id);
      if (s && s.firstDataDrawAt !== null && s.firstDataDrawAt > t0 && s.firstDataDrawAt !== before.get(id)) seen[id] = s.firstDataDrawAt - t0;
    }
    if (Object.keys(seen).length === charts.length) break;
  }
  return seen;
})`;

/** In the page: zoom `id` to [min, max] as the wheel does; ms to the plugin's own repaint and to the repaint with the refetched data. */
const TIME_ZOOM = `(async ({ min, max, charts }) => {
  const el = document.querySelector('[data-testid="slot-detail"]');
  const g0 = Number(el.dataset.generation);
  const w0 = window.__slotscopeCharts.work();
  const t0 = performance.now();
  window.__slotscopeCharts.zoomTo(charts[0], min, max);
  const immediate = (window.__slotscopeCharts.get(charts[0]).lastDrawAt ?? t0) - t0;
  const deadline = t0 + 30000;
  while (Number(el.dataset.generation) === g0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  const arrived = performance.now() - t0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  const painted = Math.max(...charts.map((id) => window.__slotscopeCharts.get(id).lastDrawAt)) - t0;
  while (el.dataset.loading !== 'false' && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
  const scatter = window.__slotscopeCharts.get(charts[0]).lastDrawAt - t0;
  const points = charts.map((id) => window.__slotscopeCharts.get(id).points);
  const w1 = window.__slotscopeCharts.work();
  return { immediate, arrived, painted, scatter, points, updates: w1.updates - w0.updates, updateMs: w1.ms - w0.ms };
})`;

/** In the page: frame intervals (rAF deltas) and the busy part of each frame (rAF start to the task after it). */
const MEASURE_FRAMES = `(ms) => new Promise((resolve) => {
  const deltas = []; const busy = []; let last = 0; let end = 0;
  const ch = new MessageChannel(); let frameStart = 0;
  ch.port1.onmessage = () => busy.push(performance.now() - frameStart);
  const frame = (t) => {
    if (last) deltas.push(t - last);
    last = t; frameStart = t;
    ch.port2.postMessage(0);
    if (t < end) requestAnimationFrame(frame);
    else resolve({ deltas, busy });
  };
  requestAnimationFrame((t) => { end = t + ms; requestAnimationFrame(frame); });
})`;

async function openHistoryTab(page: Page, crawlId: number): Promise<void> {
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${crawlId}"] button.link`).click();
  await page.getByRole('tab', { name: 'History' }).click();
}

async function pickSlot(page: Page, slot: string): Promise<void> {
  await page.getByTestId('history-slot-input').fill(slot);
}

async function partOpenAndZoom(): Promise<void> {
  const { file, t0 } = database();
  const s = await open(file);
  try {
    const { page } = s;
    await page.locator('[data-testid="crawl-list"] tr[data-crawl="1"]').waitFor({ timeout: 20_000 });
    await openHistoryTab(page, 1);
    // Warm the page's code paths on the small slot, then open the big one, alternating.
    const opens: Record<string, number>[] = [];
    for (let i = 0; i < 6; i++) {
      await pickSlot(page, SMALL);
      await page.evaluate(`(${TIME_OPEN})(${JSON.stringify({ selector: '.history-pick button[type="submit"]', charts: CHARTS })})`);
      await page.locator('[data-testid="slot-detail"][data-loading="false"]').waitFor();
      await pickSlot(page, BIG);
      const r = (await page.evaluate(`(${TIME_OPEN})(${JSON.stringify({ selector: '.history-pick button[type="submit"]', charts: CHARTS })})`)) as Record<string, number>;
      opens.push(r);
      await page.locator(`[data-testid="slot-detail"][data-slot="${BIG}"][data-loading="false"]`).waitFor();
    }
    const first = opens.map((o) => o['slot-latency']);
    const all = opens.map((o) => Math.max(...CHARTS.map((c) => o[c] ?? Infinity)));
    const status = await page.getByTestId('history-status').textContent();
    if (PARTS.has('open')) {
      figure(`history views (a): open a slot of ${fmt(SAMPLES)} responses to its first chart painted`,
        `${fmt(median(first))} ms median of ${first.length} opens (first open ${fmt(first[0])} ms, worst ${fmt(Math.max(...first))} ms)`,
        Math.max(...first), 500, { atMost: true, unit: ' ms' });
      detail(`all four charts painted: median ${fmt(median(all))} ms, worst ${fmt(Math.max(...all))} ms; range "All" (${HOURS} h); ${status}`);
    }
    if (PARTS.has('zoom')) {
      const r = rng(3);
      const spans = [3_600_000, 600_000, 60_000, 10_000, 1_800_000, 120_000, 5_000, 300_000];
      const results: { span: number; immediate: number; arrived: number; painted: number; scatter: number; points: number[]; host: number[]; updates: number; updateMs: number }[] = [];
      for (const span of spans) {
        const from = t0 + r() * (HOURS * 3_600_000 - span);
        const z = (await page.evaluate(`(${TIME_ZOOM})(${JSON.stringify({ min: from, max: from + span, charts: CHARTS })})`)) as Omit<(typeof results)[number], 'span' | 'host'>;
        // The same two queries asked of the core directly (no browser), to tell the host's share from the page's.
        const q = { from: Math.floor(from), to: Math.ceil(from + span) + 1, maxPoints: 600 };
        let h = performance.now();
        await s.core.dispatch('slots.history', { id: 1, slot: BIG, ...q });
        const historyMs = performance.now() - h;
        h = performance.now();
        await s.core.dispatch('slots.responses', { crawlId: 1, slot: BIG, ...q, maxPoints: 1200 });
        results.push({ span, ...z, host: [historyMs, performance.now() - h] });
        await page.locator('[data-testid="slot-detail"][data-loading="false"]').waitFor();
        await sleep(150);
      }
      const painted = results.map((x) => x.painted);
      figure('history views (b): zoom to a range to the repaint with the refetched data (worst)',
        `${fmt(Math.max(...painted))} ms over ${results.length} zooms (median ${fmt(median(painted))} ms)`, Math.max(...painted), 150, { atMost: true, unit: ' ms' });
      const scatter = results.map((x) => x.scatter);
      figure('history views (b\'): zoom to a range to the latency scatter repainted with its response points (worst)',
        `${fmt(Math.max(...scatter))} ms (median ${fmt(median(scatter))} ms)`, Math.max(...scatter), 150, { atMost: true, unit: ' ms' });
      for (const z of results) {
        detail(`zoom to ${fmt(z.span / 1000)} s: plugin repaint ${fmt(z.immediate, 1)} ms, buckets back ${fmt(z.arrived)} ms, charts repainted ${fmt(z.painted)} ms, ` +
          `response points repainted ${fmt(z.scatter)} ms; points per chart ${z.points.join(' / ')} (${z.updates} chart updates, ${fmt(z.updateMs)} ms in all); ` +
          `the core alone: slots.history ${fmt(z.host[0], 1)} ms, slots.responses ${fmt(z.host[1], 1)} ms`);
      }
    }
    if (s.errors.length) detail(`page errors: ${s.errors.join('; ')}`);
  } finally {
    await close(s);
  }
}

async function partLive(): Promise<void> {
  const dir = join(ROOT, '.tmp', 'bench-history-views-live');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // The target in its own process: by default the 1 KB keep-alive responder, crawled flat out (one slot,
  // CONCURRENCY in flight, no delay: the rate is what the engine reaches, to be >= RATE); with
  // BENCH_VIEWS_TARGET=site the project's test site, answering in CONCURRENCY / RATE s per page.
  const target = process.env.BENCH_VIEWS_TARGET === 'site' ? 'site' : 'canned';
  const latencyMs = (1000 * CONCURRENCY) / RATE;
  let host: string;
  let origin: string;
  let resolve: Record<string, string> = {};
  let server: Awaited<ReturnType<typeof startChild>>;
  if (target === 'site') {
    host = 'live.bench.test';
    const scenarioFile = join(dir, 'scenario.json');
    writeFileSync(scenarioFile, JSON.stringify({ hosts: { [host]: { address: '127.0.72.1', pages: 1_000_000, latency_ms: { base: latencyMs, jitter: latencyMs / 4 }, statuses: { '404': 0.01 } } } }));
    server = await startChild(benchFile('./lib/testsite.child.mjs'), [scenarioFile, join(dir, 'site-log.jsonl')]);
    origin = `http://${host}:${(server.ready.ports as Record<string, number>)[host]}`;
    resolve = server.ready.resolve as Record<string, string>;
  } else {
    host = '127.0.72.1';
    server = await startChild(benchFile('./lib/canned-server.child.mjs'), ['--address', host]);
    origin = `http://${host}:${server.ready.port as number}`;
  }
  const s = await open(join(dir, 'live.sqlite'));
  try {
    const n = Math.ceil(3 * RATE * (LIVE_SECONDS + 20));
    const seedsText = Array.from({ length: n }, (_, i) => `${origin}/page/${i + 1}`).join('\n');
    const created = await s.core.dispatch('crawls.create', {
      config: {
        name: `bench: live at ${RATE}/s`, seeds: [], follow: { scope: 'none' }, resolve,
        settings: { DOWNLOAD_DELAY: 0, CONCURRENT_REQUESTS: 64, CONCURRENT_REQUESTS_PER_DOMAIN: CONCURRENCY, AUTOTHROTTLE_ENABLED: false, ROBOTSTXT_OBEY: false },
      },
      seedsText,
    });
    if (!created.ok) throw new Error(`crawls.create refused: ${created.error.message}`);
    const crawlId = (created.result as { crawl: { id: number } }).crawl.id;
    const { page } = s;
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${crawlId}"]`).waitFor({ timeout: 20_000 });
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${crawlId}"] button.link`).click();
    const started = await s.core.dispatch('crawls.start', { id: crawlId });
    if (!started.ok) throw new Error(`crawls.start refused: ${started.error.message}`);
    await page.getByRole('tab', { name: 'History' }).click();
    await pickSlot(page, host);
    await page.locator('.history-pick button[type="submit"]').click();
    await page.locator(`[data-testid="slot-detail"][data-slot="${host}"]`).waitFor();
    await sleep(3000);
    const statsBefore = await s.core.dispatch('crawls.stats', { id: crawlId });
    const t = performance.now();
    const work0 = (await page.evaluate('window.__slotscopeCharts.work()')) as { updates: number; ms: number };
    const frames = (await page.evaluate(`(${MEASURE_FRAMES})(${LIVE_SECONDS * 1000})`)) as { deltas: number[]; busy: number[] };
    const work1 = (await page.evaluate('window.__slotscopeCharts.work()')) as { updates: number; ms: number };
    const seconds = (performance.now() - t) / 1000;
    const statsAfter = await s.core.dispatch('crawls.stats', { id: crawlId });
    const responses = (x: typeof statsAfter) => (x.ok ? (x.result as { responses: number }).responses : NaN);
    const rate = (responses(statsAfter) - responses(statsBefore)) / seconds;
    const snap = (await page.evaluate(`window.__slotscopeCharts.get('slot-latency')`)) as { draws: number; points: number };
    const p95 = percentile(frames.busy, 95);
    figure(`history views (c): live charts at ${fmt(rate)} responses/s, p95 frame time`,
      `${fmt(p95, 1)} ms busy per frame (rAF start to the task after the frame), over ${fmt(frames.busy.length)} frames in ${fmt(seconds, 1)} s`,
      p95, 16, { atMost: true, unit: ' ms' });
    detail(`frame intervals (rAF deltas): p50 ${fmt(percentile(frames.deltas, 50), 1)} ms, p95 ${fmt(percentile(frames.deltas, 95), 1)} ms, ` +
      `max ${fmt(Math.max(...frames.deltas), 1)} ms, ${fmt(frames.deltas.filter((d) => d > 17.5).length)} over 17.5 ms; busy max ${fmt(Math.max(...frames.busy), 1)} ms`);
    detail(`one slot, ${CONCURRENCY} in flight without delay, against ${target === 'site' ? `the test site in its own process answering in ${fmt(latencyMs, 1)} ms` : 'a 1 KB keep-alive responder in its own process'}: ` +
      `${fmt(rate)} responses/s over the window (target rate ${fmt(RATE)}/s); latency chart holds ${fmt(snap.points)} points, drawn ${fmt(snap.draws)} times`);
    detail(`chart updates in the window: ${fmt(work1.updates - work0.updates)} taking ${fmt(work1.ms - work0.ms)} ms in all ` +
      `(${fmt((work1.ms - work0.ms) / Math.max(1, work1.updates - work0.updates), 1)} ms each, ${fmt(((work1.ms - work0.ms) / (seconds * 1000)) * 100, 1)} % of the time)`);
    if (rate < RATE) detail(`the engine did not reach ${fmt(RATE)}/s on this machine beside Chromium (${fmt(rate)}/s): the frame figure is for that rate`);
    // The same crawl with no chart on screen (the Settings tab): what the page costs without the charts.
    await page.getByRole('tab', { name: 'Settings' }).click();
    await sleep(1000);
    const bare = (await page.evaluate(`(${MEASURE_FRAMES})(${Math.min(5, LIVE_SECONDS) * 1000})`)) as { deltas: number[]; busy: number[] };
    detail(`the same crawl with no chart on screen (Settings tab): busy p95 ${fmt(percentile(bare.busy, 95), 1)} ms, ` +
      `rAF delta p95 ${fmt(percentile(bare.deltas, 95), 1)} ms over ${fmt(bare.busy.length)} frames`);
    await s.core.dispatch('crawls.stop', { id: crawlId });
    if (s.errors.length) detail(`page errors: ${s.errors.join('; ')}`);
  } finally {
    await close(s);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (PARTS.has('open') || PARTS.has('zoom')) await partOpenAndZoom();
if (PARTS.has('live')) await partLive();
