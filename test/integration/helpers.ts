// Shared set-up for the integration tier: the real engine against the real test site over
// loopback, with the site's own request log as ground truth and helpers to read it.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { parseCrawlConfig, type CrawlConfig } from '../../electron/core/engine/crawl-config';
import { Crawler, type CrawlStats } from '../../electron/core/engine/crawler';
import { startTestSite, type LogEntry, type ScenarioInput, type TestSite } from '../../electron/core/testsite';
import type { ChangeRecord, CrawlStatus, EventRecord, ResponseRecord } from '../../shared/types';

/** The repository root (where package.json is). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'dist', 'cli.js');

// ---------------------------------------------------------------------------------------------
// Clean-up: everything a test opens is closed when it ends, last opened first.

const stack: (() => unknown)[] = [];

/** Runs `fn` when the current test ends (LIFO with the other deferred clean-ups). */
export function defer(fn: () => unknown): void {
  if (stack.length === 0) {
    onTestFinished(async () => {
      while (stack.length > 0) {
        const f = stack.pop()!;
        try {
          await f();
        } catch {
          /* clean-up is best effort */
        }
      }
    });
  }
  stack.push(fn);
}

/** A new empty folder, removed when the current test ends. */
export function freshDir(prefix = 'slotscope-int-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every 5 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

// ---------------------------------------------------------------------------------------------
// Build: the history worker and the CLI run from dist/.

/**
 * Runs `node build/build.mjs --if-needed`, serialized across test files with a lock folder so
 * two parallel files never rewrite dist/ at once.
 */
export async function ensureBuilt(): Promise<void> {
  const lockRoot = join(ROOT, '.tmp');
  mkdirSync(lockRoot, { recursive: true });
  const lock = join(lockRoot, 'integration-build.lock');
  const end = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than two minutes was left by a killed run.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmdirSync(lock);
      } catch {
        /* gone already */
      }
      if (Date.now() > end) throw new Error(`build lock ${lock} held for too long`);
      await sleep(100);
    }
  }
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'build/build.mjs'), '--if-needed'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`build failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  } finally {
    rmdirSync(lock);
  }
  if (!existsSync(CLI) || !existsSync(join(ROOT, 'dist', 'history-worker.js'))) throw new Error('dist/ was not built');
}

// ---------------------------------------------------------------------------------------------
// The test site and its log.

/** Starts the test site with its log kept in memory; closed when the test ends. */
export async function site(scenario: ScenarioInput): Promise<TestSite> {
  const s = await startTestSite(scenario, { keepLog: true });
  defer(() => s.close());
  return s;
}

/** Anything with a test-site request log: an in-process TestSite or a finished external one. */
export interface LogSource {
  readonly log: readonly LogEntry[];
}

/** The site's log entries for `host` (every host when omitted), in arrival order. */
export function arrivals(s: LogSource, host?: string, opts: { robots?: boolean } = {}): LogEntry[] {
  const robots = opts.robots ?? true;
  return s.log
    .filter((e) => (host === undefined || e.host === host) && (robots || e.path !== '/robots.txt'))
    .sort((a, b) => a.t - b.t);
}

/** Gaps (ms) between consecutive arrivals. */
export function gaps(entries: readonly { t: number }[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < entries.length; i++) out.push(entries[i].t - entries[i - 1].t);
  return out;
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Most intervals open at once; an interval ending exactly when another starts does not overlap it. */
export function maxOverlap(intervals: readonly (readonly [number, number])[]): number {
  const points: [number, number][] = [];
  for (const [a, b] of intervals) {
    points.push([a, 1], [b, -1]);
  }
  points.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let cur = 0;
  let max = 0;
  for (const [, d] of points) {
    cur += d;
    if (cur > max) max = cur;
  }
  return max;
}

/** Paths fetched per host, counting repeats: `host → path → times`. */
export function pathCounts(s: LogSource): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const e of s.log) {
    let m = out.get(e.host);
    if (!m) out.set(e.host, (m = new Map()));
    m.set(e.path, (m.get(e.path) ?? 0) + 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The engine.

/** Parses a crawl config (resolve map of the site added), failing the test with its errors when refused. */
export function crawlConfig(input: Record<string, unknown>, seedText?: string): CrawlConfig {
  const r = parseCrawlConfig(input, seedText);
  if (!r.ok) throw new Error(`crawl config refused:\n${r.errors.map((e) => e.message).join('\n')}`);
  return r.config;
}

/** A running crawl with everything its sinks reported. */
export interface CrawlRun {
  readonly crawler: Crawler;
  readonly records: ResponseRecord[];
  readonly changes: ChangeRecord[];
  readonly events: EventRecord[];
  readonly statuses: CrawlStatus[];
  /** Resolves with the final stats; rejects if the crawl has not ended within the time limit. */
  readonly done: Promise<CrawlStats>;
}

export interface LaunchOptions {
  readonly random?: () => number;
  /** Called after each response is recorded. */
  readonly onResponse?: (r: ResponseRecord, run: CrawlRun) => void;
  /** Milliseconds before `done` rejects (default 30 s). */
  readonly limitMs?: number;
}

/** Creates and starts a crawler; it is closed when the test ends. */
export function launch(config: CrawlConfig, opts: LaunchOptions = {}): CrawlRun {
  const records: ResponseRecord[] = [];
  const changes: ChangeRecord[] = [];
  const events: EventRecord[] = [];
  const statuses: CrawlStatus[] = [];
  let run: CrawlRun | undefined;
  const crawler = new Crawler({
    config,
    random: opts.random,
    sinks: {
      onResponse: (r) => {
        records.push(r);
        if (run) opts.onResponse?.(r, run);
      },
      onChange: (c) => changes.push(c),
      onEvent: (e) => events.push(e),
      onStatus: (s) => statuses.push(s),
    },
  });
  defer(() => crawler.close());
  const limitMs = opts.limitMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const done = Promise.race([
    crawler.done,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const s = crawler.stats();
        reject(new Error(`crawl did not end within ${limitMs} ms (status ${s.status}, ${s.requests} requests, ${s.inFlight} in flight, ${s.queued} queued)`));
      }, limitMs);
    }),
  ]).finally(() => clearTimeout(timer));
  done.catch(() => undefined);
  run = { crawler, records, changes, events, statuses, done };
  crawler.start();
  return run;
}

/** Runs a crawl to its end. */
export async function crawl(config: CrawlConfig, opts: LaunchOptions = {}): Promise<CrawlRun & { stats: CrawlStats }> {
  const run = launch(config, opts);
  const stats = await run.done;
  return { ...run, stats };
}

/** Path and query of a URL. */
export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** Host name of a URL. */
export function hostOfUrl(url: string): string {
  return new URL(url).hostname;
}

/** The site log entry of the request a record describes (each URL is fetched once in these tests). */
export function entryFor(s: LogSource, r: ResponseRecord): LogEntry {
  const host = hostOfUrl(r.url);
  const path = pathOf(r.url);
  const found = s.log.filter((e) => e.host === host && e.path === path);
  if (found.length !== 1) throw new Error(`expected one site log entry for ${r.url}, found ${found.length}`);
  return found[0];
}

// ---------------------------------------------------------------------------------------------
// Other loopback servers.

/** A port on `address` that nothing listens on (bound once, then closed). */
export async function deadPort(address: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, address, r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * A tiny real HTTP server serving fixed HTML pages (path → body), for link structures the test
 * site cannot make (links to other hosts). Everything else is a 404. Closed when the test ends.
 */
export async function linkHub(address: string, pages: Record<string, string>): Promise<{ port: number; served: string[] }> {
  const served: string[] = [];
  const server: Server = createServer((req, res) => {
    served.push(req.url ?? '');
    const body = pages[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, address, r));
  defer(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return { port: (server.address() as { port: number }).port, served };
}

/** One gap between consecutive requests of a host, seen by the site and by the engine. */
export interface Gap {
  /** Arrival gap at the site (ms). */
  readonly site: number;
  /** Gap between the engine's recorded starts (hand-over to the HTTP client, ms). */
  readonly engine: number;
  /**
   * How much later than the host's quickest request (start to arrival) the earlier request
   * arrived, in ms: connection set-up, or the process not being scheduled. The site gap is short
   * by that much through no fault of the scheduler.
   */
  readonly earlierLateBy: number;
  readonly url: string;
}

/** Site gaps are checked only after requests that arrived within this much of the quickest transit. */
export const ON_TIME_MS = 1;

/**
 * Gaps between consecutive requests of `host`, in arrival order, pairing each site log entry with
 * its engine record. SPEC 1 defines the delay between *starts*; the site sees start + transit, and
 * a gap after a request whose transit was long (a new connection, a busy machine) is shorter by the
 * extra transit. So the start gaps are checked everywhere, the arrival gaps after on-time requests.
 */
export function hostGaps(s: LogSource, records: readonly ResponseRecord[], host: string): Gap[] {
  const mine = records.filter((r) => hostOfUrl(r.url) === host);
  const byKey = new Map(mine.map((r) => [pathOf(r.url), r]));
  const log = arrivals(s, host);
  if (log.length !== mine.length) throw new Error(`${host}: ${log.length} arrivals but ${mine.length} records`);
  const pairs = log.map((e) => {
    const r = byKey.get(e.path);
    if (!r) throw new Error(`${host}: the site served ${e.path} but the engine recorded no request for it`);
    return { e, r, offset: e.t - r.startedAt };
  });
  const quickest = Math.min(...pairs.map((p) => p.offset));
  const out: Gap[] = [];
  for (let i = 1; i < pairs.length; i++) {
    const a = pairs[i - 1];
    const b = pairs[i];
    out.push({ site: b.e.t - a.e.t, engine: b.r.startedAt - a.r.startedAt, earlierLateBy: a.offset - quickest, url: b.r.url });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The test site in a process of its own (`slotscope testsite`), for timing checks: its arrival
// times are then not delayed by the crawler's own event loop, as an in-process site's can be.

/** A test site running in its own process; its log is read once it has been closed. */
export interface ExternalSite {
  /** `http://name:PORT` of a host (pair with `resolve`). */
  origin(host: string): string;
  readonly resolve: Readonly<Record<string, string>>;
  /** Stops the site (SIGTERM, which flushes its log) and returns the log, in arrival order. */
  finish(): Promise<LogSource>;
}

/** Starts `slotscope testsite` (dist/cli.js: call ensureBuilt first) on a scenario; killed when the test ends. */
export async function externalSite(scenario: ScenarioInput): Promise<ExternalSite> {
  const dir = freshDir('slotscope-site-');
  const config = join(dir, 'scenario.json');
  const logFile = join(dir, 'requests.jsonl');
  writeFileSync(config, JSON.stringify(scenario));
  const child = spawn(process.execPath, [CLI, 'testsite', '--config', config, '--log', logFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  defer(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await waitFor(() => stdout.includes('\n') || child.exitCode !== null, 'the test site to be ready', 15_000);
  if (!stdout.includes('\n')) throw new Error(`slotscope testsite failed: ${stderr}`);
  const ready = JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as { ready: boolean; hosts: Record<string, string> };
  const ports: Record<string, string> = {};
  const resolve: Record<string, string> = {};
  for (const [name, base] of Object.entries(ready.hosts)) {
    ports[name] = new URL(base).port;
    const input = Object.entries(scenario.hosts).find(([k]) => k.toLowerCase() === name)?.[1];
    resolve[name] = input?.address ?? '127.0.0.1';
  }
  let finished: Promise<LogSource> | undefined;
  return {
    resolve,
    origin(host: string): string {
      const port = ports[host.toLowerCase()];
      if (port === undefined) throw new Error(`external test site: unknown host ${host}`);
      return `http://${host.toLowerCase()}:${port}`;
    },
    finish(): Promise<LogSource> {
      finished ??= (async () => {
        child.kill('SIGTERM');
        const code = await exited;
        if (code !== 0) throw new Error(`slotscope testsite exited with ${code}: ${stderr}`);
        const text = readFileSync(logFile, 'utf8').trim();
        const log = text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as LogEntry);
        return { log };
      })();
      return finished;
    },
  };
}
