// The per-second/minute/hour buckets in real SQLite files agree with the raw rows they sum up
// (written through the real worker, across batches, reopen, a simulated crash and the migration),
// and the downsampled history and the latency scatter read from them keep what charts need.

import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { HIST_BINS, LEVELS, P95_RELATIVE_ERROR, severity } from '../../electron/core/store/aggregates';
import { openHistoryWriter, type HistoryWriter } from '../../electron/core/store/history-writer';
import { migration0001, SLOTSCOPE_APPLICATION_ID } from '../../electron/core/store/migrations/0001-initial';
import { migration0002 } from '../../electron/core/store/migrations/0002-frontier';
import { chooseSpan, openHistoryReader } from '../../electron/core/store/queries';
import type { ResponseRecord } from '../../shared/types';
import { crawlConfig, defer, ensureBuilt, freshDir, site } from './helpers';
import { mulberry32 as rng } from '../../electron/core/testsite/random';

// Loopback addresses of this file: 127.0.40.x.

beforeAll(ensureBuilt, 120_000);

/** A raw response row as stored, read straight from the table. */
interface RawRow {
  id: number;
  crawl: number;
  slot: number;
  t: number;
  status: number | null;
  latency: number | null;
  failed: boolean;
  delay: number;
  bytes: number;
  inFlight: number;
}

function rawRows(file: string, crawlId: number): RawRow[] {
  const db = new Sqlite(file, { readonly: true });
  try {
    return (db.prepare(
      `SELECT id, crawl_id, slot_id, t, status, latency, error_kind IS NOT NULL, delay_after, bytes, in_flight
       FROM responses WHERE crawl_id = ? ORDER BY id`,
    ).raw().all(crawlId) as unknown[][]).map((r) => ({
      id: r[0] as number, crawl: r[1] as number, slot: r[2] as number, t: r[3] as number, status: r[4] as number | null,
      latency: r[5] as number | null, failed: r[6] === 1, delay: r[7] as number, bytes: r[8] as number, inFlight: r[9] as number,
    }));
  } finally {
    db.close();
  }
}

/** Slot key → slot id, from the slots table. */
function slotIds(file: string): Map<string, number> {
  const db = new Sqlite(file, { readonly: true });
  try {
    return new Map(db.prepare(`SELECT key, id FROM slots`).raw().all() as [string, number][]);
  } finally {
    db.close();
  }
}

type SeriesRow = Record<string, number | null | Uint8Array>;

function seriesRows(file: string, crawlId: number): SeriesRow[] {
  const db = new Sqlite(file, { readonly: true });
  try {
    return db.prepare(`SELECT * FROM series WHERE crawl_id = ? ORDER BY res_ms, slot_id, bucket`).all(crawlId) as SeriesRow[];
  } finally {
    db.close();
  }
}

/** Nearest-rank percentile of raw values. */
function nearestRank(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil(q * s.length)) - 1];
}

/** Whether a p95 estimate is within the documented error of the exact one. */
function p95Ok(estimate: number, exact: number, max: number): boolean {
  if (exact >= 512) return estimate === max;
  if (exact < 2 ** -14) return Math.abs(estimate - exact) <= 2 ** -14;
  return Math.abs(estimate - exact) <= exact * P95_RELATIVE_ERROR * (1 + 1e-9);
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Checks every stored bucket of a crawl against the raw rows: the same buckets exist, counts and
 * min/max are exact, sums equal up to rounding, p95 within its documented error, the last delay is
 * the latest row's, and each exemplar is a real row of its bucket.
 */
function expectBucketsMatchRaw(file: string, crawlId: number): void {
  const rows = rawRows(file, crawlId);
  const groups = new Map<string, RawRow[]>();
  for (const r of rows) {
    for (const res of LEVELS) {
      for (const slot of [r.slot, 0]) {
        const key = `${res}|${slot}|${Math.floor(r.t / res) * res}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = []));
        g.push(r);
      }
    }
  }
  const stored = seriesRows(file, crawlId);
  expect(stored.map((s) => `${s.res_ms}|${s.slot_id}|${s.bucket}`).sort()).toEqual([...groups.keys()].sort());
  let checkedP95 = 0;
  for (const s of stored) {
    const g = groups.get(`${s.res_ms}|${s.slot_id}|${s.bucket}`)!;
    const where = `bucket ${s.res_ms}/${s.slot_id}/${s.bucket}`;
    const lat = g.filter((r) => r.latency !== null).map((r) => r.latency!);
    const count = (f: (r: RawRow) => boolean) => g.filter(f).length;
    expect({
      where, requests: s.requests, responses: s.responses, s2xx: s.s2xx, s3xx: s.s3xx, s4xx: s.s4xx, s5xx: s.s5xx, s429: s.s429,
      failures: s.failures, latency_n: s.latency_n, latency_min: s.latency_min, latency_max: s.latency_max,
      in_flight_max: s.in_flight_max, bytes: s.bytes,
    }).toEqual({
      where, requests: g.length, responses: count((r) => r.status !== null),
      s2xx: count((r) => r.status !== null && r.status >= 200 && r.status < 300),
      s3xx: count((r) => r.status !== null && r.status >= 300 && r.status < 400),
      s4xx: count((r) => r.status !== null && r.status >= 400 && r.status < 500),
      s5xx: count((r) => r.status !== null && r.status >= 500 && r.status < 600),
      s429: count((r) => r.status === 429), failures: count((r) => r.failed), latency_n: lat.length,
      latency_min: lat.length ? Math.min(...lat) : null, latency_max: lat.length ? Math.max(...lat) : null,
      in_flight_max: Math.max(...g.map((r) => r.inFlight)), bytes: g.reduce((n, r) => n + r.bytes, 0),
    });
    expect(close(s.latency_sum as number, lat.reduce((a, b) => a + b, 0)), where).toBe(true);
    expect(close(s.delay_sum as number, g.reduce((a, r) => a + r.delay, 0)), where).toBe(true);
    expect(close(s.in_flight_sum as number, g.reduce((a, r) => a + r.inFlight, 0)), where).toBe(true);
    // The last delay: the row with the largest t (the last recorded of equal ones).
    const latest = g.reduce((a, r) => (r.t >= a.t ? r : a));
    expect(s.delay_last, where).toBe(latest.delay);
    if (lat.length > 0) {
      const exact = nearestRank(lat, 0.95);
      expect(p95Ok(s.latency_p95 as number, exact, s.latency_max as number), `${where}: p95 ${s.latency_p95} vs exact ${exact}`).toBe(true);
      checkedP95++;
      const has = (t: unknown, l: unknown, st: unknown, d: unknown) => g.some((r) => r.t === t && r.latency === l && r.status === st && r.delay === d);
      expect(has(s.max_t, s.latency_max, s.max_status, s.max_delay), `${where}: slowest exemplar`).toBe(true);
      expect(has(s.min_t, s.latency_min, s.min_status, s.min_delay), `${where}: fastest exemplar`).toBe(true);
    } else expect(s.latency_p95).toBeNull();
    const worst = Math.max(...g.map((r) => severity(r.status, r.failed)));
    expect(s.odd_sev, where).toBe(worst);
    if (worst > 0) {
      expect(g.some((r) => r.t === s.odd_t && r.latency === s.odd_latency && r.status === s.odd_status && r.delay === s.odd_delay
        && severity(r.status, r.failed) === worst), `${where}: worst-status exemplar`).toBe(true);
    }
  }
  expect(checkedP95).toBeGreaterThan(0);
}


/** Log-normal latencies around `median` seconds, with rare spikes and the histogram's end ranges. */
function latencyOf(r: () => number, median: number): number | null {
  const u = r();
  if (u < 0.01) return null;
  if (u < 0.012) return 1e-5 * (1 + r());
  if (u < 0.0125) return 600 + r() * 100;
  if (u < 0.03) return median * (20 + r() * 30);
  const n = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  return median * Math.exp(0.6 * n);
}

function statusOf(r: () => number, latency: number | null): { status: number | null; errorKind: ResponseRecord['errorKind'] } {
  if (latency === null) return { status: null, errorKind: 'timeout' };
  const u = r();
  if (u < 0.8) return { status: 200, errorKind: null };
  if (u < 0.84) return { status: 304, errorKind: null };
  if (u < 0.89) return { status: 404, errorKind: null };
  if (u < 0.93) return { status: 429, errorKind: null };
  if (u < 0.97) return { status: 503, errorKind: null };
  if (u < 0.98) return { status: 200, errorKind: 'maxsize' };
  return { status: 101, errorKind: null };
}

/** `n` responses over `seconds` from `t0`, on `slots` slots with different latencies; a few arrive late. */
function synthetic(n: number, t0: number, seconds: number, slots: readonly string[], seed: number): ResponseRecord[] {
  const r = rng(seed);
  const out: ResponseRecord[] = [];
  for (let i = 0; i < n; i++) {
    const slotIndex = Math.floor(r() * slots.length);
    let t = t0 + (i / n) * seconds * 1000 + r() * 3;
    if (r() < 0.002) t -= 1500 + r() * 70_000; // a late one, for an earlier bucket
    const latency = latencyOf(r, 0.02 * (slotIndex + 1));
    const { status, errorKind } = statusOf(r, latency);
    out.push({
      t, startedAt: t - (latency ?? 0.5) * 1000 - 1, waitMs: r() * 100, slot: slots[slotIndex], url: `https://${slots[slotIndex]}/p/${i}`,
      method: 'GET', status, latency, downloadTime: latency === null ? null : 0.001, bytes: Math.floor(r() * 5000),
      inFlight: 1 + Math.floor(r() * 8), delayBefore: 0.5, delayAfter: Math.round(r() * 4000) / 1000, delayCause: 'autothrottle',
      backoffLevel: 0, reused: true, errorKind, errorMessage: errorKind, depth: 1, contentType: 'text/html',
    });
  }
  return out;
}

async function record(writer: HistoryWriter, crawlId: number, rows: readonly ResponseRecord[], flushEvery: number): Promise<void> {
  for (let i = 0; i < rows.length; i++) {
    writer.recordResponse(crawlId, rows[i]);
    if ((i + 1) % flushEvery === 0) await writer.flush();
  }
  await writer.flush();
}

async function openWriter(file: string): Promise<HistoryWriter> {
  const w = await openHistoryWriter(file);
  defer(() => w.close());
  return w;
}

const T0 = Date.UTC(2026, 10, 22, 9, 58, 30); // 90 s before an hour starts

describe('aggregates', () => {
  it('equal the raw rows: across batches, a reopen, and late rows for closed buckets', async () => {
    const file = join(freshDir(), 'agg.sqlite');
    const rows = synthetic(24_000, T0, 2.6 * 3600, ['a.test', 'b.test', 'c.test', 'd.test'], 7);
    // A burst: seconds with hundreds of responses (wide histograms), flushed in the middle of seconds.
    const burst = synthetic(6000, T0 + 1_000_000, 20, ['a.test', 'b.test'], 8);
    rows.splice(4000, 0, ...burst.sort((x, y) => x.t - y.t));
    let writer = await openWriter(file);
    const crawlId = await writer.createCrawl('synthetic', {}, {});
    await record(writer, crawlId, rows.slice(0, 9000), 1700);
    await writer.close();
    // A new worker goes on filling the buckets the old one wrote.
    writer = await openWriter(file);
    await record(writer, crawlId, rows.slice(9000), 2500);
    expectBucketsMatchRaw(file, crawlId);

    // The chart reader's view of a stored bucket carries the same figures.
    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const stored = seriesRows(file, crawlId).find((s) => s.res_ms === 60_000 && s.slot_id !== 0 && (s.latency_n as number) > 20)!;
    const slotKey = [...slotIds(file)].find(([, id]) => id === stored.slot_id)![0];
    const point = reader.series(crawlId, { resolution: 'minute', slot: slotKey, from: stored.bucket as number, to: (stored.bucket as number) + 1 })[0];
    expect(point).toMatchObject({
      t: stored.bucket, span: 60_000, requests: stored.requests, minLatency: stored.latency_min, maxLatency: stored.latency_max,
      p95Latency: stored.latency_p95, lastDelay: stored.delay_last, maxInFlight: stored.in_flight_max,
    });
    expect(point.avgInFlight).toBeCloseTo((stored.in_flight_sum as number) / (stored.requests as number), 12);
  });

  it('are rebuilt from the raw rows after a crash left them behind, and after the migration that adds them', async () => {
    const dir = freshDir();
    // A crash: rows committed, buckets not written. Simulated by inserting rows behind the worker's back.
    const file = join(dir, 'crash.sqlite');
    let writer = await openWriter(file);
    const crawlId = await writer.createCrawl('crash', {}, {});
    const rows = synthetic(6000, T0, 600, ['x.test', 'y.test'], 11);
    await record(writer, crawlId, rows.slice(0, 4000), 1000);
    await writer.close();
    const db = new Sqlite(file);
    const slotIds = new Map((db.prepare(`SELECT key, id FROM slots WHERE crawl_id = ?`).raw().all(crawlId) as [string, number][]));
    const insert = db.prepare(
      `INSERT INTO responses (crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time, bytes, in_flight,
         delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message, depth, content_type)
       VALUES (?, ?, ?, ?, 0, ?, 'GET', ?, ?, NULL, ?, ?, 0, ?, 'floor', 0, NULL, ?, NULL, 0, NULL)`,
    );
    db.transaction(() => {
      for (const r of rows.slice(4000)) {
        insert.run(crawlId, slotIds.get(r.slot)!, r.t, r.startedAt, r.url, r.status, r.latency, r.bytes, r.inFlight, r.delayAfter, r.errorKind);
      }
    })();
    db.close();
    writer = await openWriter(file);
    expectBucketsMatchRaw(file, crawlId);
    await writer.close();
    // A database aggregated by an early schema-3 build, without the 10 s and 10 min levels: rebuilt.
    const early = new Sqlite(file);
    early.exec(`DELETE FROM series WHERE res_ms IN (10000, 600000)`);
    early.close();
    writer = await openWriter(file);
    expectBucketsMatchRaw(file, crawlId);
    await writer.close();

    // A database of schema 2 (before aggregates) with rows: opening it migrates and aggregates them.
    const old = join(dir, 'v2.sqlite');
    const v2 = new Sqlite(old);
    v2.pragma('journal_mode = WAL');
    v2.transaction(() => {
      migration0001.up(v2);
      migration0002.up(v2);
      v2.pragma('user_version = 2');
      v2.exec(`INSERT INTO crawls (id, name, config_json, settings_json, created_at) VALUES (1, 'old', '{}', '{}', 0)`);
      v2.exec(`INSERT INTO slots (id, crawl_id, key) VALUES (1, 1, 'x.test'), (2, 1, 'y.test')`);
      const ins = v2.prepare(insert.source);
      for (const r of rows) ins.run(1, r.slot === 'x.test' ? 1 : 2, r.t, r.startedAt, r.url, r.status, r.latency, r.bytes, r.inFlight, r.delayAfter, r.errorKind);
      // 0001's series rows are replaced: the migration rebuilds them with the new columns.
      v2.exec(`INSERT INTO series (crawl_id, res_ms, slot_id, bucket, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
        latency_sum, latency_n, latency_max, delay_sum, bytes) VALUES (1, 60000, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0)`);
    })();
    expect(v2.pragma('application_id', { simple: true })).toBe(SLOTSCOPE_APPLICATION_ID);
    v2.close();
    await openWriter(old);
    expectBucketsMatchRaw(old, 1);
  });

  it('stay equal to the committed rows when a batch fails and is rolled back', async () => {
    const file = join(freshDir(), 'rollback.sqlite');
    const writer = await openWriter(file);
    const errors: Error[] = [];
    writer.on('error', (e) => errors.push(e));
    const crawlId = await writer.createCrawl('rollback', {}, {});
    const rows = synthetic(17_000, T0, 300, ['a.test', 'b.test'], 13);
    await record(writer, crawlId, rows.slice(0, 3000), 3000);
    // Three batches sent back to back (the worker may write them in one transaction); the middle
    // one holds a row for a crawl that does not exist, so that batch, and only that one, is refused.
    for (const [lo, hi] of [[3000, 8000], [8000, 13_000], [13_000, 15_000]]) {
      for (let i = lo; i < hi; i++) writer.recordResponse(crawlId, rows[i]);
      if (lo === 8000) writer.recordResponse(4242, rows[lo]);
      await new Promise((r) => setImmediate(r));
    }
    await expect(writer.flush()).rejects.toThrow(/FOREIGN KEY constraint failed/);
    await record(writer, crawlId, rows.slice(15_000), 2000);
    expect(errors.map((e) => e.message)).toHaveLength(1);
    expect(rawRows(file, crawlId)).toHaveLength(rows.length - 5000);
    expectBucketsMatchRaw(file, crawlId);
  });

  it('equal the raw rows of a real AutoThrottle crawl against the test site', async () => {
    const s = await site({
      seed: 5,
      hosts: {
        'fast.test': { address: '127.0.40.1', pages: 60, latency_ms: { base: 3, jitter: 2 }, statuses: { '404': 0.1 } },
        'slow.test': { address: '127.0.40.2', pages: 40, latency_ms: { base: 30, jitter: 25 }, statuses: { '503': 0.1 } },
      },
    });
    const file = join(freshDir(), 'crawl.sqlite');
    const { summary } = await runCrawl({
      config: crawlConfig({
        name: 'aggregates',
        seeds: [`${s.origin('fast.test')}/`, `${s.origin('slow.test')}/`],
        follow: { scope: 'host' },
        settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.01, AUTOTHROTTLE_MAX_DELAY: 0.2, CONCURRENT_REQUESTS_PER_DOMAIN: 4,
          BACKOFF_HTTP_CODES: [], RANDOMIZE_DOWNLOAD_DELAY: false },
        resolve: s.resolve,
      }),
      db: file,
    });
    expect(summary.requests).toBeGreaterThan(90);
    expectBucketsMatchRaw(file, summary.crawl_id);
  });
});

describe('downsampled history', () => {
  it('returns at most maxPoints points covering the range, with the raw totals, per slot and for the whole crawl', async () => {
    const file = join(freshDir(), 'down.sqlite');
    const writer = await openWriter(file);
    const crawlId = await writer.createCrawl('down', {}, {});
    const rows = synthetic(30_000, T0, 2.5 * 3600, ['a.test', 'b.test'], 3);
    await record(writer, crawlId, rows, 10_000);
    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const all = rawRows(file, crawlId);
    const slotIdOf = slotIds(file);

    for (const { slot, maxPoints, from, to } of [
      { slot: 'a.test', maxPoints: 2000 },
      { slot: 'a.test', maxPoints: 100 },
      { slot: undefined, maxPoints: 37 },
      { slot: 'b.test', maxPoints: 500, from: T0 + 600_000, to: T0 + 4_200_000 },
      { slot: 'b.test', maxPoints: 10, from: T0 + 600_000, to: T0 + 4_200_000 },
    ] as { slot?: string; maxPoints: number; from?: number; to?: number }[]) {
      const mine = all.filter((r) => slot === undefined || r.slot === slotIdOf.get(slot));
      const first = Math.min(...mine.map((r) => r.t));
      const last = Math.max(...mine.map((r) => r.t));
      const points = reader.history(crawlId, { slot, maxPoints, from, to });
      const what = `${slot ?? 'crawl'} ≤ ${maxPoints} in [${from ?? 'start'}, ${to ?? 'end'})`;
      expect(points.length, what).toBeLessThanOrEqual(maxPoints);
      expect(points.length, what).toBeGreaterThan(Math.min(maxPoints / 5, 5));
      const span = points[0].span;
      expect(points.every((p) => p.span === span), what).toBe(true);
      expect(span % 1000, what).toBe(0);
      // The expected span: the smallest round one that fits, from second buckets up.
      expect(span).toBe(chooseSpan(from ?? Math.floor(first / 1000) * 1000, to ?? Math.floor(last / 1000) * 1000 + 1000, maxPoints, 1000));
      // Points cover the range: every raw row of it lies in one point, and the totals agree.
      const lo = from === undefined ? -Infinity : Math.floor(from / span) * span;
      const hi = to === undefined ? Infinity : Math.ceil(to / span) * span;
      const inRange = mine.filter((r) => r.t >= lo && r.t < hi);
      expect(points[0].t, what).toBeLessThanOrEqual(Math.min(...inRange.map((r) => r.t)));
      expect(points[points.length - 1].t + span, what).toBeGreaterThan(Math.max(...inRange.map((r) => r.t)));
      const sum = (f: (p: (typeof points)[number]) => number) => points.reduce((n, p) => n + f(p), 0);
      expect({ requests: sum((p) => p.requests), s2xx: sum((p) => p.s2xx), s429: sum((p) => p.s429), failures: sum((p) => p.failures),
        bytes: sum((p) => p.bytes) }, what).toEqual({
        requests: inRange.length, s2xx: inRange.filter((r) => r.status !== null && r.status >= 200 && r.status < 300).length,
        s429: inRange.filter((r) => r.status === 429).length, failures: inRange.filter((r) => r.failed).length,
        bytes: inRange.reduce((n, r) => n + r.bytes, 0),
      });
      // Each point's figures are those of its raw rows.
      for (const p of points) {
        const g = inRange.filter((r) => r.t >= p.t && r.t < p.t + span);
        const lat = g.filter((r) => r.latency !== null).map((r) => r.latency!);
        expect(p.requests, `${what} @${p.t}`).toBe(g.length);
        expect(p.maxLatency).toBe(lat.length ? Math.max(...lat) : null);
        expect(p.minLatency).toBe(lat.length ? Math.min(...lat) : null);
        if (lat.length) expect(p95Ok(p.p95Latency!, nearestRank(lat, 0.95), p.maxLatency!), `${what} @${p.t} p95`).toBe(true);
        expect(p.lastDelay).toBe(g.reduce((a, r) => (r.t >= a.t ? r : a)).delay);
        expect(p.maxInFlight).toBe(Math.max(...g.map((r) => r.inFlight)));
        expect(p.avgDelay).toBeCloseTo(g.reduce((n, r) => n + r.delay, 0) / g.length, 9);
      }
    }
    expect(HIST_BINS).toBeLessThanOrEqual(256);
  });

  it('reads hour buckets for days of history', async () => {
    const file = join(freshDir(), 'days.sqlite');
    const writer = await openWriter(file);
    const crawlId = await writer.createCrawl('days', {}, {});
    const rows = synthetic(12_000, T0, 5 * 86_400, ['slow.test'], 5);
    await record(writer, crawlId, rows, 6000);
    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const points = reader.history(crawlId, { slot: 'slow.test', maxPoints: 50 });
    expect(points.length).toBeLessThanOrEqual(50);
    expect(points[0].span % 3_600_000).toBe(0);
    expect(points.reduce((n, p) => n + p.requests, 0)).toBe(rows.length);
    expect(Math.max(...points.map((p) => p.maxLatency ?? 0))).toBe(Math.max(...rows.map((r) => r.latency ?? 0)));
  });
});

describe('latency scatter', () => {
  it('returns every response when they fit, else keeps each bucket’s slowest, fastest and worst-status response', async () => {
    const file = join(freshDir(), 'scatter.sqlite');
    const writer = await openWriter(file);
    const crawlId = await writer.createCrawl('scatter', {}, {});
    const rows = synthetic(20_000, T0, 3600, ['spiky.test', 'quiet.test'], 9);
    // Two dense bursts: 5,000 responses within 30 s, for the sub-second buckets read from raw rows.
    rows.push(...synthetic(5000, T0 + 1_800_000, 30, ['spiky.test'], 10));
    await record(writer, crawlId, rows, 10_000);
    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const spiky = rows.filter((r) => r.slot === 'spiky.test');

    // Few enough: all of them, in time order.
    const few = reader.scatter(crawlId, { slot: 'quiet.test', from: T0 + 100_000, to: T0 + 130_000, maxPoints: 2000 });
    const quiet = rows.filter((r) => r.slot === 'quiet.test' && r.t >= T0 + 100_000 && r.t < T0 + 130_000).sort((a, b) => a.t - b.t);
    expect(few).toEqual(quiet.map((r) => ({ t: r.t, latency: r.latency, status: r.status, delay: r.delayAfter })));

    for (const { from, to, maxPoints } of [
      { from: undefined, to: undefined, maxPoints: 300 }, // one-minute buckets: from the buckets' exemplars
      { from: T0 + 600_000, to: T0 + 1_500_000, maxPoints: 2000 }, // two-second buckets
      { from: T0 + 1_800_000, to: T0 + 1_830_000, maxPoints: 300 }, // 500 ms: from the raw rows
    ] as { from?: number; to?: number; maxPoints: number }[]) {
      const points = reader.scatter(crawlId, { slot: 'spiky.test', from, to, maxPoints });
      const lo = from ?? Math.floor(Math.min(...spiky.map((r) => r.t)) / 1000) * 1000;
      const hi = to ?? Math.floor(Math.max(...spiky.map((r) => r.t)) / 1000) * 1000 + 1000;
      const span = chooseSpan(lo, hi, Math.floor(maxPoints / 3), 1);
      const what = `scatter [${lo}, ${hi}) ≤ ${maxPoints}, buckets of ${span} ms`;
      expect(points.length, what).toBeLessThanOrEqual(maxPoints);
      expect(points.length, what).toBeGreaterThan(maxPoints / 4);
      expect(points.map((p) => p.t), what).toEqual([...points.map((p) => p.t)].sort((a, b) => a - b));
      const inRange = spiky.filter((r) => r.t >= lo && r.t < hi);
      const buckets = new Map<number, ResponseRecord[]>();
      for (const r of inRange) {
        const b = Math.floor(r.t / span);
        if (!buckets.has(b)) buckets.set(b, []);
        buckets.get(b)!.push(r);
      }
      const shown = (p: { t: number; latency: number | null }) => points.some((q) => q.t === p.t && q.latency === p.latency);
      for (const [b, g] of buckets) {
        const lat = g.filter((r) => r.latency !== null);
        if (lat.length > 0) {
          const max = Math.max(...lat.map((r) => r.latency!));
          const min = Math.min(...lat.map((r) => r.latency!));
          expect(lat.filter((r) => r.latency === max).some(shown), `${what}: the slowest response of bucket ${b}`).toBe(true);
          expect(lat.filter((r) => r.latency === min).some(shown), `${what}: the fastest response of bucket ${b}`).toBe(true);
        }
        const worst = Math.max(...g.map((r) => severity(r.status, r.errorKind !== null)));
        if (worst > 0) {
          expect(g.filter((r) => severity(r.status, r.errorKind !== null) === worst).some(shown), `${what}: the worst status of bucket ${b}`).toBe(true);
        }
      }
      // Every point is a real response of the slot, with its status and delay.
      for (const p of points) {
        expect(spiky.some((r) => r.t === p.t && r.latency === p.latency && r.status === p.status && r.delayAfter === p.delay), what).toBe(true);
      }
    }
  });
});
