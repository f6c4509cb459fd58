// Figures of the desktop-shell issue: `slotscope start` (browser mode, warm build) to an interactive
// page in Chromium, and 10,000 slot updates/s in the core reaching a WebSocket page (messages, CPU).
//
// Knobs: BENCH_SHELL_PARTS (`start,forward`), BENCH_SHELL_STARTS (fresh starts measured, 5),
// BENCH_SHELL_SLOTS (hosts of the forwarding crawl, and slots of the feed, 1,200), BENCH_SHELL_DELAY (their DOWNLOAD_DELAY
// in s, 1), BENCH_SHELL_SECONDS (measured window, 10).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { AppEvents, Dispatcher, EventName } from '../../shared/contract';
import { createCore } from '../../electron/core/create-core';
import type { ScenarioInput } from '../../electron/core/testsite';
import { startServer } from '../../electron/server/ws-server';
import { feedSlots } from '../e2e/console-feed';
import { benchFile, startChild } from './lib/children';
import { detail, figure, fmt, median, sleep } from './lib/report';

const ROOT = resolve(process.cwd());
const CHROMIUM = process.env.SLOTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const PARTS = (process.env.BENCH_SHELL_PARTS ?? 'start,forward').split(',');
const STARTS = Number(process.env.BENCH_SHELL_STARTS ?? 5);
const SLOTS = Number(process.env.BENCH_SHELL_SLOTS ?? 1200);
const DELAY = Number(process.env.BENCH_SHELL_DELAY ?? 1);
const SECONDS = Number(process.env.BENCH_SHELL_SECONDS ?? 10);
const tmp = mkdtempSync(join(tmpdir(), 'slotscope-bench-shell-'));

/** The environment of a headless start: no display (so neither Electron nor a browser is opened), a fresh data folder. */
function headlessEnv(dataHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: dataHome };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  return env;
}

// ------------------------------------------------------------------------------ (a) start → page

interface StartRun {
  /** Spawn → the `{"ready": true, "url": …}` line. */
  readonly readyMs: number;
  /** Spawn → the demo crawl's row painted in the crawl list. */
  readonly paintMs: number;
  /** Spawn → the crawl header's Start button enabled (the page answers clicks). */
  readonly interactiveMs: number;
}

async function oneStart(browser: Browser, i: number): Promise<StartRun> {
  const dataHome = join(tmp, `start-${i}`);
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'start'], { cwd: ROOT, env: headlessEnv(dataHome), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const url = await new Promise<string>((res, rej) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /^(\{"ready":true.*\})$/m.exec(out);
        if (m) res(JSON.parse(m[1]).url as string);
      });
      child.once('exit', (code) => rej(new Error(`start exited with ${code} before it was ready:\n${stderr}`)));
    });
    const readyMs = performance.now() - t0;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('[data-testid="crawl-list"] tr', { hasText: 'Demo: built-in test site' }).waitFor({ state: 'visible', timeout: 30_000 });
    // The frame after the one that committed the row has been painted.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    const paintMs = performance.now() - t0;
    await page.waitForSelector('[role="toolbar"] button:text-is("Start"):not([disabled])', { timeout: 30_000 });
    const interactiveMs = performance.now() - t0;
    await context.close();
    return { readyMs, paintMs, interactiveMs };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataHome, { recursive: true, force: true });
  }
}

async function startToPage(): Promise<void> {
  console.log('-- (a) `slotscope start` (browser mode, warm build, fresh data folder) to an interactive page in Chromium');
  const t = performance.now();
  const b = spawnSync(process.execPath, [join(ROOT, 'build', 'build.mjs'), '--if-needed'], { cwd: ROOT, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build failed: ${b.stderr}`);
  detail(`\`node build/build.mjs --if-needed\` on the warm build (what \`npm start\` runs first): ${fmt(performance.now() - t)} ms`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    await oneStart(browser, 0); // warms the OS file cache; not counted
    const runs: StartRun[] = [];
    for (let i = 1; i <= STARTS; i++) runs.push(await oneStart(browser, i));
    const m = (k: keyof StartRun) => median(runs.map((r) => r[k]));
    for (const r of runs) detail(`run: ready ${fmt(r.readyMs)} ms, demo row painted ${fmt(r.paintMs)} ms, Start enabled ${fmt(r.interactiveMs)} ms`);
    detail(`median of ${runs.length}: process start → ready line ${fmt(m('readyMs'))} ms; → demo crawl painted ${fmt(m('paintMs'))} ms`);
    figure('start → interactive page (browser mode)', `median ${fmt(m('interactiveMs'))} ms, worst ${fmt(Math.max(...runs.map((r) => r.interactiveMs)))} ms`, m('interactiveMs'), 2000, { atMost: true, unit: ' ms' });
  } finally {
    await browser.close();
  }
}

// ------------------------------------------------------------- (b) slot updates → WebSocket page

async function forwarding(): Promise<void> {
  console.log(`-- (b) slot rows forwarded to a page over the WebSocket host: a crawl over ${fmt(SLOTS)} hosts (DOWNLOAD_DELAY ${DELAY} s) in the real core, ` +
    `then ${fmt(SLOTS)} fed slots whose every row changes at every tick (the figures)`);
  const hosts: Record<string, unknown> = {};
  const name = (i: number) => `s${i + 1}.test`;
  for (let i = 0; i < SLOTS; i++) hosts[name(i)] = { pages: 200, page_bytes: 500, latency_ms: 5 };
  const scenarioFile = join(tmp, 'forward-scenario.json');
  writeFileSync(scenarioFile, JSON.stringify({ hosts, port: 0, seed: 1 } as unknown as ScenarioInput));
  const site = await startChild(benchFile('./lib/testsite.child.mjs'), [scenarioFile, join(tmp, 'forward-log.jsonl')]);
  const port = (site.ready.ports as Record<string, number>)[name(0)];
  const core = await createCore({ db: join(tmp, 'forward.sqlite') });
  // The feed of part (2): slots of a crawl that never starts, their rows pushed beside the core's events.
  const feedCrawl = await core.dispatch('crawls.create', { config: { name: 'bench: slot feed', seeds: [`http://${name(0)}:${port}/`] } });
  if (!feedCrawl.ok) throw new Error(`feed crawl refused: ${feedCrawl.error.message}`);
  const feed = feedSlots(core, (feedCrawl.result as { crawl: { id: number } }).crawl.id, SLOTS, { seed: 5 });

  // What the host does per event for its clients (serialize once, send to each session), timed on the CPU.
  let forwardUs = 0;
  let forwarded = 0;
  let rowsAtCore = 0;
  let updatesAtCore = 0;
  let counting = false;
  const timed: Dispatcher = {
    dispatch: (m, p) => feed.dispatcher.dispatch(m, p),
    subscribe(listener) {
      return feed.dispatcher.subscribe(<E extends EventName>(event: E, payload: AppEvents[E]) => {
        const c0 = process.cpuUsage();
        listener(event, payload);
        const d = process.cpuUsage(c0);
        if (!counting) return;
        forwardUs += d.user + d.system;
        forwarded++;
        if (event === 'slots.update') {
          updatesAtCore++;
          rowsAtCore += (payload as AppEvents['slots.update']).rows.length;
        }
      });
    },
  };
  const serverLog: string[] = [];
  const server = await startServer({ dispatcher: timed, staticDir: join(ROOT, 'dist', 'renderer'), log: (l) => serverLog.push(l) });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const frames: { t: number; event: string; bytes: number }[] = [];
    page.on('websocket', (ws) => ws.on('framereceived', (f) => {
      if (!counting) return;
      const text = typeof f.payload === 'string' ? f.payload : f.payload.toString('utf8');
      const event = /^\{"event":"([^"]+)"/.exec(text)?.[1] ?? (text.startsWith('{"id"') ? 'reply' : 'other');
      frames.push({ t: performance.now(), event, bytes: text.length });
    }));
    await page.goto(server.url);
    await page.locator('[data-testid="connection"][data-state="open"]').waitFor({ timeout: 30_000 });

    const seeds: string[] = [];
    for (let k = 1; k <= Math.ceil((SECONDS + 10) / DELAY) + 2; k++) for (let i = 0; i < SLOTS; i++) seeds.push(`http://${name(i)}:${port}/page/${k}`);
    const created = await core.dispatch('crawls.create', {
      config: {
        name: 'bench: forwarding', seeds, follow: { scope: 'none' }, resolve: site.ready.resolve,
        settings: { DOWNLOAD_DELAY: DELAY, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false, ROBOTSTXT_OBEY: false,
          CONCURRENT_REQUESTS: 256, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
      },
    });
    if (!created.ok) throw new Error(`crawl refused: ${created.error.message}`);
    const id = (created.result as { crawl: { id: number } }).crawl.id;
    const started = await core.dispatch('crawls.start', { id });
    if (!started.ok) throw new Error(`start refused: ${started.error.message}`);
    // The page shows a crawl of its choosing; every 'slots.update' reaches its socket whichever it is.
    await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${id}"]`).waitFor({ timeout: 30_000 });
    await sleep(3000); // every slot has started

    // One measured window: counters reset, CPU and wall time taken around `run`.
    const measure = async (run: () => Promise<void>) => {
      frames.length = 0;
      forwardUs = 0;
      forwarded = 0;
      rowsAtCore = 0;
      updatesAtCore = 0;
      counting = true;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await run();
      counting = false;
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const secs = wallMs / 1000;
      const updates = frames.filter((f) => f.event === 'slots.update');
      const perSecond = (list: { t: number }[]) => {
        const buckets = new Array<number>(Math.ceil(secs)).fill(0);
        for (const f of list) buckets[Math.min(buckets.length - 1, Math.floor((f.t - t0) / 1000))]++;
        return buckets;
      };
      return {
        secs, wallMs, cpu, updates, updBuckets: perSecond(updates), allBuckets: perSecond(frames),
        rowsPerSec: rowsAtCore / secs, updatesPerSec: updatesAtCore / secs, rowsEach: rowsAtCore / Math.max(1, updatesAtCore),
        kibPerSec: frames.reduce((n, f) => n + f.bytes, 0) / secs / 1024, forwardShare: (forwardUs / 1000 / wallMs) * 100,
        forwardUsEach: forwardUs / Math.max(1, forwarded), forwarded,
      };
    };

    // (1) The real crawl: its rows change when a request starts or ends (they carry the time of the
    // next start, not a countdown), so this is what a crawl of this shape costs the host and the page.
    const stats0 = await core.dispatch('crawls.stats', { id });
    const crawl = await measure(() => sleep(SECONDS * 1000));
    const stats1 = await core.dispatch('crawls.stats', { id });
    await core.dispatch('crawls.stop', { id });
    const responses = stats0.ok && stats1.ok ? (stats1.result as { responses: number }).responses - (stats0.result as { responses: number }).responses : NaN;
    detail(`the crawl: ${fmt(responses / crawl.secs)} responses/s; ${fmt(crawl.updatesPerSec, 1)} 'slots.update' events/s carrying ${fmt(crawl.rowsPerSec)} changed rows/s ` +
      `(${fmt(crawl.rowsEach)} rows each: a row changes when a request starts or ends); page: ${fmt(crawl.updates.length / crawl.secs, 1)} messages/s ` +
      `(max ${Math.max(...crawl.updBuckets)} in one second), ${fmt(crawl.kibPerSec)} KiB/s; host process CPU (core + engine + history + host) ` +
      `${fmt(((crawl.cpu.user + crawl.cpu.system) / 1000 / crawl.wallMs) * 100, 1)} % of a core, forwarding ${fmt(crawl.forwardShare, 2)} %`);

    // (2) The figures: BENCH_SHELL_SLOTS real engine Slot objects whose every row changes at every 100 ms tick
    // (the core's slotTuple + SlotRowDiff, as its tick does), on the same host, server and page.
    await sleep(500);
    const stopFeed = feed.run(10);
    const fed = await measure(() => sleep(SECONDS * 1000));
    stopFeed();
    detail(`the feed: ${fmt(SLOTS)} slots, every row changed at every tick: ${fmt(fed.updatesPerSec, 1)} 'slots.update' events/s carrying ${fmt(fed.rowsPerSec)} rows/s ` +
      `(${fmt(fed.rowsEach)} rows each); page: ${fmt(fed.updates.length / fed.secs, 1)} 'slots.update' messages/s (max ${Math.max(...fed.updBuckets)} in one second), ` +
      `${fmt(fed.allBuckets.reduce((a, b) => a + b, 0) / fed.secs, 1)} messages/s in all, ${fmt(fed.kibPerSec)} KiB/s; forwarding: ${fmt(fed.forwarded)} events, ${fmt(fed.forwardUsEach)} µs CPU each`);
    if (serverLog.some((l) => /slow reader|dropping/.test(l))) detail(`host log: ${serverLog.filter((l) => /slow reader|caught up/.test(l)).join(' | ')}`);
    figure('slot row changes offered to the WebSocket host', `${fmt(fed.rowsPerSec)} changed slot rows/s`, fed.rowsPerSec, 10_000, { unit: '/s' });
    figure('slot-update messages reaching the page', `${fmt(fed.updates.length / fed.secs, 1)}/s on average, at most ${Math.max(...fed.updBuckets)} in any second`, Math.max(...fed.updBuckets), 10, { atMost: true, unit: '/s' });
    figure('host CPU forwarding them', `${fmt(fed.forwardShare, 2)} % of a core`, fed.forwardShare, 5, { atMost: true, unit: ' %' });
  } finally {
    await browser.close();
    await server.close();
    await core.close();
    await site.stop();
  }
}

try {
  if (PARTS.includes('start')) await startToPage();
  if (PARTS.includes('forward')) await forwarding();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
