// Issue 16's figures for the Requests tab, in Chromium over a bare DevTools connection (lib/bare-page.ts)
// against the real core and browser host, on a finished crawl of 1,000,000 responses written through
// the history writer: (a) opening the tab to its first rows painted, (b) a filter change (status class,
// order) to the repainted rows, (c) frames while the grid scrolls at 60 Hz, steadily and in a fling.
//
// Knobs: BENCH_REQUESTS_ROWS (1000000; the database is cached under .tmp/bench-requests/ by size,
// schema and generator version), BENCH_REQUESTS_OPENS (times the tab is opened, 8), BENCH_REQUESTS_SECONDS
// (each scroll measurement, 8), BENCH_REQUESTS_PROFILE=FILE.cpuprofile (the page's CPU profile while it
// scrolls), BENCH_REQUESTS_TRACE=FILE.json (a Chromium trace of the scrolls), SLOTSCOPE_CHROMIUM.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RequestPage } from '../../shared/contract';
import { createCore } from '../../electron/core/create-core';
import { startServer } from '../../electron/server/ws-server';
import { BareBrowser, type BarePage } from './lib/bare-page';
import { requestCrawl } from './lib/request-crawl';
import { detail, figure, fmt, median, percentile, sleep } from './lib/report';

const ROWS = Number(process.env.BENCH_REQUESTS_ROWS ?? 1_000_000);
const OPENS = Number(process.env.BENCH_REQUESTS_OPENS ?? 8);
const SECONDS = Number(process.env.BENCH_REQUESTS_SECONDS ?? 8);
const ROOT = process.cwd();
const RENDERER_DIR = join(ROOT, 'dist', 'renderer');
const CHROMIUM = process.env.SLOTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** A rAF interval up to this long is one 60 Hz vsync period (16.7 ms) plus timestamp jitter: the frame was on time. */
const ON_TIME_MS = 17.5;

/**
 * In the page: `__armPaint(selector)` remembers the timeStamp of the next click on an element matching
 * `selector`; `__painted(cond)` resolves, once `cond()` holds at the start of a frame, with the time from
 * that click to a task right after the frame (the frame that painted it).
 */
const PAGE_HELPERS = `(() => {
  let armed = null; let t0 = null;
  window.__armPaint = (selector) => { armed = selector; t0 = null; };
  document.addEventListener('click', (e) => {
    if (armed && e.target instanceof Element && e.target.closest(armed)) { t0 = e.timeStamp; armed = null; }
  }, true);
  window.__painted = (src, timeoutMs) => new Promise((resolve) => {
    const cond = new Function('return (' + src + ')()');
    const started = performance.now();
    const tick = () => {
      if (t0 !== null && cond()) { requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0)); return; }
      if (performance.now() - started > timeoutMs) { resolve(-1); return; }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  /** rAF deltas for ms while scrolling the grid by step px a frame, wrapping to the top at the end; rows blank (not loaded) per frame. */
  window.__scroll = (ms, step) => new Promise((resolve) => {
    const el = document.querySelector('[data-testid="requests-grid"]');
    const deltas = []; const blank = []; const longs = [];
    const po = new PerformanceObserver((l) => { for (const e of l.getEntries()) longs.push(e.duration); });
    po.observe({ type: 'longtask' });
    let last = 0; let end = 0; let moved = 0;
    const frame = (t) => {
      if (last) deltas.push(t - last);
      last = t;
      blank.push(el.querySelectorAll('.req-placeholder').length);
      const before = el.scrollTop;
      el.scrollTop = before + step;
      moved += el.scrollTop - before;
      if (t < end) requestAnimationFrame(frame);
      else { po.disconnect(); resolve({ deltas, blank, longs, moved, top: el.scrollTop }); }
    };
    requestAnimationFrame((t) => { end = t + ms; requestAnimationFrame(frame); });
  });
})()`;

const ROW_SEL = '[data-testid="requests-grid"] [data-row-id]';

async function until(page: BarePage, src: string, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(`(${src})()`))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const started = performance.now();
const crawl = await requestCrawl(join(ROOT, '.tmp', 'bench-requests'), ROWS);
detail(crawl.writeSeconds === null
  ? `database: ${fmt(crawl.rows)} responses over ${fmt(crawl.slots)} slots, cached (${crawl.file})`
  : `database: ${fmt(crawl.rows)} responses over ${fmt(crawl.slots)} slots written through the history writer in ${fmt(crawl.writeSeconds, 1)} s ` +
    `(${fmt(crawl.rows / crawl.writeSeconds)} rows/s, aggregates and indexes included), cached as ${crawl.file}`);

const core = await createCore({ db: crawl.file });
const server = await startServer({ dispatcher: core, staticDir: RENDERER_DIR, log: () => {} });
const browser = await BareBrowser.launch(CHROMIUM, CHROMIUM_ARGS);
try {
  detail(`${browser.version} headless at 1280×800, driven over a bare DevTools connection (no Network domain)`);
  const page = await browser.newPage({ width: 1280, height: 800, colorScheme: 'light', initScript: PAGE_HELPERS, onError: (m) => console.log(`    page error: ${m}`) });
  await page.goto(server.url);
  await until(page, `() => document.querySelector('[data-testid="crawl-status"]')?.textContent === 'finished'`, 'the crawl shown');

  // (a) Opening the tab: each time a new list (the tab's store is made when it opens).
  const opens: number[] = [];
  for (let i = 0; i < OPENS; i++) {
    await page.click('[role="tab"][data-tab="slots"]');
    await until(page, `() => !document.querySelector('[data-testid="requests-tab"]')`, 'the tab closed');
    await sleep(300);
    await page.evaluate(`window.__armPaint('[role="tab"][data-tab="requests"]')`);
    const painted = page.evaluate<number>(`window.__painted(() => document.querySelectorAll('${ROW_SEL}').length >= 10, 10000)`);
    await page.click('[role="tab"][data-tab="requests"]');
    opens.push(await painted);
  }
  const worstOpen = Math.max(...opens);
  figure(`requests tab: open to the first rows painted, ${fmt(ROWS)} responses`,
    `worst ${fmt(worstOpen, 1)} ms of ${opens.length} opens (median ${fmt(median(opens), 1)} ms; ${opens.map((x) => fmt(x)).join(', ')})`, worstOpen, 300, { atMost: true, unit: ' ms' });
  detail('measured in the page: the click event\'s timeStamp to a task right after the first frame that starts with ten rows in the grid (a new anchor: page, total and head in one read)');

  // (b) A filter change to its repainted rows: the chip's click to the frame whose rows all match and whose list has the filter's length.
  const classes: [string, string][] = [['429', '429'], ['5xx', '5'], ['failed', 'failed'], ['3xx', '3'], ['4xx', '4'], ['2xx', '2'], ['all', '']];
  const filters: { what: string; ms: number }[] = [];
  for (const [cls, prefix] of classes) {
    const total = (await core.dispatch('requests.page', { crawlId: crawl.crawlId, filter: cls === 'all' ? {} : { statusClass: cls }, limit: 1, count: true })) as { ok: true; result: RequestPage };
    const n = total.result.total ?? -1;
    const firstBefore = await page.evaluate<string | null>(`document.querySelector('${ROW_SEL}')?.getAttribute('data-row-id') ?? null`);
    const lengthBefore = await page.evaluate<number>(`Number(document.querySelector('[data-testid="requests-grid"]').getAttribute('data-rows'))`);
    await page.evaluate(`window.__armPaint('button[data-class="${cls}"]')`);
    const cond = `() => { const g = document.querySelector('[data-testid="requests-grid"]'); const rows = [...g.querySelectorAll('[data-row-id]')];
      return Number(g.getAttribute('data-rows')) === ${n} && rows.length >= ${Math.min(10, n)}
        && (${n !== lengthBefore} || rows[0]?.getAttribute('data-row-id') !== ${JSON.stringify(firstBefore)})
        && rows.every((r) => '${prefix}' === '' || r.getAttribute('data-status').startsWith('${prefix}')); }`;
    const painted = page.evaluate<number>(`window.__painted(${cond}, 10000)`);
    await page.click(`button[data-class="${cls}"]`);
    filters.push({ what: `${cls} (${fmt(n)} rows)`, ms: await painted });
    await sleep(300);
  }
  // The order: newest first → by time → newest first.
  for (const [label, first] of [['By time', 'oldest'], ['Newest first', 'newest']] as const) {
    await page.evaluate(`window.__armPaint('[data-testid="requests-tab"] .seg')`);
    const want = first === 'oldest' ? 1 : ROWS;
    const painted = page.evaluate<number>(`window.__painted(() => document.querySelector('${ROW_SEL}')?.getAttribute('data-row-id') === '${want}', 10000)`);
    await page.evaluate(`[...document.querySelectorAll('[data-testid="requests-tab"] .seg')].find((b) => b.textContent === ${JSON.stringify(label)}).setAttribute('data-bench', 'order')`);
    await page.click('[data-bench="order"]');
    await page.evaluate(`document.querySelector('[data-bench="order"]').removeAttribute('data-bench')`);
    filters.push({ what: `order: ${label.toLowerCase()}`, ms: await painted });
    await sleep(300);
  }
  const worstFilter = Math.max(...filters.map((f) => f.ms));
  figure(`requests tab: a filter change to the repainted rows, ${fmt(ROWS)} responses`,
    `worst ${fmt(worstFilter, 1)} ms over ${filters.length} changes (${filters.map((f) => `${f.what} ${fmt(f.ms)} ms`).join('; ')})`, worstFilter, 150, { atMost: true, unit: ' ms' });
  detail('a change that never painted counts as -1 ms and fails the run below');
  if (filters.some((f) => f.ms < 0) || opens.some((x) => x < 0)) throw new Error('a measured change never painted');

  // (c) Scrolling at 60 Hz: a steady scroll (2 rows a frame) and a fling (12 rows a frame), all rows.
  await page.evaluate(`document.querySelector('[data-testid="requests-grid"]').scrollTop = 0`);
  await sleep(500);
  for (const [name, step] of [['steady, 48 px (2 rows) a frame', 48], ['fling, 288 px (12 rows) a frame', 288]] as const) {
    const profileFile = process.env.BENCH_REQUESTS_PROFILE;
    const profile = profileFile ? await page.startProfile(200) : null;
    const scroll = () => page.evaluate<{ deltas: number[]; blank: number[]; longs: number[]; moved: number; top: number }>(`window.__scroll(${SECONDS * 1000}, ${step})`);
    const traceFile = process.env.BENCH_REQUESTS_TRACE?.replace(/(\.json)?$/, `-${step}.json`);
    const r = traceFile ? await browser.trace(traceFile, ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'v8.execute'], scroll) : await scroll();
    if (traceFile) detail(`Chromium trace of the scroll written to ${traceFile}`);
    if (profile && profileFile) {
      const out = profileFile.replace(/(\.cpuprofile)?$/, `-${step}.cpuprofile`);
      writeFileSync(out, JSON.stringify(await profile.stop()));
      detail(`the page's CPU profile while scrolling written to ${out}`);
    }
    const late = r.deltas.filter((d) => d > ON_TIME_MS).length;
    const dropped = (100 * late) / Math.max(1, r.deltas.length);
    const blankFrames = r.blank.filter((b) => b > 0).length;
    figure(`requests tab: frames dropped while scrolling ${fmt(ROWS)} rows, ${name}`,
      `${fmt(dropped, 2)} % (${late} of ${r.deltas.length} rAF intervals over ${ON_TIME_MS} ms; p50 ${fmt(percentile(r.deltas, 50), 1)} ms, p99 ${fmt(percentile(r.deltas, 99), 1)} ms, max ${fmt(Math.max(...r.deltas), 1)} ms)`,
      dropped, 2, { atMost: true, unit: ' %' });
    detail(`scrolled ${fmt(r.moved / 24)} rows in ${SECONDS} s; ${blankFrames} of ${r.blank.length} frames showed rows still loading (placeholders); ` +
      `${r.longs.length} long tasks${r.longs.length ? ` (max ${fmt(Math.max(...r.longs))} ms)` : ''}`);
    await sleep(500);
  }
  await page.close();
} finally {
  await browser.close();
  await server.close();
  await core.close();
  detail(`(requests bench: ${fmt((performance.now() - started) / 1000, 1)} s)`);
}
