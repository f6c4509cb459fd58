// Crash-safe resume for real: `slotscope crawl` killed with SIGKILL mid-crawl and resumed, with the
// test site's own log as proof; pause + quit + reopen + resume in the core; refused databases.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { SLOT_COLUMNS, type CrawlInfo, type Reply, type SlotTuple } from '../../shared/contract';
import { createCore, type Core } from '../../electron/core/create-core';
import { LATEST_SCHEMA_VERSION } from '../../electron/core/store/migrate';
import { SLOTSCOPE_APPLICATION_ID } from '../../electron/core/store/migrations/0001-initial';
import { openHistoryReader } from '../../electron/core/store/queries';
import { FLUSH_RECORDS, openHistoryWriter } from '../../electron/core/store/history-writer';
import { OP_DONE, OP_STARTED } from '../../electron/core/store/history-protocol';
import { arrivals, CLI, defer, ensureBuilt, externalSite, freshDir, maxOverlap, ROOT, site, sleep, waitFor, type LogSource } from './helpers';

// Loopback addresses of this file: 127.0.46.x.

beforeAll(ensureBuilt, 120_000);

interface Child {
  readonly proc: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the built CLI; killed when the test ends. */
function cli(args: readonly string[]): Child {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal })));
  defer(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** Runs the CLI to its end (failing the test after `ms`). */
async function cliRun(args: readonly string[], ms = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = cli(args);
  const timer = setTimeout(() => c.proc.kill('SIGKILL'), ms);
  const { code, signal } = await c.exited;
  clearTimeout(timer);
  if (signal === 'SIGKILL') throw new Error(`slotscope ${args.join(' ')} did not end within ${ms} ms\n${c.stderr()}`);
  return { code, stdout: c.stdout(), stderr: c.stderr() };
}

/** One query on a read-only connection of its own (the crawling process may be writing). */
function query<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const conn = new Sqlite(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).raw().all(...params) as T[];
  } finally {
    conn.close();
  }
}

function tryQuery<T>(db: string, sql: string, ...params: unknown[]): T[] {
  try {
    return query<T>(db, sql, ...params);
  } catch {
    return []; // not created or not migrated yet
  }
}

/** Times each (host, path) was served, robots.txt apart. */
function fetchCounts(log: LogSource): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of log.log) {
    if (e.path === '/robots.txt') continue;
    const k = `${e.host}${e.path}`;
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

/** `host/path` of a URL like http://name:PORT/path. */
const keyOf = (url: string): string => {
  const u = new URL(url);
  return `${u.hostname}${u.pathname}${u.search}`;
};

function pagesOf(host: string, n: number): string[] {
  return [`${host}/`, ...Array.from({ length: n - 1 }, (_, i) => `${host}/page/${i + 1}`)];
}

async function ok<T>(r: Promise<Reply>): Promise<T> {
  const reply = await r;
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result as T;
}

async function openCore(db: string): Promise<Core> {
  const c = await createCore({ db });
  let closed = false;
  const close = c.close;
  (c as { close: () => Promise<void> }).close = async () => {
    if (closed) return;
    closed = true;
    await close();
  };
  defer(() => c.close());
  return c;
}

async function crawlInfo(c: Core, id: number): Promise<CrawlInfo> {
  const list = await ok<CrawlInfo[]>(c.dispatch('crawls.list', {}));
  return list.find((x) => x.id === id)!;
}

describe('kill -9 and resume', () => {
  it('resumes a SIGKILLed `slotscope crawl`: nothing done is fetched again, the crawl covers every page', async () => {
    const PAGES = 40;
    const s = await externalSite({
      seed: 46,
      hosts: {
        'one.test': { address: '127.0.46.1', pages: PAGES, latency_ms: { base: 90, jitter: 30 } },
        'two.test': { address: '127.0.46.2', pages: PAGES, latency_ms: { base: 90, jitter: 30 } },
      },
    });
    const dir = freshDir();
    const db = join(dir, 'history.sqlite');
    const config = join(dir, 'crawl.json');
    writeFileSync(config, JSON.stringify({
      name: 'kill me',
      seeds: [`${s.origin('one.test')}/`, `${s.origin('two.test')}/`],
      resolve: s.resolve,
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false },
    }));

    const first = cli(['crawl', '--config', config, '--db', db, '--quiet']);
    await waitFor(() => (tryQuery<[number]>(db, 'SELECT count(*) FROM frontier WHERE state = 2')[0]?.[0] ?? 0) >= 20,
      `20 pages done before the kill (stderr: ${first.stderr()})`, 20_000);
    first.proc.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    // What the killed process had committed.
    expect(query<[string]>(db, 'SELECT status FROM crawls WHERE id = 1')[0][0]).toBe('running');
    const atKill = query<[string, number]>(db, 'SELECT url, state FROM frontier WHERE crawl_id = 1');
    const doneAtKill = new Set(atKill.filter(([, st]) => st === 2).map(([u]) => keyOf(u)));
    const inFlightAtKill = atKill.filter(([, st]) => st === 1).length;
    expect(doneAtKill.size).toBeGreaterThanOrEqual(20);
    expect(doneAtKill.size).toBeLessThan(2 * PAGES);
    expect(inFlightAtKill).toBeLessThanOrEqual(4); // 2 hosts x 2 lanes
    // Every done mark came with its response row.
    const rowsAtKill = new Set(query<[string]>(db, `SELECT url FROM responses WHERE crawl_id = 1 AND url NOT LIKE '%/robots.txt'`).map(([u]) => keyOf(u)));
    for (const k of doneAtKill) expect(rowsAtKill.has(k), `${k} done without its response row`).toBe(true);

    // Opening the file marks the crawl interrupted (the status the UI shows); the core lists it so.
    const core = await openCore(db);
    expect(await crawlInfo(core, 1)).toMatchObject({ status: 'interrupted' });
    await core.close();

    const resumed = await cliRun(['crawl', '--db', db, '--resume', '1']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`resumed with \\d+ URLs to fetch${inFlightAtKill > 0 ? ` \\(${inFlightAtKill} were in flight` : ''}`));
    const summary = JSON.parse(resumed.stdout.trim()) as { crawl_id: number; requests: number; responses: number };
    expect(summary.crawl_id).toBe(1);

    const log = await s.finish();
    const counts = fetchCounts(log);
    // Every page of both hosts was fetched: the crawl covers the site.
    const all = [...pagesOf('one.test', PAGES), ...pagesOf('two.test', PAGES)];
    for (const p of all) expect(counts.get(p) ?? 0, p).toBeGreaterThanOrEqual(1);
    expect(counts.size).toBe(all.length);
    // Nothing done (committed) before the kill was fetched again; the rest at most twice: those in
    // flight at the kill, or answered in the last batch (<= 250 ms) that had not committed.
    const twice = [...counts].filter(([, n]) => n > 1);
    for (const [k, n] of twice) {
      expect(n, k).toBe(2);
      expect(doneAtKill.has(k), `${k} was done before the kill but fetched again`).toBe(false);
    }
    for (const k of doneAtKill) expect(counts.get(k)).toBe(1);
    // robots.txt: once per run and origin.
    for (const host of ['one.test', 'two.test']) expect(arrivals(log, host).filter((e) => e.path === '/robots.txt')).toHaveLength(2);

    // The database: finished, every page done with a 200 row; one row per fetch that got an answer.
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(reader.getCrawl(1)).toMatchObject({ status: 'finished' });
    expect(query<[number, number]>(db, 'SELECT state, count(*) FROM frontier WHERE crawl_id = 1 GROUP BY state')).toEqual([[2, all.length]]);
    const rows = reader.responses(1).filter((r) => !r.url.endsWith('/robots.txt'));
    const ok200 = new Set(rows.filter((r) => r.status === 200).map((r) => keyOf(r.url)));
    expect([...ok200].sort()).toEqual([...all].sort());
    for (const r of rows) expect(rows.filter((x) => x.url === r.url).length).toBeLessThanOrEqual(counts.get(keyOf(r.url))!);
    expect(summary.requests).toBe(reader.crawlSummary(1).requests);
  }, 90_000);

  it('gives up a URL that was in flight at two crashes instead of fetching it forever', async () => {
    const s = await externalSite({
      hosts: { 'hang.test': { address: '127.0.46.10', pages: 8, latency_ms: 20, hang: ['/page/3'] } },
    });
    const dir = freshDir();
    const db = join(dir, 'history.sqlite');
    const config = join(dir, 'crawl.json');
    writeFileSync(config, JSON.stringify({
      seeds: [`${s.origin('hang.test')}/`], resolve: s.resolve,
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.01, RANDOMIZE_DOWNLOAD_DELAY: false, DOWNLOAD_TIMEOUT: 120 },
    }));
    // State and crash count read together (one snapshot: the resume's accounting commits both at once).
    const hang = (): [number, number] | undefined => tryQuery<[number, number]>(db, `SELECT state, crashes FROM frontier WHERE url LIKE '%/page/3'`)[0];
    const hangState = (): number | undefined => hang()?.[0];
    const crashes = (): number => hang()![1];

    // Run 1: killed while /page/3 hangs (its in-flight mark committed).
    const run1 = cli(['crawl', '--config', config, '--db', db, '--quiet']);
    await waitFor(() => hangState() === 1, `/page/3 in flight (stderr: ${run1.stderr()})`, 20_000);
    run1.proc.kill('SIGKILL');
    await run1.exited;
    // Run 2: resumed, fetches /page/3 once more (crash 1), killed again while it hangs.
    const run2 = cli(['crawl', '--db', db, '--resume', '1', '--quiet']);
    await waitFor(() => hang()?.join() === '1,1', `/page/3 in flight again (stderr: ${run2.stderr()})`, 20_000);
    run2.proc.kill('SIGKILL');
    await run2.exited;
    // Run 3: /page/3 was in flight at two crashes: given up, recorded, and the crawl ends.
    const run3 = await cliRun(['crawl', '--db', db, '--resume', '1']);
    expect(run3.code, run3.stderr).toBe(0);
    expect(run3.stderr).toMatch(/gave up on http:\/\/hang\.test:\d+\/page\/3: it was in flight at two interrupted runs/);

    const log = await s.finish();
    expect(fetchCounts(log).get('hang.test/page/3')).toBe(2);
    expect(hangState()).toBe(3);
    expect(crashes()).toBe(2);
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(reader.getCrawl(1)).toMatchObject({ status: 'finished' });
    expect(reader.events(1, { kind: 'error' }).filter((e) => e.code === 'interrupted-twice').map((e) => keyOf(e.text.split(' ')[3].replace(/:$/, ''))))
      .toEqual(['hang.test/page/3']);
    // Every other page was crawled and is done (once, or again after a kill caught it in flight).
    for (const p of pagesOf('hang.test', 8).filter((p) => p !== 'hang.test/page/3')) {
      expect(fetchCounts(log).get(p), p).toBeGreaterThanOrEqual(1);
      expect(fetchCounts(log).get(p), p).toBeLessThanOrEqual(3);
    }
    expect(query<[number, number]>(db, 'SELECT state, count(*) FROM frontier GROUP BY state ORDER BY state')).toEqual([[2, 7], [3, 1]]);
  }, 90_000);
});

describe('pause, quit, reopen, resume', () => {
  it('keeps a paused crawl paused after reopening, with its live settings, pins and learned delays; resumes on command', async () => {
    const PAGES = 30;
    const s = await site({ hosts: { 'calm.test': { address: '127.0.46.20', pages: PAGES, latency_ms: { base: 15, jitter: 5 } } } });
    const db = join(freshDir(), 'history.sqlite');
    let c = await openCore(db);
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: {
        name: 'pause and quit', seeds: [`${s.origin('calm.test')}/`], resolve: s.resolve,
        settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 1,
          CONCURRENT_REQUESTS_PER_DOMAIN: 2, RANDOMIZE_DOWNLOAD_DELAY: false },
      },
    }));
    const id = crawl.id;
    await ok(c.dispatch('crawls.start', { id }));
    await waitFor(() => arrivals(s, 'calm.test', { robots: false }).length >= 10, 'ten pages', 20_000);
    // Live changes while it runs: a setting and a slot pin.
    await ok(c.dispatch('settings.update', { id, changes: { AUTOTHROTTLE_MAX_DELAY: 7 } }));
    await ok(c.dispatch('slots.pinConcurrency', { id, slot: 'calm.test', value: 1 }));
    const learned = (await ok<{ rows: SlotTuple[] }>(c.dispatch('slots.snapshot', { id }))).rows.find((r) => r[0] === 'calm.test')!;
    const delay = learned[SLOT_COLUMNS.indexOf('delay')] as number;
    expect(delay).toBeLessThan(0.2); // learned from ~15 ms latencies, well under the 0.5 s start delay
    await ok(c.dispatch('crawls.pause', { id }));
    await c.close(); // quit: in-flight requests finish, the crawl stays paused

    const servedBefore = arrivals(s).length;
    c = await openCore(db);
    expect(await crawlInfo(c, id)).toMatchObject({ status: 'paused' });
    expect((await ok<{ AUTOTHROTTLE_MAX_DELAY: number }>(c.dispatch('settings.get', { id }))).AUTOTHROTTLE_MAX_DELAY).toBe(7);
    await sleep(400);
    expect(arrivals(s).length).toBe(servedBefore); // nothing starts until resumed

    await ok(c.dispatch('crawls.resume', { id }));
    const after = (await ok<{ rows: SlotTuple[] }>(c.dispatch('slots.snapshot', { id }))).rows.find((r) => r[0] === 'calm.test')!;
    expect(after[SLOT_COLUMNS.indexOf('pinConcurrency')]).toBe(1);
    expect(after[SLOT_COLUMNS.indexOf('delay')]).toBeLessThan(0.2); // restored, not the 0.5 s start delay
    expect(after[SLOT_COLUMNS.indexOf('requests')]).toBeGreaterThanOrEqual(10); // totals continue
    const end = Date.now() + 30_000;
    while ((await crawlInfo(c, id)).status !== 'finished') {
      if (Date.now() > end) throw new Error('the resumed crawl did not finish');
      await sleep(50);
    }
    const counts = fetchCounts(s);
    expect([...counts.keys()].sort()).toEqual(pagesOf('calm.test', PAGES).sort());
    for (const [k, n] of counts) expect(n, k).toBe(1); // a graceful quit refetches nothing
    // The pin held after the resume: one request at a time from the resume on.
    const resumedPart = s.log.slice(servedBefore).filter((e) => e.path !== '/robots.txt');
    expect(resumedPart.length).toBeGreaterThan(0);
    expect(Math.max(...resumedPart.map((e) => e.in_flight))).toBe(1);
    const info = await crawlInfo(c, id);
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(info.requests).toBe(reader.crawlSummary(id).requests);
  }, 60_000);
});

describe('stop or Ctrl-C, then resume', () => {
  it('pauses `slotscope crawl` on Ctrl-C and saves it; --resume finishes it without fetching anything twice', async () => {
    const PAGES = 30;
    const s = await externalSite({ hosts: { 'ctrlc.test': { address: '127.0.46.40', pages: PAGES, latency_ms: { base: 60, jitter: 20 } } } });
    const dir = freshDir();
    const db = join(dir, 'history.sqlite');
    const config = join(dir, 'crawl.json');
    writeFileSync(config, JSON.stringify({
      seeds: [`${s.origin('ctrlc.test')}/`], resolve: s.resolve,
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false },
    }));
    const run = cli(['crawl', '--config', config, '--db', db, '--quiet']);
    await waitFor(() => (tryQuery<[number]>(db, 'SELECT count(*) FROM frontier WHERE state = 2')[0]?.[0] ?? 0) >= 8, 'eight pages done', 20_000);
    run.proc.kill('SIGINT');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(0);
    expect(run.stderr()).toMatch(/crawl 1 paused and saved; resume it with: slotscope crawl --db .* --resume 1/);
    expect(query<[string]>(db, 'SELECT status FROM crawls WHERE id = 1')[0][0]).toBe('paused');
    expect(query<[number]>(db, 'SELECT count(*) FROM frontier WHERE state = 1')[0][0]).toBe(0); // in-flight requests finished

    const resumed = await cliRun(['crawl', '--db', db, '--resume', '1', '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const counts = fetchCounts(await s.finish());
    expect([...counts.keys()].sort()).toEqual(pagesOf('ctrlc.test', PAGES).sort());
    for (const [k, n] of counts) expect(n, k).toBe(1);
    expect(query<[string]>(db, 'SELECT status FROM crawls WHERE id = 1')[0][0]).toBe('finished');
  }, 60_000);

  it('resumes a stopped crawl (SPEC 6): only the requests the stop cancelled are fetched again', async () => {
    const PAGES = 30;
    const s = await site({ hosts: { 'stop.test': { address: '127.0.46.41', pages: PAGES, latency_ms: { base: 40, jitter: 10 } } } });
    const db = join(freshDir(), 'history.sqlite');
    const c = await openCore(db);
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: { seeds: [`${s.origin('stop.test')}/`], resolve: s.resolve, settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 3, DOWNLOAD_DELAY: 0.01 } },
    }));
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    await waitFor(() => arrivals(s, 'stop.test', { robots: false }).length >= 8, 'eight pages', 20_000);
    await ok(c.dispatch('crawls.stop', { id: crawl.id }));
    // Resumed at once: the core lets the stop's bookkeeping finish first.
    await ok(c.dispatch('crawls.resume', { id: crawl.id }));
    const end = Date.now() + 30_000;
    while ((await crawlInfo(c, crawl.id)).status !== 'finished') {
      if (Date.now() > end) throw new Error('the resumed crawl did not finish');
      await sleep(50);
    }
    const counts = fetchCounts(s);
    expect([...counts.keys()].sort()).toEqual(pagesOf('stop.test', PAGES).sort());
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const cancelled = new Set(reader.responses(crawl.id).filter((r) => r.errorKind === 'cancelled').map((r) => keyOf(r.url)));
    // A cancelled request may or may not have reached the site before the stop.
    for (const [k, n] of counts) expect(n, k).toBeLessThanOrEqual(cancelled.has(k) ? 2 : 1);
    expect(cancelled.size).toBeGreaterThan(0);
  }, 60_000);
});

describe('the writer keeps what one response leads to in one transaction', () => {
  it('never sends a batch in the middle of a synchronous run, however many records it holds', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const writer = await openHistoryWriter(db);
    defer(() => writer.close());
    const crawlId = await writer.createCrawl('atomic', {}, {});
    // One synchronous run far over FLUSH_RECORDS: each "page" is a response, its done mark and a
    // link it queued, the way the crawler records them.
    const N = 3 * FLUSH_RECORDS;
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < N; i++) {
      const url = `http://atomic.test/page/${i}`;
      writer.recordQueued(crawlId, 2 * i, url, null, 0, 0, 0, 0);
      writer.recordFrontier(crawlId, OP_STARTED, 2 * i);
      writer.recordResponse(crawlId, {
        t: t0 + i, startedAt: t0 + i - 5, waitMs: 0, slot: 'atomic.test', url, method: 'GET', status: 200, latency: 0.005,
        downloadTime: 0.001, bytes: 100, inFlight: 1, delayBefore: 0, delayAfter: 0, delayCause: 'none', backoffLevel: 0,
        reused: true, errorKind: null, errorMessage: null, depth: 0, contentType: 'text/html',
      });
      writer.recordFrontier(crawlId, OP_DONE, 2 * i);
      writer.recordQueued(crawlId, 2 * i + 1, `${url}/link`, '{"download_slot":"atomic.test"}', 1, 0, 0, 0);
    }
    expect(writer.backlog).toBe(0); // nothing handed over yet: it all goes in one batch
    await writer.flush();
    const states = query<[number, number]>(db, 'SELECT state, count(*) FROM frontier WHERE crawl_id = ? GROUP BY state ORDER BY state', crawlId);
    expect(states).toEqual([[0, N], [2, N]]);
    expect(query<[number]>(db, 'SELECT count(*) FROM responses WHERE crawl_id = ?', crawlId)[0][0]).toBe(N);
    expect(query<[string]>(db, 'SELECT meta_json FROM frontier WHERE crawl_id = ? AND seq = 1', crawlId)[0][0]).toBe('{"download_slot":"atomic.test"}');
  });
});

describe('databases that cannot be used', () => {
  /** A real Slotscope database with one crawl, closed. */
  async function realDb(): Promise<string> {
    const db = join(freshDir(), 'history.sqlite');
    const c = await openCore(db);
    await ok(c.dispatch('crawls.create', { config: { seeds: ['http://127.0.46.30:1/'] } }));
    await c.close();
    return db;
  }

  function noStack(stderr: string): void {
    expect(stderr).not.toMatch(/^\s+at /m);
  }

  it('refuses a database of a newer schema version with a clear message, in the core and the CLI', async () => {
    const db = join(freshDir(), 'newer.sqlite');
    const make = new Sqlite(db);
    make.exec('CREATE TABLE crawls (id INTEGER PRIMARY KEY, future TEXT)');
    make.pragma(`application_id = ${SLOTSCOPE_APPLICATION_ID}`);
    make.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    make.close();
    const message = `database schema version ${LATEST_SCHEMA_VERSION + 1} is newer than this Slotscope (knows up to ${LATEST_SCHEMA_VERSION}); upgrade Slotscope (file: ${db})`;
    await expect(createCore({ db })).rejects.toThrow(message);
    const r = await cliRun(['crawl', '--db', db, '--resume', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    noStack(r.stderr);
  });

  it('gives a clear error for a corrupt file, and the browser host exits with it instead of restarting', async () => {
    const db = await realDb();
    const bytes = readFileSync(db);
    // Damage every page after the header page: the schema still reads, the tables do not.
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    writeFileSync(db, bytes);
    const expected = new RegExp(`${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (is corrupt|is not a Slotscope history database)`);
    await expect(createCore({ db })).rejects.toThrow(expected);
    const r = await cliRun(['crawl', '--db', db, '--resume', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(expected);
    expect(r.stderr).toMatch(/use another --db file/);
    noStack(r.stderr);
    const served = await cliRun(['serve', '--db', db, '--port', '0'], 20_000);
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(expected);
    noStack(served.stderr);
  });

  it('refuses a second Slotscope on a database in use, names the file, and takes over after the first is killed', async () => {
    const db = await realDb();
    const holder = cli(['serve', '--db', db, '--port', '0']);
    await waitFor(() => /http:\/\//.test(holder.stderr() + holder.stdout()), `the first Slotscope to serve (stderr: ${holder.stderr()})`, 20_000);
    const message = `${db} is in use by another Slotscope`;
    await expect(createCore({ db })).rejects.toThrow(message);
    const r = await cliRun(['crawl', '--db', db, '--resume', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toMatch(/wait for that crawl to end or close that Slotscope, or use another --db file/);
    noStack(r.stderr);
    // kill -9 leaves no stale lock: the OS drops it with the process.
    holder.proc.kill('SIGKILL');
    await holder.exited;
    const c = await openCore(db);
    expect((await ok<CrawlInfo[]>(c.dispatch('crawls.list', {}))).length).toBe(1);
  }, 60_000);

  it('names the file and the way out when another program holds its write lock', async () => {
    const db = await realDb();
    // Another program (here a plain better-sqlite3 script) keeps a write transaction open.
    const holder = spawn(process.execPath, ['-e', `
      const Sqlite = require('better-sqlite3');
      const db = new Sqlite(${JSON.stringify(db)});
      db.exec('BEGIN EXCLUSIVE');
      process.stdout.write('locked\\n');
      setInterval(() => {}, 1000);
    `], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    defer(() => holder.kill('SIGKILL'));
    let out = '';
    holder.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    await waitFor(() => out.includes('locked'), 'the other program to lock the file', 10_000);
    await expect(createCore({ db })).rejects.toThrow(new RegExp(`${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is locked by another program .*close the program holding it`));
  }, 30_000);
});
