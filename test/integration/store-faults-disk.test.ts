// A disk that fills in the middle of a crawl (a real 16 MB tmpfs filled by a filler file): the
// crawl pauses and says why, resumes by itself once space is freed, and loses no row or frontier entry.

import { spawnSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl, StoreFaultError } from '../../electron/core/crawl-runner';
import { createCore } from '../../electron/core/create-core';
import type { Crawler } from '../../electron/core/engine/crawler';
import type { AppEvents } from '../../shared/contract';
import { arrivals, crawlConfig, defer, ensureBuilt, freshDir, site, sleep, waitFor, type LogSource } from './helpers';

// Loopback addresses of this file: 127.0.91.1–127.0.91.9.

beforeAll(ensureBuilt, 120_000);

/** A fresh tmpfs of `mb` MB (unmounted when the test ends), or the reason mount was refused. */
function smallDisk(mb: number): { dir: string } | { refused: string } {
  const dir = freshDir('slotscope-disk-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) return { refused: `mount -t tmpfs refused (${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}): this test needs root` };
  // Deferred after freshDir's removal, so it runs first.
  defer(() => spawnSync('umount', ['-l', dir]));
  return { dir };
}

/** Writes zeros to `file` until the filesystem is full; returns the bytes written. */
function fillDisk(file: string): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    for (;;) {
      try {
        written += writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
        throw e;
      }
    }
    // The last partial chunk: fill the remaining bytes one page at a time.
    const page = Buffer.alloc(4096);
    for (;;) {
      try {
        written += writeSync(fd, page);
      } catch {
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

function rows<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const conn = new Sqlite(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

/** What the history holds for a crawl, set against the site's own log. */
function audit(db: string, crawlId: number, s: LogSource) {
  const stored = rows<{ url: string }>(db, 'SELECT url FROM responses WHERE crawl_id = ?', crawlId);
  const served = arrivals(s);
  const key = (host: string, path: string): string => `${host}${path}`;
  const count = (keys: string[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
    return m;
  };
  const storedCounts = count(stored.map((r) => { const u = new URL(r.url); return key(u.hostname, u.pathname + u.search); }));
  const servedCounts = count(served.map((e) => key(e.host, e.path)));
  const missing: string[] = [];
  for (const [k, n] of servedCounts) if ((storedCounts.get(k) ?? 0) !== n) missing.push(`${k}: served ${n}, stored ${storedCounts.get(k) ?? 0}`);
  for (const [k, n] of storedCounts) if (!servedCounts.has(k)) missing.push(`${k}: stored ${n}, never served`);
  const frontier = rows<{ url: string; state: number }>(db, 'SELECT url, state FROM frontier WHERE crawl_id = ?', crawlId);
  const servedPages = new Set(served.filter((e) => e.path !== '/robots.txt').map((e) => key(e.host, e.path)));
  const frontierPages = new Set(frontier.map((f) => { const u = new URL(f.url); return key(u.hostname, u.pathname + u.search); }));
  const notInFrontier = [...servedPages].filter((k) => !frontierPages.has(k));
  const notDone = frontier.filter((f) => f.state !== 2);
  const status = rows<{ status: string }>(db, 'SELECT status FROM crawls WHERE id = ?', crawlId)[0]?.status;
  return { stored: stored.length, served: served.length, missing, frontier: frontier.length, notInFrontier, notDone: notDone.length, status };
}

const SITE = {
  seed: 91,
  hosts: {
    'full-a.test': { address: '127.0.91.1', pages: 300, latency_ms: 3 },
    'full-b.test': { address: '127.0.91.2', pages: 300, latency_ms: 3 },
  },
};

const SETTINGS = {
  CONCURRENT_REQUESTS_PER_DOMAIN: 2,
  DOWNLOAD_DELAY: 0.008,
  RANDOMIZE_DOWNLOAD_DELAY: false,
  AUTOTHROTTLE_ENABLED: false,
};

describe('a disk that fills mid-crawl', () => {
  it('pauses the crawl with a message, resumes it once space is freed, and records every response (runCrawl)', async ({ skip }) => {
    const disk = smallDisk(16);
    if ('refused' in disk) return skip(disk.refused);
    const s = await site(SITE);
    const db = join(disk.dir, 'history.sqlite');
    const filler = join(disk.dir, 'filler');
    const alerts: string[] = [];
    const log: string[] = [];
    let crawler: Crawler | undefined;
    const result = runCrawl({
      config: crawlConfig({
        name: 'full disk',
        seeds: [`${s.origin('full-a.test')}/`, `${s.origin('full-b.test')}/`],
        settings: SETTINGS,
        resolve: s.resolve,
      }),
      db,
      log: (l) => log.push(l),
      alert: (l: string) => alerts.push(l),
      progressEvery: 0,
      onStart: (c) => (crawler = c),
    } as Parameters<typeof runCrawl>[0]);
    result.catch(() => undefined);
    await waitFor(() => (crawler?.stats().responses ?? 0) >= 150, '150 responses', 20_000);
    const filled = fillDisk(filler);
    const filledAt = arrivals(s).length;

    // The next batch cannot be written: the crawl must pause (nothing new starts) and say why.
    let pausedAfter = -1;
    let arrivalsWhilePaused = -1;
    const paused = await waitFor(() => crawler!.status === 'paused', 'the crawl to pause for the full disk', 10_000).then(() => true, () => false);
    if (paused) {
      await sleep(300); // in-flight requests end
      pausedAfter = arrivals(s).length;
      await sleep(1500);
      arrivalsWhilePaused = arrivals(s).length - pausedAfter;
    }
    const statusWhileFull = crawler!.status;
    rmSync(filler);
    let error: Error | null = null;
    let finalStatus = '';
    try {
      finalStatus = (await result).stats.status;
    } catch (e) {
      error = e as Error;
    }
    const a = audit(db, 1, s);
    console.log(`full disk: filled ${filled} bytes after ${filledAt} arrivals; paused: ${paused} (${pausedAfter} arrivals, +${arrivalsWhilePaused} while paused); ` +
      `status while full ${statusWhileFull}; end: ${error ? `error ${error.message.slice(0, 200)}` : finalStatus}; ` +
      `${a.stored} rows for ${a.served} arrivals, ${a.missing.length} mismatches, frontier ${a.frontier} rows (${a.notDone} not done, ${a.notInFrontier.length} served pages missing), status ${a.status}; ` +
      `alerts: ${JSON.stringify(alerts)}`);

    expect(paused).toBe(true);
    expect(arrivalsWhilePaused).toBe(0);
    expect(alerts.join('\n')).toMatch(/full/i);
    expect(alerts.join('\n')).toContain(db);
    expect(alerts.join('\n')).toMatch(/resum/i);
    expect(error).toBeNull();
    expect(finalStatus).toBe('finished');
    expect(a.missing).toEqual([]);
    expect(a.stored).toBe(a.served);
    expect(a.served).toBeGreaterThan(filledAt);
    expect(a.notInFrontier).toEqual([]);
    expect(a.notDone).toBe(0);
    expect(a.status).toBe('finished');
    // The pause and the resumption are in the crawl's own log.
    const events = rows<{ kind: string; code: string; text: string }>(db, 'SELECT kind, code, text FROM events WHERE crawl_id = 1');
    expect(events.some((e) => e.code === 'store-paused' && /full/i.test(e.text))).toBe(true);
    expect(events.some((e) => e.code === 'store-resumed')).toBe(true);
  }, 60_000);

  it('in the app: a warning event says why, the crawl is paused, and crawls.resume after freeing space resumes it', async ({ skip }) => {
    const disk = smallDisk(16);
    if ('refused' in disk) return skip(disk.refused);
    const s = await site({ ...SITE, seed: 92, hosts: {
      'full-c.test': { address: '127.0.91.3', pages: 300, latency_ms: 3 },
      'full-d.test': { address: '127.0.91.4', pages: 300, latency_ms: 3 },
    } });
    const db = join(disk.dir, 'history.sqlite');
    const filler = join(disk.dir, 'filler');
    const core = await createCore({ db });
    defer(() => core.close());
    const warnings: AppEvents['warning'][] = [];
    const statuses: string[] = [];
    core.subscribe((event, payload) => {
      if (event === 'warning') warnings.push(payload as AppEvents['warning']);
      if (event === 'crawl.status') statuses.push((payload as AppEvents['crawl.status']).stats.status);
    });
    const created = await core.dispatch('crawls.create', { config: {
      name: 'full disk (app)',
      seeds: [`${s.origin('full-c.test')}/`, `${s.origin('full-d.test')}/`],
      settings: SETTINGS,
      resolve: s.resolve,
    } });
    if (!created.ok) throw new Error(created.error.message);
    const id = (created.result as { crawl: { id: number } }).crawl.id;
    const started = await core.dispatch('crawls.start', { id });
    if (!started.ok) throw new Error(started.error.message);
    const stats = async () => {
      const r = await core.dispatch('crawls.stats', { id });
      if (!r.ok) throw new Error(r.error.message);
      return r.result as { status: string; responses: number };
    };
    const t0 = Date.now();
    while ((await stats()).responses < 150) {
      if (Date.now() - t0 > 20_000) throw new Error('no 150 responses within 20 s');
      await sleep(5);
    }
    fillDisk(filler);
    let paused = false;
    const t1 = Date.now();
    while (Date.now() - t1 < 10_000) {
      if ((await stats()).status === 'paused') {
        paused = true;
        break;
      }
      await sleep(20);
    }
    await sleep(1000);
    const stillPaused = (await stats()).status === 'paused';
    rmSync(filler);
    // The user's word: resume now (the writer retries at once instead of at its next try).
    const resumed = await core.dispatch('crawls.resume', { id });
    let final = '';
    const t2 = Date.now();
    while (Date.now() - t2 < 30_000) {
      final = (await stats()).status;
      if (final === 'finished') break;
      await sleep(50);
    }
    await core.close();
    const a = audit(db, id, s);
    const warned = warnings.find((w) => w.crawlId === id && w.event.code === 'store-paused');
    const resumedWarning = warnings.find((w) => w.crawlId === id && w.event.code === 'store-resumed');
    console.log(`full disk (app): paused ${paused}, still paused after 1 s ${stillPaused}, resume ${resumed.ok ? 'ok' : JSON.stringify(resumed.error)}, ` +
      `final ${final}; ${a.stored} rows for ${a.served} arrivals, ${a.missing.length} mismatches, ${a.notDone} frontier rows not done, status ${a.status}; ` +
      `warnings: ${JSON.stringify(warnings.map((w) => `${w.event.code}: ${w.event.text}`))}`);

    expect(paused).toBe(true);
    expect(stillPaused).toBe(true);
    expect(warned?.event.text).toContain(db);
    expect(warned?.event.text).toMatch(/disk is full/);
    expect(resumedWarning?.event.text).toMatch(/can be written again/);
    expect(resumed.ok).toBe(true);
    expect(final).toBe('finished');
    expect(a.missing).toEqual([]);
    expect(a.stored).toBe(a.served);
    expect(a.notDone).toBe(0);
    expect(a.status).toBe('finished');
  }, 60_000);

  it('quitting (Ctrl-C) while the disk is full: one message, nothing marked done, and the crawl resumes later with every page recorded', async ({ skip }) => {
    const disk = smallDisk(16);
    if ('refused' in disk) return skip(disk.refused);
    const s = await site({ ...SITE, seed: 95, hosts: {
      'full-e.test': { address: '127.0.91.5', pages: 300, latency_ms: 3 },
      'full-f.test': { address: '127.0.91.6', pages: 300, latency_ms: 3 },
    } });
    const db = join(disk.dir, 'history.sqlite');
    const filler = join(disk.dir, 'filler');
    const ac = new AbortController();
    let crawler: Crawler | undefined;
    const first = runCrawl({
      config: crawlConfig({ name: 'quit on a full disk', seeds: [`${s.origin('full-e.test')}/`, `${s.origin('full-f.test')}/`], settings: SETTINGS, resolve: s.resolve }),
      db,
      signal: ac.signal,
      alert: () => undefined,
      progressEvery: 0,
      onStart: (c) => (crawler = c),
    } as Parameters<typeof runCrawl>[0]);
    first.catch(() => undefined);
    await waitFor(() => (crawler?.stats().responses ?? 0) >= 150, '150 responses', 20_000);
    fillDisk(filler);
    await waitFor(() => crawler!.status === 'paused', 'the crawl to pause for the full disk', 10_000);
    ac.abort();
    const error = await first.then(() => null, (e: Error) => e);
    const fetched = arrivals(s).length;
    expect(error).toBeInstanceOf(StoreFaultError);
    expect(error!.message).toMatch(/crawl 1 could not be saved as paused: \d+ records are not written \(cannot write the history to .*the disk is full/);
    expect(error!.message).toContain(`slotscope crawl --db ${db} --resume 1`);

    rmSync(filler);
    const before = rows<{ status: string }>(db, 'SELECT status FROM crawls WHERE id = 1')[0].status;
    const second = await runCrawl({ resume: 1, db, alert: () => undefined, progressEvery: 0 } as Parameters<typeof runCrawl>[0]);
    const a = audit(db, 1, s);
    const perPage = rows<{ url: string; n: number }>(db, `SELECT url, count(*) AS n FROM responses WHERE crawl_id = 1 GROUP BY url`);
    const servedPages = new Set(arrivals(s).filter((e) => e.path !== '/robots.txt').map((e) => `${e.host}${e.path}`));
    console.log(`quit on a full disk: ${fetched} arrivals before quitting, status left ${before}; after the resume ${a.stored} rows for ${a.served} arrivals ` +
      `(${a.served - a.stored} fetched twice: unrecorded the first time), ${perPage.filter((r) => !r.url.endsWith('/robots.txt')).length} pages with rows for ${servedPages.size} served, ${a.notDone} frontier rows not done, status ${a.status}`);
    expect(before).not.toBe('finished');
    expect(second.stats.status).toBe('finished');
    expect(a.status).toBe('finished');
    expect(a.notDone).toBe(0);
    expect(a.notInFrontier).toEqual([]);
    const pageRows = perPage.filter((r) => !r.url.endsWith('/robots.txt'));
    expect(pageRows.length).toBe(servedPages.size);
    // One row per page: those answered but not written the first time were fetched again, once.
    expect(pageRows.filter((r) => r.n !== 1)).toEqual([]);
    expect(a.stored).toBeLessThanOrEqual(a.served);
  }, 90_000);
});
