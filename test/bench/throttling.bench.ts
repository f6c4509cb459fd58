// Figure 3: how politely the adaptive throttle behaves against real server limits, read from the
// test site's own request log (issue 17 part 3). 3a: a host that allows 20 requests/s (429 +
// Retry-After: 1 beyond that, no other header), crawled with AutoThrottle and rampup: achieved
// rate (>= 95 %), 429 share (<= 1 %), arrivals inside announced Retry-After blocks (0); the same
// over 200 pages of a 10/s host (>= 85 %). 3b: a host whose latency grows with its load, crawled
// with AutoThrottle at target concurrency 1, 2 and 4: the mean in flight the server saw against the
// target (within 10 %). 3c: the 20/s host crawled by Scrapy's AutoThrottle, when Debian's
// python3-scrapy is there. 3d: a host that says its limit (200 per 10 s) in RateLimit-* headers,
// and one in X-RateLimit-* headers: rate (>= 98 %), 429s (0), arrivals before a reset announced
// with remaining 0 (0). Every figure prints the load average beside it.
//
// Knobs: BENCH_THROTTLING_PARTS (`overload,limited,short,headers,xheaders,scrapy`, default all),
// BENCH_THROTTLING_PAGES (pages of the 20/s hosts, 3,000),
// BENCH_THROTTLING_SHORT_PAGES (200), BENCH_OVERLOAD_PAGES (pages per overload crawl, 400).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SETTINGS } from '../../shared/settings';
import type { ChangeRecord, EventRecord, ResponseRecord } from '../../shared/types';
import { Crawler, type CrawlStats } from '../../electron/core/engine/crawler';
import { BETA_LIMIT, RampupState, rampupRate, type RampupParams } from '../../electron/core/engine/throttle/rampup';
import type { BlockInterval, HostInput, InFlightStats, LogEntry, ScenarioInput } from '../../electron/core/testsite';
import type { RateLimitHeaders } from '../../electron/core/testsite';
import { benchFile, startChild, type Child } from './lib/children';
import { clockNow, makeConfig } from './lib/engine';
import { detail, figure, fmt, median, percentile } from './lib/report';

const tmp = mkdtempSync(join(tmpdir(), 'slotscope-bench-throttling-'));

// ------------------------------------------------------------------------------------ helpers

interface Site {
  readonly child: Child;
  readonly logFile: string;
  readonly resolve: Record<string, string>;
  readonly ports: Record<string, number>;
  /** Epoch ms of the log's t = 0: an engine time e is at e - t0Epoch on the log's timebase. */
  readonly t0Epoch: number;
}

/** The test site in its own process, with its request log in a file. */
async function startSite(tag: string, hosts: Record<string, HostInput>): Promise<Site> {
  const scenario: ScenarioInput = { hosts, port: 0, seed: 1 };
  const scenarioFile = join(tmp, `${tag}-scenario.json`);
  const logFile = join(tmp, `${tag}-log.jsonl`);
  writeFileSync(scenarioFile, JSON.stringify(scenario));
  const child = await startChild(benchFile('./lib/testsite.child.mjs'), [scenarioFile, logFile]);
  return {
    child,
    logFile,
    resolve: child.ready.resolve as Record<string, string>,
    ports: child.ready.ports as Record<string, number>,
    t0Epoch: child.ready.t0Epoch as number,
  };
}

/** Closes the site (flushing its log) and returns the log sorted by arrival. */
async function closeSite(site: Site): Promise<LogEntry[]> {
  await site.child.call({ type: 'close' });
  await site.child.stop();
  const text = readFileSync(site.logFile, 'utf8').trim();
  const log = text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as LogEntry);
  return log.sort((a, b) => a.t - b.t);
}

async function siteBlocks(site: Site, host: string): Promise<BlockInterval[]> {
  const r = await site.child.call<{ blocks?: BlockInterval[]; error?: string }>({ type: 'blocks', host });
  if (!r.blocks) throw new Error(`test site blocks(${host}): ${r.error}`);
  return r.blocks;
}

async function siteInFlight(site: Site, host: string): Promise<InFlightStats> {
  const r = await site.child.call<{ stats?: InFlightStats; error?: string }>({ type: 'inflight', host });
  if (!r.stats) throw new Error(`test site inFlightStats(${host}): ${r.error}`);
  return r.stats;
}

interface EngineCrawl {
  readonly stats: CrawlStats;
  readonly records: ResponseRecord[];
  readonly changes: ChangeRecord[];
  readonly events: EventRecord[];
  readonly ms: number;
}

/** One crawl with the engine's Crawler, its records kept in memory (no history store). */
async function crawl(seeds: string[], settings: Record<string, unknown>, resolve: Record<string, string>): Promise<EngineCrawl> {
  const records: ResponseRecord[] = [];
  const changes: ChangeRecord[] = [];
  const events: EventRecord[] = [];
  const crawler = new Crawler({
    config: makeConfig(seeds, settings, resolve),
    sinks: { onResponse: (r) => records.push(r), onChange: (c) => changes.push(c), onEvent: (e) => events.push(e) },
  });
  const t0 = clockNow();
  crawler.start();
  const stats = await crawler.done;
  const ms = clockNow() - t0;
  await crawler.close();
  return { stats, records, changes, events, ms };
}

function pageSeeds(origin: string, pages: number): string[] {
  const out = [`${origin}/`];
  for (let i = 1; i < pages; i++) out.push(`${origin}/page/${i}`);
  return out;
}

function countBy<T>(xs: readonly T[], key: (x: T) => string): string {
  const m = new Map<string, number>();
  for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1);
  return [...m].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${fmt(n)}`).join(', ');
}

// ------------------------------------------------------------------- 3a: the rate-limited host

const LIMIT = 20; // requests per second the host admits
const LIMITED_LATENCY = 30; // ms
const BUCKET_S = 10;
/** Arrivals this soon after a block was announced were already on the wire (latency + 5 ms). */
const IN_FLIGHT_GRACE = LIMITED_LATENCY + 5;

/** The machine's 1-minute load average, printed beside every figure (2 cores, shared). */
const load = (): string => `load ${loadavg()[0].toFixed(2)}`;

function limitedHost(address: string, pages: number, limit = LIMIT, perSeconds = 1, headers?: RateLimitHeaders): HostInput {
  return {
    address, pages, latency_ms: LIMITED_LATENCY,
    rate_limit: { requests: limit, per_seconds: perSeconds, status: 429, retry_after: Math.ceil(perSeconds), ...(headers ? { headers } : {}) },
  };
}

interface LimitedFigures {
  readonly total: number;
  readonly ok: number;
  readonly refused: number;
  readonly other: number;
  readonly spanS: number;
  readonly rate: number;
  readonly share429: number;
  readonly blocks: number;
  /** Arrivals inside a block, later than IN_FLIGHT_GRACE after its announcement. */
  readonly inside: { e: LogEntry; b: BlockInterval }[];
  /** Arrivals inside blocks only within IN_FLIGHT_GRACE of their announcement. */
  readonly onTheWire: { e: LogEntry; b: BlockInterval }[];
  readonly buckets: { from: number; ok: number; refused: number }[];
  readonly firstT: number;
}

/** The rate-limit figures of one crawl from the site's log of `host` and the blocks it announced. */
function limitedFigures(log: readonly LogEntry[], host: string, blocks: readonly BlockInterval[]): LimitedFigures {
  const es = log.filter((e) => e.host === host && e.path !== '/robots.txt');
  const ok = es.filter((e) => e.status === 200).length;
  const refused = es.filter((e) => e.status === 429).length;
  const firstT = es.length ? es[0].t : 0;
  const spanS = es.length > 1 ? (es[es.length - 1].t - firstT) / 1000 : NaN;
  const sorted = [...blocks].sort((a, b) => a.from - b.from);
  const inside: LimitedFigures['inside'] = [];
  const onTheWire: LimitedFigures['onTheWire'] = [];
  let lo = 0;
  const longest = Math.max(0, ...sorted.map((b) => b.to - b.from));
  for (const e of es) {
    // Sorted by `from`, a block that can still hold e.t starts after e.t - longest.
    while (lo < sorted.length && sorted[lo].from + longest <= e.t) lo++;
    let late: BlockInterval | null = null;
    let early: BlockInterval | null = null;
    for (let i = lo; i < sorted.length && sorted[i].from < e.t; i++) {
      const b = sorted[i];
      if (e.t >= b.to) continue;
      if (e.t > b.from + IN_FLIGHT_GRACE) late ??= b;
      else early ??= b;
    }
    if (late) inside.push({ e, b: late });
    else if (early) onTheWire.push({ e, b: early });
  }
  const buckets: LimitedFigures['buckets'] = [];
  for (const e of es) {
    const i = Math.floor((e.t - firstT) / (BUCKET_S * 1000));
    while (buckets.length <= i) buckets.push({ from: buckets.length * BUCKET_S, ok: 0, refused: 0 });
    if (e.status === 200) buckets[i].ok++;
    else if (e.status === 429) buckets[i].refused++;
  }
  return {
    total: es.length,
    ok,
    refused,
    other: es.length - ok - refused,
    spanS,
    rate: ok / spanS,
    share429: es.length ? refused / es.length : NaN,
    blocks: blocks.length,
    inside,
    onTheWire,
    buckets,
    firstT,
  };
}

/**
 * The waits a header host announced with `remaining: 0`, rebuilt from its log: the site's sliding
 * window replayed over the admitted arrivals (as the site computes it), each admission that left
 * 0 remaining a block from its response (arrival + latency) to the reset it sent. The reset is
 * whole seconds (`RateLimit-Reset`, from the response; `X-RateLimit-Reset`, an epoch second,
 * taken here as its shortest reading, the wait left before rounding), so the blocks are if
 * anything shorter than the client's.
 */
function remainingZeroBlocks(log: readonly LogEntry[], host: string, limit: number, perSeconds: number, style: RateLimitHeaders): BlockInterval[] {
  const admitted = log.filter((e) => e.host === host && e.path !== '/robots.txt' && e.status === 200).map((e) => e.t);
  const W = perSeconds * 1000;
  const out: BlockInterval[] = [];
  let lo = 0;
  for (let i = 0; i < admitted.length; i++) {
    const t = admitted[i];
    while (admitted[lo] <= t - W) lo++;
    const inWindow = i - lo + 1;
    if (limit - inWindow > 0) continue;
    const resetMs = admitted[lo] + W - t;
    const from = t + LIMITED_LATENCY;
    out.push({ from, to: style === 'ratelimit' ? from + Math.ceil(resetMs / 1000) * 1000 : t + resetMs });
  }
  return out;
}

/** Prints the 200s/s per bucket (and 429s, rampup cuts, the rate rampup's law allowed) so oscillation is visible. */
function printTimeline(f: LimitedFigures, cutsAt: readonly number[] = [], law?: (from: number, to: number) => number): void {
  const spanEnd = f.firstT + f.spanS * 1000;
  for (const b of f.buckets) {
    const startT = f.firstT + b.from * 1000;
    const len = Math.min(BUCKET_S, (spanEnd - startT) / 1000);
    const cuts = cutsAt.filter((t) => t >= startT && t < startT + BUCKET_S * 1000).length;
    const bar = '#'.repeat(Math.round(b.ok / Math.max(len, 0.001)));
    detail(`  ${String(b.from).padStart(4)}-${String(b.from + BUCKET_S).padEnd(4)} s: ${fmt(b.ok / Math.max(len, 0.001), 1).padStart(5)} 200s/s` +
      `, ${String(b.refused).padStart(3)} x 429${cutsAt.length || cuts ? `, ${cuts} cut${cuts === 1 ? '' : 's'}` : ''}` +
      `${law ? `, law ${fmt(law(startT, startT + len * 1000), 1).padStart(4)}/s` : ''}  ${bar}`);
  }
}

function printLimitedDetails(f: LimitedFigures): void {
  detail(`site log: ${fmt(f.total)} requests over ${fmt(f.spanS, 1)} s (first to last arrival): ${fmt(f.ok)} x 200, ${fmt(f.refused)} x 429` +
    `${f.other ? `, ${fmt(f.other)} other` : ''}; the server announced ${fmt(f.blocks)} Retry-After blocks`);
  detail(`arrivals inside an announced block: ${fmt(f.inside.length)} later than ${IN_FLIGHT_GRACE} ms after the announcement; ` +
    `${fmt(f.onTheWire.length)} in flight when announced (within ${IN_FLIGHT_GRACE} ms)`);
}

/**
 * The rate rampup's law allowed (requests/s) at a log time, replayed from the engine's own
 * record: slow start from the first request, each cut (ChangeRecord 'rampup_rate': the rate after
 * it is BETA_LIMIT x the curve's top, every feedback here being a 429, at its t), zero while the engine's own
 * Retry-After block (ChangeRecord 'blocked_until') lasted. What the engine would send if it kept
 * its law exactly.
 */
function rampupLaw(run: EngineCrawl, slot: string, params: RampupParams, toSite: (epoch: number) => number): (from: number, to: number) => number {
  const cuts = run.changes.filter((c) => c.setting === 'rampup_rate' && c.slot === slot)
    .map((c) => ({ at: toSite(c.t), top: (c.newValue as number) / BETA_LIMIT }));
  const blocks = run.changes.filter((c) => c.setting === 'blocked_until' && c.slot === slot).map((c) => ({ from: toSite(c.t), to: toSite(c.newValue as number) }));
  const first = toSite(Math.min(...run.records.map((r) => r.startedAt)));
  const rateAt = (t: number): number => {
    if (t < first) return 0;
    if (blocks.some((b) => t >= b.from && t < b.to)) return 0;
    const r = new RampupState();
    r.startedAt = first;
    for (const c of cuts) {
      if (c.at > t) break;
      r.wMax = c.top; // the curve's top (wMax less its margin), margin 0 here
      r.beta = BETA_LIMIT;
      r.cutAt = c.at;
    }
    return rampupRate(r, t, params);
  };
  // Mean over [from, to] by 10 ms steps.
  return (from, to) => {
    let sum = 0;
    let n = 0;
    for (let t = from + 5; t < to; t += 10, n++) sum += rateAt(t);
    return n ? sum / n : NaN;
  };
}

/** One rate-limited case: the host, its limit, the pages, and the targets its figures are judged by. */
interface LimitedCase {
  readonly tag: string;
  readonly title: string;
  readonly address: string;
  readonly pages: number;
  readonly limit: number;
  readonly perSeconds: number;
  readonly headers?: RateLimitHeaders;
  /** Share of the allowed rate to reach (%). */
  readonly rateTarget: number;
  /** Largest 429 share (%). */
  readonly refusedTarget: number;
  /** Engine settings beyond the shared ones. */
  readonly settings?: Record<string, unknown>;
}

const LIMITED_SETTINGS = {
  AUTOTHROTTLE_ENABLED: true,
  AUTOTHROTTLE_START_DELAY: 0.5,
  ROBOTSTXT_OBEY: false,
};

async function limited(c: LimitedCase): Promise<LimitedFigures | null> {
  const host = 'limited.test';
  const allowed = c.limit / c.perSeconds;
  const site = await startSite(c.tag, { [host]: limitedHost(c.address, c.pages, c.limit, c.perSeconds, c.headers) });
  const origin = `http://${host}:${site.ports[host]}`;
  const settings = { ...LIMITED_SETTINGS, THROTTLING_SCOPES: { [host]: { rampup: true } }, ...c.settings };
  const loadBefore = load();
  const run = await crawl(pageSeeds(origin, c.pages), settings, site.resolve);
  const blocks = await siteBlocks(site, host);
  const log = await closeSite(site);
  const f = limitedFigures(log, host, blocks);
  const toSite = (epoch: number): number => epoch - site.t0Epoch;
  const loads = `${loadBefore} before, ${load()} after`;

  const cuts = run.changes.filter((x) => x.setting === 'rampup_rate' && x.slot === host);
  const blockedUntil = run.changes.filter((x) => x.setting === 'blocked_until' && x.slot === host);
  const name = `throttling ${c.title}`;
  figure(`${name}: achieved rate`, `${fmt(f.rate, 2)} x 200/s over the crawl = ${fmt((f.rate / allowed) * 100, 1)}% of ${fmt(allowed)}/s [${loads}]`,
    Number(((f.rate / allowed) * 100).toFixed(1)), c.rateTarget, { unit: ' %' });
  figure(`${name}: 429 share`, `${fmt(f.refused)} of ${fmt(f.total)} responses = ${fmt(f.share429 * 100, 2)}% [${loads}]`,
    Number((f.share429 * 100).toFixed(2)), c.refusedTarget, { atMost: true, unit: ' %' });
  figure(`${name}: arrivals inside Retry-After`, `${fmt(f.inside.length)} requests arrived while a block the server announced was in force ` +
    `(+ ${fmt(f.onTheWire.length)} in flight when announced) [${loads}]`, f.inside.length, 0, { atMost: true });
  if (c.headers) {
    const zero = remainingZeroBlocks(log, host, c.limit, c.perSeconds, c.headers);
    const z = limitedFigures(log, host, zero);
    figure(`${name}: arrivals before a reset announced with remaining 0`, `${fmt(z.inside.length)} requests arrived before the reset of a response ` +
      `that said remaining 0 (${fmt(zero.length)} such responses; + ${fmt(z.onTheWire.length)} in flight when it was sent) [${loads}]`, z.inside.length, 0, { atMost: true });
    const notes = run.events.filter((e) => e.code === 'ratelimit-pace');
    detail(`pacing notes: ${notes.length ? notes.slice(0, 4).map((e) => `"${e.text}"`).join('; ') : 'none'}`);
  }
  detail(`${fmt(c.pages)} seeds on one host (${c.limit} requests per ${c.perSeconds} s sliding window = ${fmt(allowed)}/s, 429 + Retry-After: ${Math.ceil(c.perSeconds)}` +
    `${c.headers ? `, ${c.headers === 'ratelimit' ? 'RateLimit-Limit/-Remaining/-Reset (seconds)' : 'X-RateLimit-Limit/-Remaining/-Reset (epoch seconds)'} on every response` : ', no rate-limit headers'}, ` +
    `${LIMITED_LATENCY} ms latency, ${c.address}); settings ${JSON.stringify(settings)}; engine Crawler (no history store)`);
  printLimitedDetails(f);
  detail(`engine: ${fmt(run.stats.requests)} requests, ${countBy(run.records, (r) => String(r.status ?? r.errorKind))} in ${fmt(run.ms / 1000, 1)} s; ` +
    `${fmt(run.events.filter((e) => e.code === 'retries-exhausted').length)} pages given up after retries`);
  detail(`rampup cuts (ChangeRecords 'rampup_rate'): ${fmt(cuts.length)}` +
    (cuts.length ? ` — ${cuts.slice(0, 12).map((x) => `${fmt(toSite(x.t) / 1000 - f.firstT / 1000, 1)} s: ${fmt(x.oldValue as number, 1)}→${fmt(x.newValue as number, 1)}/s`).join(', ')}${cuts.length > 12 ? ', …' : ''}` : ''));
  detail(`delay cause after each response: ${countBy(run.records, (r) => r.delayCause)}; backoff level max ${Math.max(0, ...run.records.map((r) => r.backoffLevel))}`);
  const starts = run.records.map((r) => r.startedAt).sort((a, b) => a - b);
  const gaps = starts.slice(1).map((t, i) => t - starts[i]);
  detail(`engine start gaps: p50 ${fmt(median(gaps), 1)} ms, p10 ${fmt(percentile(gaps, 10), 1)} ms, p90 ${fmt(percentile(gaps, 90), 1)} ms`);
  if (!c.headers) {
    // RAMPUP_BACKOFF_TARGET and BACKOFF_WINDOW are left at their defaults.
    const law = rampupLaw(run, host, { target: DEFAULT_SETTINGS.RAMPUP_BACKOFF_TARGET, window: DEFAULT_SETTINGS.BACKOFF_WINDOW }, toSite);
    const lawMean = law(f.firstT, f.firstT + f.spanS * 1000);
    detail(`rampup's law (replayed from the engine's cuts and Retry-After blocks) allowed ${fmt(lawMean, 2)} requests/s on average over the same span ` +
      `(${fmt((lawMean / allowed) * 100, 1)}% of ${fmt(allowed)}/s); the engine sent ${fmt(f.total / f.spanS, 2)}/s`);
    detail(`200s/s per ${BUCKET_S} s of the site log (from the first arrival), 429s, rampup cuts and the law's mean rate in each:`);
    printTimeline(f, cuts.map((x) => toSite(x.t)), law);
  } else {
    detail(`200s/s per ${BUCKET_S} s of the site log (from the first arrival), 429s in each:`);
    printTimeline(f);
  }
  // Where the 429s fall relative to the engine's own state: which rate rampup allowed, which block it knew.
  if (f.refused > 0) {
    const r429 = run.records.filter((r) => r.status === 429);
    detail(`429s by the engine's delay cause after them: ${countBy(r429, (r) => r.delayCause)}; by retry attempt: ` +
      countBy(r429, (r) => (run.records.filter((x) => x.url === r.url && x.startedAt < r.startedAt).length === 0 ? 'first try' : 'retry')));
  }
  for (const { e, b } of f.inside.slice(0, 8)) {
    // The engine's own block at the time: the latest blocked_until it had set before this request left.
    const rec = run.records.find((r) => new URL(r.url).pathname === e.path && Math.abs(toSite(r.startedAt) - e.t) < 50);
    const sent = rec ? toSite(rec.startedAt) : NaN;
    const known = blockedUntil.filter((x) => toSite(x.t) <= sent).pop();
    detail(`  inside: ${e.path} arrived ${fmt(e.t - b.from, 1)} ms after a block was announced (block ${fmt(b.from / 1000, 3)}–${fmt(b.to / 1000, 3)} s), status ${e.status}; ` +
      (rec ? `engine sent it at ${fmt(sent / 1000, 3)} s, its own block then ${known ? `until ${fmt(toSite(known.newValue as number) / 1000, 3)} s` : 'none'}` : 'no engine record matched'));
  }
  return f;
}

const PAGES = Number(process.env.BENCH_THROTTLING_PAGES ?? 3000);
const SHORT_PAGES = Number(process.env.BENCH_THROTTLING_SHORT_PAGES ?? 200);

/** The cases of issue 17 part 3, by name (BENCH_THROTTLING_PARTS). */
const LIMITED_CASES: Record<string, LimitedCase> = {
  limited: {
    tag: 'limited', title: 'rate-limited host', address: '127.0.102.1', pages: PAGES, limit: LIMIT, perSeconds: 1,
    rateTarget: 95, refusedTarget: 1,
  },
  short: {
    tag: 'short', title: `${SHORT_PAGES} pages of a 10/s host`, address: '127.0.102.2', pages: SHORT_PAGES, limit: 10, perSeconds: 1,
    rateTarget: 85, refusedTarget: 1,
  },
  headers: {
    tag: 'headers', title: 'RateLimit-header host', address: '127.0.102.3', pages: PAGES, limit: 10 * LIMIT, perSeconds: 10, headers: 'ratelimit',
    rateTarget: 98, refusedTarget: 0,
  },
  xheaders: {
    tag: 'xheaders', title: 'X-RateLimit-header host', address: '127.0.102.4', pages: PAGES, limit: 10 * LIMIT, perSeconds: 10,
    headers: 'x-ratelimit', rateTarget: 98, refusedTarget: 0,
  },
};

// -------------------------------------------------------------------- 3b: the overloadable host

const TARGETS = [1, 2, 4];
const OVER_BASE = 20;
const OVER_PER = 20;

/**
 * Time-weighted mean in flight at the server over [from, to] (log timebase), rebuilt from the
 * log: a request is in flight from its arrival until base + per_inflight * (in_flight - 1) ms later.
 */
function meanInFlight(es: readonly LogEntry[], from: number, to: number): number {
  let area = 0;
  for (const e of es) {
    const a = Math.max(e.t, from);
    const b = Math.min(e.t + OVER_BASE + OVER_PER * (e.in_flight - 1), to);
    if (b > a) area += b - a;
  }
  return area / (to - from);
}

async function overload(): Promise<void> {
  const pages = Number(process.env.BENCH_OVERLOAD_PAGES ?? 400);
  const hostOf = (n: number): string => `over${n}.test`;
  const hosts: Record<string, HostInput> = {};
  for (const n of TARGETS) hosts[hostOf(n)] = { pages, latency_ms: { base: OVER_BASE, per_inflight: OVER_PER } };
  const site = await startSite('overload', hosts);
  const loadBefore = load();
  const rows: { n: number; mean: number; busyMean: number; max: number; run: EngineCrawl; span: number; skipped: number }[] = [];
  for (const n of TARGETS) {
    const host = hostOf(n);
    const run = await crawl(pageSeeds(`http://${host}:${site.ports[host]}`, pages), {
      AUTOTHROTTLE_ENABLED: true,
      AUTOTHROTTLE_TARGET_CONCURRENCY: n,
      AUTOTHROTTLE_START_DELAY: 0.2,
      CONCURRENT_REQUESTS_PER_DOMAIN: 16,
      ROBOTSTXT_OBEY: false,
    }, site.resolve);
    const st = await siteInFlight(site, host);
    rows.push({ n, mean: NaN, busyMean: st.mean, max: st.max, run, span: NaN, skipped: 0 });
  }
  const log = await closeSite(site);
  for (const row of rows) {
    const es = log.filter((e) => e.host === hostOf(row.n));
    // Skip the first 10% of arrivals: the warm-up from START_DELAY 0.2 down to latency / target.
    const skip = Math.floor(es.length * 0.1);
    const from = es[skip].t;
    const to = es[es.length - 1].t;
    row.mean = meanInFlight(es, from, to);
    row.span = (to - from) / 1000;
    row.skipped = skip;
  }
  const worst = Math.max(...rows.map((r) => Math.abs(r.mean / r.n - 1)));
  figure('throttling AutoThrottle mean in flight vs target (1, 2, 4)',
    rows.map((r) => `target ${r.n}: ${fmt(r.mean, 2)} (x${fmt(r.mean / r.n, 2)})`).join(', ') + `; worst deviation ${fmt(worst * 100, 1)}% ` +
    `[${loadBefore} before, ${load()} after]`,
    Number((worst * 100).toFixed(1)), 10, { atMost: true, unit: ' %' });
  detail(`${fmt(pages)} seeds per crawl on a host with latency ${OVER_BASE} ms + ${OVER_PER} ms per other request in flight; AUTOTHROTTLE_ENABLED, ` +
    `START_DELAY 0.2, CONCURRENT_REQUESTS_PER_DOMAIN 16, RANDOMIZE_DOWNLOAD_DELAY default, ROBOTSTXT_OBEY false`);
  detail(`mean in flight = time-weighted over wall time from the site log (arrival to arrival + ${OVER_BASE} + ${OVER_PER} x (in_flight - 1) ms), first 10% of arrivals skipped`);
  for (const r of rows) {
    const recs = r.run.records.filter((x) => x.status === 200);
    const lat = recs.map((x) => (x.latency ?? NaN) * 1000).filter(Number.isFinite);
    const tail = recs.slice(Math.floor(recs.length * 0.1));
    const delays = tail.map((x) => x.delayAfter * 1000);
    detail(`  target ${r.n}: mean in flight ${fmt(r.mean, 2)} over ${fmt(r.span, 1)} s (${r.skipped} arrivals skipped); ` +
      `inFlightStats (busy time only, whole crawl) mean ${fmt(r.busyMean, 2)}, max ${r.max}; ` +
      `${fmt(r.run.stats.responses)} responses in ${fmt(r.run.ms / 1000, 1)} s (${fmt(r.run.stats.responses / (r.run.ms / 1000), 1)}/s), ` +
      `engine latency p50 ${fmt(median(lat), 1)} ms, delay after warm-up p50 ${fmt(median(delays), 1)} ms`);
  }
}

// ------------------------------------------------------------------------- 3c: Scrapy beside us

const SPIDER = `# Scrapy's AutoThrottle against the rate-limited test-site host (written by throttling.bench.ts).
# argv: <base url> <pages> <start delay>; prints one JSON line of Scrapy's stats at the end.
import json, sys
import scrapy
from scrapy.crawler import CrawlerProcess

base, pages, start_delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

class Bench(scrapy.Spider):
    name = 'bench'

    def start_requests(self):
        yield scrapy.Request(base + '/', dont_filter=True)
        for i in range(1, pages):
            yield scrapy.Request('%s/page/%d' % (base, i), dont_filter=True)

    def parse(self, response):
        pass

process = CrawlerProcess(settings={
    'AUTOTHROTTLE_ENABLED': True,
    'AUTOTHROTTLE_START_DELAY': start_delay,
    'AUTOTHROTTLE_MAX_DELAY': 60.0,
    'AUTOTHROTTLE_TARGET_CONCURRENCY': 1.0,
    # The engine's defaults, set explicitly: Scrapy 2.13 changed some of its own.
    'DOWNLOAD_DELAY': 0,
    'RANDOMIZE_DOWNLOAD_DELAY': True,
    'CONCURRENT_REQUESTS': 16,
    'CONCURRENT_REQUESTS_PER_DOMAIN': 8,
    'RETRY_ENABLED': True,
    'RETRY_TIMES': 2,
    'ROBOTSTXT_OBEY': False,
    'COOKIES_ENABLED': False,
    'TELNETCONSOLE_ENABLED': False,
    'CLOSESPIDER_TIMEOUT': 900,
    'LOG_LEVEL': 'WARNING',
})
crawler = process.create_crawler(Bench)
process.crawl(crawler)
process.start()
stats = crawler.stats.get_stats()
print(json.dumps({k: v for k, v in stats.items() if isinstance(v, (int, float, str))}))
`;

/** A python3 that can import scrapy (the PATH one, else Debian's /usr/bin/python3), or null. */
function scrapyPython(): string | null {
  for (const py of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(py, ['-c', 'import scrapy; print(scrapy.__version__)'], { encoding: 'utf8' });
    if (r.status === 0) return py;
  }
  return null;
}

async function scrapy(ours: LimitedFigures | null): Promise<void> {
  const py = scrapyPython();
  if (!py) {
    console.log('throttling Scrapy AutoThrottle comparison: skipped, Scrapy is not installed (python3 -c "import scrapy" fails); ' +
      'to enable: apt-get install python3-scrapy');
    return;
  }
  const version = spawnSync(py, ['-c', 'import scrapy; print(scrapy.__version__)'], { encoding: 'utf8' }).stdout.trim();
  const host = 'limited.test';
  const pages = PAGES;
  const address = '127.0.102.5';
  const site = await startSite('scrapy', { [host]: limitedHost(address, pages) });
  const loadBefore = load();
  const spider = benchFile('./throttling-scrapy-spider.py');
  writeFileSync(spider, SPIDER);
  const started = clockNow();
  const r = spawnSync(py, [spider, `http://${address}:${site.ports[host]}`, String(pages), '0.5'], {
    encoding: 'utf8',
    timeout: 1_200_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = clockNow() - started;
  const blocks = await siteBlocks(site, host);
  const log = await closeSite(site);
  if (r.status !== 0) {
    console.log(`throttling Scrapy AutoThrottle comparison: the spider failed (${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`);
    return;
  }
  const f = limitedFigures(log, host, blocks);
  const oursText = ours ? `; ours ${fmt(ours.rate, 2)}/s (${fmt((ours.rate / LIMIT) * 100, 1)}%), 429 share ${fmt(ours.share429 * 100, 2)}%, ${ours.inside.length} inside blocks` : '';
  console.log(`throttling Scrapy ${version} AutoThrottle on the rate-limited host: ${fmt(f.rate, 2)} x 200/s (${fmt((f.rate / LIMIT) * 100, 1)}% of ${LIMIT}/s), ` +
    `429 share ${fmt(f.share429 * 100, 2)}%, ${f.inside.length} arrivals inside blocks${oursText} [${loadBefore} before, ${load()} after]`);
  detail(`Scrapy ${version} (${py}), AUTOTHROTTLE_ENABLED, START_DELAY 0.5, TARGET_CONCURRENCY 1, RETRY_TIMES 2, CONCURRENT_REQUESTS_PER_DOMAIN 8, ` +
    `against a fresh site with the same host by its address; ${fmt(ms / 1000, 1)} s`);
  printLimitedDetails(f);
  detail(`200s/s per ${BUCKET_S} s of the site log, 429s in each:`);
  printTimeline(f);
  try {
    const stats = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    detail(`Scrapy stats: ${Object.entries(stats).filter(([k]) => /status_count|retry\/|finish_reason|item|response_received/.test(k)).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  } catch {
    detail('Scrapy printed no stats line');
  }
}

/** BENCH_THROTTLING_PARTS=overload,limited,short,headers,xheaders,scrapy (default all) runs only some parts. */
const parts = (process.env.BENCH_THROTTLING_PARTS ?? 'overload,limited,short,headers,xheaders,scrapy').split(',');
try {
  if (parts.includes('overload')) await overload();
  const ours = parts.includes('limited') ? await limited(LIMITED_CASES.limited) : null;
  for (const name of ['short', 'headers', 'xheaders']) if (parts.includes(name)) await limited(LIMITED_CASES[name]);
  if (parts.includes('scrapy')) await scrapy(ours);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
