// Figure: hostile sites (issue 15). Five hostile hosts crawled beside a normal one, all at once:
// the normal host's event-loop lag and pace, and the engine process's peak RSS, against targets.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { parseCrawlConfig } from '../../electron/core/engine/crawl-config';
import type { HostInput, LogEntry, ScenarioInput } from '../../electron/core/testsite';
import { benchFile, startChild } from './lib/children';
import { runEngine } from './lib/engine';
import { detail, figure, fmt, mb, percentile } from './lib/report';

/** Pages of the normal host (its crawl lasts about PAGES × DELAY seconds). */
const PAGES = Number(process.env.BENCH_HOSTILE_PAGES ?? 150);
/** DOWNLOAD_DELAY of every slot, seconds. */
const DELAY = Number(process.env.BENCH_HOSTILE_DELAY ?? 0.1);
/** Which hostile hosts to serve (comma list of nested, bomb, robots-big, robots-bomb, huge); all by default. */
const ONLY = (process.env.BENCH_HOSTILE_HOSTS ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const tmp = mkdtempSync(join(tmpdir(), 'slotscope-bench-hostile-'));
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

/** The hostile hosts of the issue, each on its own loopback address (127.0.92.x). */
const HOSTILE: Record<string, { what: string; host: HostInput }> = {
  nested: {
    what: 'a 2.2 MB page of nested <div>s',
    host: {
      address: '127.0.92.201',
      pages: 0,
      bodies: { '/': { head: '<!doctype html><html><body><a href="/first">first</a>', fill: '<div>', tail: '<a href="/deep">deep</a></body></html>', bytes: 2_200_000 } },
    },
  },
  bomb: {
    what: 'a gzip bomb page (1 GiB inflated, about 1 MB sent)',
    host: { address: '127.0.92.202', pages: 0, bodies: { '/': { head: '<!doctype html><html><body><a href="/x">x</a><p>', bytes: GiB, encoding: 'gzip' } } },
  },
  'robots-big': {
    what: 'a 50 MB robots.txt',
    host: {
      address: '127.0.92.203',
      pages: 3,
      bodies: { '/robots.txt': { head: 'User-agent: *\nDisallow: /private\n', fill: '# a long robots.txt, line after line of comments\n', bytes: 50_000_000, content_type: 'text/plain' } },
    },
  },
  'robots-bomb': {
    what: 'a robots.txt gzip bomb (1 GiB inflated)',
    host: {
      address: '127.0.92.204',
      pages: 3,
      bodies: { '/robots.txt': { head: 'User-agent: *\nDisallow: /private\n', fill: '\n', bytes: GiB, encoding: 'gzip', content_type: 'text/plain' } },
    },
  },
  huge: {
    what: 'one 1 GiB page, streamed',
    host: { address: '127.0.92.205', pages: 0, bodies: { '/': { head: '<!doctype html><html><body><a href="/x">x</a><p>', bytes: GiB } } },
  },
};
const hostile = Object.entries(HOSTILE).filter(([k]) => ONLY.length === 0 || ONLY.includes(k));
const NORMAL = 'normal.test';

/**
 * Event-loop lag as a timer due at any moment meets it: a 5 ms timer chain, each stall of L ms
 * counted as the L/5 samples (L, L-5, …) that timers due during it would have waited. A
 * histogram of timer callbacks (monitorEventLoopDelay) counts a 48 s freeze as one sample.
 */
class LagSampler {
  readonly samples: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private due = 0;
  constructor(private readonly stepMs = 5) {}
  start(): void {
    this.due = performance.now() + this.stepMs;
    this.timer = setTimeout(() => this.tick(), this.stepMs);
  }
  private tick(): void {
    const now = performance.now();
    const lag = Math.max(0, now - this.due);
    this.samples.push(lag);
    for (let l = lag - this.stepMs; l > 0; l -= this.stepMs) this.samples.push(l);
    this.due = now + this.stepMs;
    this.timer = setTimeout(() => this.tick(), this.stepMs);
  }
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}

/** Peak resident set of this process (the engine, its history worker and SQLite): the kernel's high-water mark, reset first when it can be. */
function peakRss(reset = false): number | null {
  try {
    if (reset) writeFileSync('/proc/self/clear_refs', '5');
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

interface Measured {
  readonly seconds: number;
  readonly loadBefore: string;
  readonly loadAfter: string;
  /** Time-weighted lag samples (ms) and the timer-callback histogram's p99 (ms). */
  readonly lag: readonly number[];
  readonly histogramP99: number;
  /** Gaps (ms) between the normal host's page arrivals at the site, and how many pages arrived. */
  readonly gaps: readonly number[];
  readonly pages: number;
  readonly rssBefore: number;
  readonly peak: number;
  readonly rows: readonly { url: string; status: number | null; bytes: number; kind: string | null; ms: number }[];
  readonly events: readonly { code: string; text: string }[];
}

/** One crawl of the normal host and `hostileHosts` at once, against a fresh test site in its own process. */
async function measure(tag: string, hostileHosts: readonly (readonly [string, { host: HostInput }])[]): Promise<Measured> {
  const hosts: Record<string, HostInput> = { [NORMAL]: { address: '127.0.92.200', pages: PAGES, page_bytes: 2000 } };
  for (const [k, h] of hostileHosts) hosts[`${k}.test`] = h.host;
  const scenario: ScenarioInput = { hosts, port: 0, seed: 1 };
  const scenarioFile = join(tmp, `${tag}-scenario.json`);
  const logFile = join(tmp, `${tag}-log.jsonl`);
  writeFileSync(scenarioFile, JSON.stringify(scenario));
  const site = await startChild(benchFile('./lib/testsite.child.mjs'), [scenarioFile, logFile]);
  const ports = site.ready.ports as Record<string, number>;
  const origin = (host: string): string => `http://${host}:${ports[host]}`;
  const parsed = parseCrawlConfig({
    name: `hostile-${tag}`,
    seeds: [`${origin(NORMAL)}/`, ...hostileHosts.map(([k]) => `${origin(`${k}.test`)}/`)],
    follow: { scope: 'host' },
    // Scrapy's defaults otherwise (DOWNLOAD_MAXSIZE 1 GiB, robots.txt obeyed).
    settings: { DOWNLOAD_DELAY: DELAY, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1, AUTOTHROTTLE_ENABLED: false },
    resolve: site.ready.resolve as Record<string, string>,
  });
  if (!parsed.ok) throw new Error(`bench config refused: ${parsed.errors.map((e) => e.message).join('; ')}`);

  const loadBefore = load();
  const rssBefore = process.memoryUsage().rss;
  peakRss(true);
  let sampledPeak = rssBefore;
  const rssSampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss)), 20);
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const lag = new LagSampler();
  lag.start();
  const run = await runEngine(parsed.config);
  lag.stop();
  histogram.disable();
  clearInterval(rssSampler);
  const loadAfter = load();
  const peak = Math.max(peakRss() ?? 0, sampledPeak, process.memoryUsage().rss);

  await site.call({ type: 'close' });
  await site.stop();
  const text = readFileSync(logFile, 'utf8').trim();
  const log = (text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as LogEntry)).sort((a, b) => a.t - b.t);
  const normal = log.filter((e) => e.host === NORMAL && e.path !== '/robots.txt');
  const gaps: number[] = [];
  for (let i = 1; i < normal.length; i++) gaps.push(normal[i].t - normal[i - 1].t);

  const db = new Database(run.db, { readonly: true });
  const rows = db.prepare('SELECT r.url AS url, r.status AS status, r.bytes AS bytes, r.error_kind AS kind, r.t - r.started_at AS ms FROM responses r').all() as Measured['rows'];
  const events = db.prepare("SELECT code, text FROM events WHERE kind IN ('warning', 'error') OR code = 'links-capped'").all() as Measured['events'];
  db.close();
  run.cleanup();
  return {
    seconds: (run.finishedAt - run.startedAt) / 1000, loadBefore, loadAfter, lag: lag.samples, histogramP99: histogram.percentile(99) / 1e6,
    gaps, pages: normal.length, rssBefore, peak, rows, events,
  };
}

const delayMs = DELAY * 1000;
const lagText = (m: Measured): string =>
  `${fmt(percentile(m.lag, 99), 1)} ms, time-weighted (p50 ${fmt(percentile(m.lag, 50), 1)} ms, max ${fmt(m.lag.reduce((a, b) => Math.max(a, b), 0), 1)} ms; ` +
  `timer-callback histogram p99 ${fmt(m.histogramP99, 1)} ms)`;
const paceText = (m: Measured): string =>
  `${fmt(percentile(m.gaps, 99), 1)} ms for DOWNLOAD_DELAY ${fmt(delayMs)} ms (p50 ${fmt(percentile(m.gaps, 50), 1)} ms, ` +
  `max ${fmt(m.gaps.reduce((a, b) => Math.max(a, b), 0), 1)} ms, ${m.gaps.filter((g) => g > delayMs + 50).length} of ${m.gaps.length} gaps over delay + 50 ms; ${m.pages} of ${PAGES} pages)`;

// The machine is shared: the same crawl of the normal host alone first, to show its noise.
const base = await measure('baseline', []);
const m = await measure('hostile', hostile);
rmSync(tmp, { recursive: true, force: true });

console.log(`hostile sites: ${hostile.length} hostile hosts beside ${NORMAL} (${PAGES} pages, DOWNLOAD_DELAY ${DELAY} s, per-domain 1), crawl ${fmt(m.seconds, 1)} s; ` +
  `load average ${m.loadBefore} before, ${m.loadAfter} after (2 cores shared)`);
detail(`baseline, ${NORMAL} crawled alone just before (load ${base.loadBefore} → ${base.loadAfter}): lag p99 ${lagText(base)}; pace p99 gap ${paceText(base)}; peak RSS ${mb(base.peak)}`);

const p99 = percentile(m.lag, 99);
figure('hostile: event-loop lag p99', `${lagText(m)}; load ${m.loadAfter}`, Number(p99.toFixed(1)), 50, { atMost: true, unit: ' ms' });
const gapP99 = percentile(m.gaps, 99);
figure(`hostile: ${NORMAL} pace, p99 gap at the site`, `${paceText(m)}; load ${m.loadAfter}`, Number(gapP99.toFixed(1)), delayMs + 50, { atMost: true, unit: ' ms' });
figure('hostile: peak RSS', `${mb(m.peak)} (before the crawl ${mb(m.rssBefore)}; load ${m.loadAfter})`, Math.round(m.peak / MiB), 400, { atMost: true, unit: ' MB' });

for (const [k, h] of hostile) {
  const mine = m.rows.filter((r) => new URL(r.url).hostname === `${k}.test`);
  const outcome = mine.map((r) => `${new URL(r.url).pathname} ${r.status ?? r.kind} ${fmt(r.bytes)} B in ${fmt(r.ms)} ms`).join(', ');
  detail(`${k}.test (${h.what}): ${outcome || 'no response'}`);
}
const shown = new Set<string>();
for (const e of m.events) {
  const line = `${e.code}: ${e.text.length > 200 ? `${e.text.slice(0, 197)}...` : e.text}`;
  if (!shown.has(line)) detail(line);
  shown.add(line);
}
