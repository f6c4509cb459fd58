// Retention in a real SQLite file: raw samples beyond the limits are pruned in small transactions
// while the writer keeps writing; aggregates, slot summaries and warnings stay; bad settings are refused.

import Sqlite from 'better-sqlite3';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/create-core';
import { openHistoryWriter, type HistoryWriter } from '../../electron/core/store/history-writer';
import { openHistoryReader } from '../../electron/core/store/queries';
import { PRUNE_CHUNK } from '../../electron/core/store/retention';
import type { ResponseRecord } from '../../shared/types';
import { defer, ensureBuilt, freshDir } from './helpers';

beforeAll(ensureBuilt, 120_000);

const DAY = 86_400_000;

function response(t: number, slot: string, i: number): ResponseRecord {
  return {
    t, startedAt: t - 50, waitMs: 1, slot, url: `https://${slot}/p/${i}`, method: 'GET', status: i % 10 === 0 ? 503 : 200,
    latency: 0.01 + (i % 37) / 1000, downloadTime: 0.001, bytes: 100 + (i % 50), inFlight: 1 + (i % 3), delayBefore: 0.2,
    delayAfter: 0.2 + (i % 5) / 10, delayCause: 'autothrottle', backoffLevel: 0, reused: true, errorKind: null, errorMessage: null,
    depth: 1, contentType: 'text/html',
  };
}

/** Records `n` responses spread over `spanMs` from `t0`, with a debug line each `debugEvery`. */
async function fill(writer: HistoryWriter, crawlId: number, t0: number, n: number, spanMs: number, slots: string[], debugEvery = 10): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = t0 + Math.floor((i / n) * spanMs);
    const slot = slots[i % slots.length];
    writer.recordResponse(crawlId, response(t, slot, i));
    if (i % debugEvery === 0) writer.recordEvent(crawlId, { t, slot, kind: 'debug', code: 'autothrottle', text: `line ${i}` });
  }
  await writer.flush();
}

function query<T>(file: string, sql: string, ...args: unknown[]): T[] {
  const db = new Sqlite(file, { readonly: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}

const count = (file: string, sql: string, ...args: unknown[]) => Object.values(query<Record<string, number>>(file, sql, ...args)[0])[0];

describe('retention', () => {
  it('prunes raw rows older than rawMaxAgeDays in small transactions while batches go on, and keeps every aggregate', async () => {
    const file = join(freshDir(), 'retention.sqlite');
    const writer = await openHistoryWriter(file);
    defer(() => writer.close());
    const now = Date.now();
    const a = await writer.createCrawl('a', {}, {});
    const b = await writer.createCrawl('b', {}, {});
    const c = await writer.createCrawl('c', {}, {});
    await fill(writer, a, now - 10 * DAY, 30_000, 3_600_000, ['a1.test', 'a2.test']);
    await fill(writer, a, now - DAY, 2000, 600_000, ['a1.test', 'a2.test']);
    await fill(writer, b, now - 9 * DAY, 500, 60_000, ['b.test']);
    writer.recordEvent(a, { t: now - 10 * DAY, slot: 'a1.test', kind: 'warning', code: 'w', text: 'an old warning' });
    writer.recordChange(a, { t: now - 10 * DAY, slot: null, setting: 'DOWNLOAD_DELAY', source: 'user', oldValue: 0, newValue: 1 });
    await writer.flush();

    const series = (crawl: number) => query(file, `SELECT * FROM series WHERE crawl_id = ? ORDER BY res_ms, slot_id, bucket`, crawl);
    const slotStats = (crawl: number) => query(file, `SELECT * FROM slot_stats WHERE crawl_id = ? ORDER BY slot_id`, crawl);
    const before = { seriesA: series(a), seriesB: series(b), statsA: slotStats(a), statsB: slotStats(b) };
    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const historyBefore = reader.history(a, { slot: 'a1.test', maxPoints: 500 });
    const oldHour = { slot: 'a1.test', from: now - 10 * DAY, to: now - 10 * DAY + 3_600_000, maxPoints: 300 };
    const scatterBefore = reader.scatter(a, oldHour);
    expect(scatterBefore.length).toBeGreaterThan(100);

    expect(await writer.setRetention({ rawMaxAgeDays: 7 })).toEqual({ rawMaxAgeDays: 7, rawMaxRowsPerCrawl: null, secondsMaxAgeDays: null });
    // The pass it started deletes 30,500 rows PRUNE_CHUNK at a time; a batch sent meanwhile is
    // written between two chunks, not after the whole pass.
    let flushed = false;
    const queued = writer.prune().then((r) => ({ r, flushedFirst: flushed }));
    await fill(writer, c, now, 300, 10_000, ['c.test']);
    flushed = true;
    const { r: second, flushedFirst } = await queued;
    expect(flushedFirst).toBe(true);
    expect(second).toEqual({ responses: 0, debugEvents: 0, secondBuckets: 0 }); // the first pass took them all
    expect(30_500 / PRUNE_CHUNK).toBeGreaterThan(10);

    expect(count(file, `SELECT count(*) FROM responses WHERE crawl_id = ?`, a)).toBe(2000);
    expect(count(file, `SELECT min(t) FROM responses WHERE crawl_id = ?`, a)).toBeGreaterThanOrEqual(now - DAY);
    expect(count(file, `SELECT count(*) FROM responses WHERE crawl_id = ?`, b)).toBe(0);
    expect(count(file, `SELECT count(*) FROM responses WHERE crawl_id = ?`, c)).toBe(300);
    expect(count(file, `SELECT count(*) FROM events WHERE kind = 'debug' AND t < ?`, now - 7 * DAY)).toBe(0);
    expect(count(file, `SELECT count(*) FROM events WHERE kind = 'debug' AND crawl_id = ?`, a)).toBe(200);
    expect(count(file, `SELECT count(*) FROM events WHERE kind = 'warning'`)).toBe(1);
    expect(count(file, `SELECT count(*) FROM changes`)).toBe(1);
    // Aggregates and slot summaries are untouched: charts still show the pruned period.
    expect({ seriesA: series(a), seriesB: series(b), statsA: slotStats(a), statsB: slotStats(b) }).toEqual(before);
    expect(reader.history(a, { slot: 'a1.test', maxPoints: 500 })).toEqual(historyBefore);
    // The latency scatter of the pruned hour still shows each bucket's slowest, fastest and worst response.
    expect(reader.scatter(a, oldHour)).toEqual(scatterBefore);
    expect(reader.scatter(a, { ...oldHour, maxPoints: 100_000 }).length).toBeLessThanOrEqual(3 * 3600);
    expect(reader.slotSummaries(b)[0].requests).toBe(500);
  });

  it('keeps only the newest rawMaxRowsPerCrawl rows of each crawl, and drops per-second buckets after secondsMaxAgeDays', async () => {
    const file = join(freshDir(), 'rows.sqlite');
    const writer = await openHistoryWriter(file);
    defer(() => writer.close());
    const now = Date.now();
    const a = await writer.createCrawl('a', {}, {});
    const b = await writer.createCrawl('b', {}, {});
    // Many rows share a millisecond: the cut is exact in (t, id) order.
    await fill(writer, a, now - 20 * DAY, 3000, 700, ['a.test'], 1);
    await fill(writer, b, now - 20 * DAY, 800, 60_000, ['b.test'], 1);
    const newest = query<{ id: number }>(file, `SELECT id FROM responses WHERE crawl_id = ? ORDER BY t DESC, id DESC LIMIT 1000`, a).map((r) => r.id);

    await writer.setRetention({ rawMaxRowsPerCrawl: 1000 });
    expect(await writer.prune()).toEqual({ responses: 0, debugEvents: 0, secondBuckets: 0 });
    expect(query<{ id: number }>(file, `SELECT id FROM responses WHERE crawl_id = ? ORDER BY t DESC, id DESC`, a).map((r) => r.id)).toEqual(newest);
    expect(count(file, `SELECT count(*) FROM responses WHERE crawl_id = ?`, b)).toBe(800);

    const reader = openHistoryReader(file);
    defer(() => reader.close());
    const minutes = query(file, `SELECT * FROM series WHERE crawl_id = ? AND res_ms > 1000 ORDER BY res_ms, slot_id, bucket`, b);
    expect(count(file, `SELECT count(*) FROM series WHERE crawl_id = ? AND res_ms = 1000`, b)).toBeGreaterThan(0);
    expect(await writer.setRetention({ rawMaxAgeDays: 10, secondsMaxAgeDays: 15 })).toEqual({ rawMaxAgeDays: 10, rawMaxRowsPerCrawl: 1000, secondsMaxAgeDays: 15 });
    await writer.prune();
    expect(count(file, `SELECT count(*) FROM series WHERE res_ms = 1000 AND bucket < ?`, now - 15 * DAY)).toBe(0);
    expect(count(file, `SELECT count(*) FROM responses`)).toBe(0);
    expect(query(file, `SELECT * FROM series WHERE crawl_id = ? AND res_ms > 1000 ORDER BY res_ms, slot_id, bucket`, b)).toEqual(minutes);
    // The history of the pruned period comes from coarser buckets, with every response counted.
    const points = reader.history(b, { slot: 'b.test' });
    expect(points.length).toBeGreaterThan(0);
    expect(points.every((p) => p.span % 10_000 === 0)).toBe(true);
    expect(points.reduce((n, p) => n + p.requests, 0)).toBe(800);
  });

  it('store.retention.set refuses bad values naming the field, the value and what is allowed, and applies nothing', async () => {
    const db = join(freshDir(), 'core.sqlite');
    const core = await createCore({ db });
    let open = true;
    defer(() => (open ? core.close() : undefined));
    const get = async () => (await core.dispatch('store.retention.get', {}));
    expect(await get()).toEqual({ ok: true, result: { rawMaxAgeDays: null, rawMaxRowsPerCrawl: null, secondsMaxAgeDays: null } });

    const refused = async (params: unknown, field: string, ...words: string[]) => {
      const r = await core.dispatch('store.retention.set', params);
      expect(r.ok, JSON.stringify(params)).toBe(false);
      if (r.ok) return;
      expect(r.error.code).toBe('invalid');
      expect(r.error.field).toBe(field);
      for (const w of words) expect(r.error.message).toContain(w);
    };
    await refused({ rawMaxAgeDays: -1 }, 'rawMaxAgeDays', 'rawMaxAgeDays: -1 is not allowed', 'a number of days > 0');
    await refused({ rawMaxAgeDays: '7' }, 'rawMaxAgeDays', '"7"');
    await refused({ rawMaxRowsPerCrawl: 1.5 }, 'rawMaxRowsPerCrawl', '1.5', 'a whole number >= 1');
    await refused({ keepForever: true }, 'keepForever', 'a retention setting: rawMaxAgeDays, rawMaxRowsPerCrawl, secondsMaxAgeDays');
    await refused({ rawMaxAgeDays: 10, secondsMaxAgeDays: 5 }, 'secondsMaxAgeDays', 'secondsMaxAgeDays: 5', '>= rawMaxAgeDays (10)');
    await refused({ rawMaxAgeDays: 3, rawMaxRowsPerCrawl: 0 }, 'rawMaxRowsPerCrawl', '0');
    expect(await get()).toEqual({ ok: true, result: { rawMaxAgeDays: null, rawMaxRowsPerCrawl: null, secondsMaxAgeDays: null } });

    expect(await core.dispatch('store.retention.set', { rawMaxAgeDays: 30, secondsMaxAgeDays: 90 }))
      .toEqual({ ok: true, result: { rawMaxAgeDays: 30, rawMaxRowsPerCrawl: null, secondsMaxAgeDays: 90 } });
    await refused({ rawMaxAgeDays: 120 }, 'rawMaxAgeDays', 'a number of days <= secondsMaxAgeDays (90)');
    expect(await core.dispatch('store.retention.set', { secondsMaxAgeDays: null, rawMaxAgeDays: null, rawMaxRowsPerCrawl: 5_000_000 }))
      .toEqual({ ok: true, result: { rawMaxAgeDays: null, rawMaxRowsPerCrawl: 5_000_000, secondsMaxAgeDays: null } });
    open = false;
    await core.close();
    // Kept with the database.
    const again = await createCore({ db });
    defer(() => again.close());
    expect(await again.dispatch('store.retention.get', {})).toEqual({ ok: true, result: { rawMaxAgeDays: null, rawMaxRowsPerCrawl: 5_000_000, secondsMaxAgeDays: null } });
  });
});
