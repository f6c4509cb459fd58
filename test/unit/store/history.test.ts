// Writer → worker → SQLite → reader round trips with real files: every field intact, flush()
// really commits, big batches, summaries and series, and errors that surface instead of hanging.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeRecord, EventRecord, ResponseRecord } from '../../../shared/types';
import {
  openHistoryWriter, resolveWorkerFile, type HistoryWriter,
} from '../../../electron/core/store/history-writer';
import { openHistoryReader } from '../../../electron/core/store/queries';
import { buildStoreBundle, freshDir, sampleResponse, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

async function openPair(): Promise<{ file: string; writer: HistoryWriter }> {
  const file = join(freshDir(), 'history.sqlite');
  const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile });
  return { file, writer };
}

describe('HistoryWriter + HistoryReader', () => {
  it('round-trips responses, changes, events and crawl rows with every field intact', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('round trip', { seeds: ['https://a.example/'] }, { DOWNLOAD_DELAY: 1 }, 1_000);
    expect(crawlId).toBe(1);

    const responses: ResponseRecord[] = [
      sampleResponse(0),
      sampleResponse(1, { reused: false, contentType: null }),
      sampleResponse(2, {
        status: null, latency: null, downloadTime: null, bytes: 0, reused: null,
        errorKind: 'timeout', errorMessage: 'Timed out after 180 s', delayCause: 'backoff', backoffLevel: 3,
      }),
      sampleResponse(3, { status: 429, method: 'HEAD', latency: 0, downloadTime: 0, delayCause: 'retry-after' }),
      sampleResponse(4, { status: 200, errorKind: 'maxsize', errorMessage: 'body over 1 MB', url: 'https://ü.example/ñ?x=☃' }),
      sampleResponse(5, { slot: 'host0.example', t: 1_700_000_000_000.5, waitMs: 0, delayBefore: 0, delayAfter: 0, delayCause: 'none' }),
    ];
    const changes: ChangeRecord[] = [
      { t: 10, slot: null, setting: 'DOWNLOAD_DELAY', source: 'user', oldValue: 1, newValue: 2.5 },
      { t: 11, slot: 'host1.example', setting: 'delay', source: 'autothrottle', oldValue: 0.5, newValue: 0.75 },
      { t: 12, slot: 'new-slot.example', setting: 'paused', source: 'user', oldValue: undefined, newValue: true },
      { t: 13, slot: null, setting: 'AUTOTHROTTLE_TARGET_CONCURRENCY', source: 'config', oldValue: null, newValue: { a: [1, 'x'] } },
    ];
    const events: EventRecord[] = [
      { t: 20, slot: 'host1.example', kind: 'debug', code: 'autothrottle', text: 'slot: host1.example | conc: 1 | delay: 750 ms' },
      { t: 21, slot: null, kind: 'warning', code: 'robots-crawl-delay', text: 'Crawl-delay ignored', data: { delay: 10 } },
      { t: 22, slot: 'host2.example', kind: 'error', code: 'dns', text: 'ENOTFOUND', data: null },
    ];
    for (const r of responses) writer.recordResponse(crawlId, r);
    for (const c of changes) writer.recordChange(crawlId, c);
    for (const e of events) writer.recordEvent(crawlId, e);
    writer.updateCrawl(crawlId, { status: 'finished', startedAt: 1_700_000_000_000 - 2_000, finishedAt: 1_700_000_000_100, summary: { ok: true } });
    await writer.flush();

    const reader = openHistoryReader(file);
    const sorted = [...responses].sort((a, b) => a.t - b.t);
    expect(reader.responses(crawlId)).toEqual(sorted);
    // Exact shape, not just toEqual's lenient undefined handling.
    expect(Object.keys(reader.responses(crawlId)[0]).sort()).toEqual(Object.keys(responses[0]).sort());
    expect([...reader.eachResponse(crawlId)]).toEqual(sorted);

    const gotChanges = reader.changes(crawlId);
    expect(gotChanges).toEqual(changes);
    expect('oldValue' in gotChanges[2] && gotChanges[2].oldValue === undefined).toBe(true);
    expect(gotChanges[3].oldValue).toBeNull();

    const gotEvents = reader.events(crawlId);
    expect(gotEvents).toEqual(events);
    expect('data' in gotEvents[0]).toBe(false);
    expect(gotEvents[2].data).toBeNull();

    expect(reader.listCrawls()).toEqual([
      { id: 1, name: 'round trip', status: 'finished', createdAt: 1_000, startedAt: 1_699_999_998_000, finishedAt: 1_700_000_000_100 },
    ]);
    expect(reader.getCrawl(crawlId)).toMatchObject({
      config: { seeds: ['https://a.example/'] }, settings: { DOWNLOAD_DELAY: 1 }, summary: { ok: true },
    });
    expect(reader.getCrawl(99)).toBeUndefined();

    expect(reader.crawlSummary(crawlId)).toEqual({
      crawl_id: crawlId,
      requests: 6,
      responses: 5,
      by_status: { '200': 4, '429': 1 },
      failures: 2,
      slots: 5,
      seconds: 2.1,
    });
    reader.close();
    await writer.close();
  });

  it('round-trips a batch of 70 varied responses (two 32-row INSERTs and six single ones) with every field, consecutive ids and the buckets covering them all', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('many', {}, {});
    const variants: Partial<ResponseRecord>[] = [
      {},
      { reused: false, contentType: null },
      { status: null, latency: null, downloadTime: null, bytes: 0, reused: null, errorKind: 'timeout', errorMessage: 'Timed out', delayCause: 'backoff', backoffLevel: 3 },
      { status: 429, method: 'HEAD', latency: 0, downloadTime: 0, delayCause: 'retry-after', attempt: 2 },
      { errorKind: 'maxsize', errorMessage: 'body over 1 MB', url: 'https://ü.example/ñ?x=☃' },
      { waitMs: 0, delayBefore: 0, delayAfter: 0, delayCause: 'none', depth: 7 },
    ];
    const responses = Array.from({ length: 70 }, (_, i) => sampleResponse(i, variants[i % variants.length]));
    for (const r of responses) writer.recordResponse(crawlId, r);
    await writer.flush();
    const reader = openHistoryReader(file);
    // attempt is stored but not read back by responses(): compared in SQL below.
    expect(reader.responses(crawlId)).toEqual(responses.map(({ attempt: _, ...r }) => r));
    reader.close();
    const db = new Sqlite(file, { readonly: true });
    expect(db.prepare('SELECT attempt FROM responses WHERE crawl_id = ? ORDER BY t').pluck().all(crawlId)).toEqual(responses.map((r) => r.attempt ?? 0));
    const ids = db.prepare('SELECT id FROM responses WHERE crawl_id = ? ORDER BY t').pluck().all(crawlId) as number[];
    expect(ids).toEqual(Array.from({ length: 70 }, (_, i) => ids[0] + i));
    expect(db.prepare('SELECT covered_id FROM series_state WHERE id = 1').pluck().get()).toBe(ids[69]);
    expect(db.prepare('SELECT sum(requests) FROM series WHERE crawl_id = ? AND res_ms = 1000 AND slot_id = 0').pluck().get(crawlId)).toBe(70);
    db.close();
    await writer.close();
  });

  it('flush() commits: a separate reader sees nothing before and everything after', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('flush', {}, {});
    const reader = openHistoryReader(file);
    for (let i = 0; i < 100; i++) writer.recordResponse(crawlId, sampleResponse(i));
    writer.recordEvent(crawlId, { t: 1, slot: null, kind: 'info', code: 'x', text: 'y' });
    expect(reader.responses(crawlId)).toHaveLength(0); // still buffered on the main thread
    await writer.flush();
    expect(reader.responses(crawlId)).toHaveLength(100);
    expect(reader.events(crawlId)).toHaveLength(1);
    expect(writer.backlog).toBe(0);
    reader.close();
    await writer.close();
  });

  it('sends buffered records on its own within the flush interval', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('timer', {}, {});
    const reader = openHistoryReader(file);
    writer.recordResponse(crawlId, sampleResponse(1));
    const deadline = Date.now() + 3_000;
    while (reader.responses(crawlId).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(reader.responses(crawlId)).toHaveLength(1);
    reader.close();
    await writer.close();
  });

  it('a flush of the rows only commits them and leaves the buckets to their timer; a plain flush writes both', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('rows', {}, {});
    // The first batch's buckets go out on their timer (its first write is due at once); the next are within its 5 s.
    writer.recordResponse(crawlId, sampleResponse(0, { slot: 's0.example' }));
    await writer.flush({ wait: true, rows: true });
    for (let i = 1; i < 50; i++) writer.recordResponse(crawlId, sampleResponse(i, { slot: `s${i % 5}.example` }));
    await writer.flush({ wait: true, rows: true });
    const db = new Sqlite(file, { readonly: true });
    const covered = () => db.prepare('SELECT covered_id FROM series_state WHERE id = 1').pluck().get() as number;
    const rows = () => db.prepare('SELECT count(*) FROM responses WHERE crawl_id = ?').pluck().get(crawlId) as number;
    const maxId = () => db.prepare('SELECT max(id) FROM responses').pluck().get() as number;
    expect(rows()).toBe(50);
    expect(covered(), 'buckets written by a rows-only flush').toBeLessThan(maxId());
    await writer.flush();
    expect(covered()).toBe(maxId());
    db.close();
    await writer.close();
  });

  it('writeAggregatesNow() writes the buckets in memory without a flush (a crawl that has ended, before its final flush)', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('buckets', {}, {});
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 10; i++) writer.recordResponse(crawlId, sampleResponse(i, { t: t0 + i * 100 }));
    await writer.flush();
    const db = new Sqlite(file, { readonly: true });
    const stored = (): number =>
      db.prepare('SELECT coalesce(sum(requests), 0) FROM series WHERE crawl_id = ? AND res_ms = 3600000 AND slot_id = 0').pluck().get(crawlId) as number;
    const committed = (): number => db.prepare('SELECT count(*) FROM responses WHERE crawl_id = ?').pluck().get(crawlId) as number;
    expect(stored()).toBe(10);
    // Sent by the flush timer: committed, but buckets are written at most every AGGREGATE_WRITE_MS (5 s).
    for (let i = 10; i < 30; i++) writer.recordResponse(crawlId, sampleResponse(i, { t: t0 + i * 100 }));
    const deadline = Date.now() + 3_000;
    while (committed() < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(committed()).toBe(30);
    expect(stored()).toBe(10);
    writer.writeAggregatesNow();
    const until = Date.now() + 2_000;
    while (stored() < 30 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(stored()).toBe(30);
    db.close();
    await writer.close();
  });

  it('stores 100k responses across 1,000 slots', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('big', {}, {});
    writer.updateCrawl(crawlId, { status: 'running', startedAt: 1_700_000_000_000 });
    const statuses = [200, 200, 200, 301, 404, 429, 500];
    for (let i = 0; i < 100_000; i++) {
      const failed = i % 50 === 0;
      writer.recordResponse(crawlId, sampleResponse(i, {
        slot: `s${i % 1000}.example`,
        status: failed ? null : statuses[i % statuses.length],
        errorKind: failed ? 'connect-refused' : null,
        latency: failed ? null : 0.2,
      }));
    }
    await writer.flush();
    const reader = openHistoryReader(file);
    const summary = reader.crawlSummary(crawlId);
    expect(summary.requests).toBe(100_000);
    expect(summary.failures).toBe(2_000);
    expect(summary.responses).toBe(98_000);
    expect(Object.values(summary.by_status).reduce((a, b) => a + b, 0)).toBe(98_000);
    expect(summary.slots).toBe(1000);
    expect(summary.seconds).toBeCloseTo(999.99, 6);

    const slots = reader.slotSummaries(crawlId);
    expect(slots).toHaveLength(1000);
    expect(slots.every((s) => s.requests === 100)).toBe(true);
    const s7 = slots.find((s) => s.slot === 's7.example')!;
    const raw7 = reader.responses(crawlId, { slot: 's7.example' });
    expect(raw7).toHaveLength(100);
    expect(s7).toEqual({
      slot: 's7.example',
      requests: 100,
      responses: raw7.filter((r) => r.status !== null).length,
      s2xx: raw7.filter((r) => r.status !== null && r.status < 300).length,
      s3xx: raw7.filter((r) => r.status === 301).length,
      s4xx: raw7.filter((r) => r.status === 404 || r.status === 429).length,
      s5xx: raw7.filter((r) => r.status === 500).length,
      s429: raw7.filter((r) => r.status === 429).length,
      failures: raw7.filter((r) => r.errorKind !== null).length,
      avgLatency: expect.closeTo(0.2, 10),
      lastLatency: 0.2,
      lastDelay: 0.75,
      lastT: raw7[99].t,
      bytes: raw7.reduce((a, r) => a + r.bytes, 0),
      lastCause: raw7[99].delayCause,
      lastBackoffLevel: raw7[99].backoffLevel,
    });
    expect(reader.responses(crawlId, { limit: 10 })).toHaveLength(10);
    reader.close();
    await writer.close();
  }, 60_000);

  it("keeps each slot's latest delay cause and backoff level, across batches and rows out of order, and fills them in when migrating", async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('causes', {}, {});
    const slot = 'host0.example';
    // Batch 1: the latest row is a backoff at level 2; batch 2 brings only older rows, then a newer pin.
    writer.recordResponse(crawlId, sampleResponse(10, { slot, delayCause: 'floor', backoffLevel: 0 }));
    writer.recordResponse(crawlId, sampleResponse(30, { slot, delayCause: 'backoff', backoffLevel: 2 }));
    writer.recordResponse(crawlId, sampleResponse(20, { slot, delayCause: 'retry-after', backoffLevel: 1 }));
    await writer.flush();
    const reader = openHistoryReader(file);
    const last = () => reader.slotSummaries(crawlId).map((x) => [x.slot, x.lastCause, x.lastBackoffLevel]);
    expect(last()).toEqual([[slot, 'backoff', 2]]);
    writer.recordResponse(crawlId, sampleResponse(25, { slot, delayCause: 'crawl-delay', backoffLevel: 3 }));
    await writer.flush();
    expect(last()).toEqual([[slot, 'backoff', 2]]);
    writer.recordResponse(crawlId, sampleResponse(40, { slot, delayCause: 'pin', backoffLevel: 0 }));
    await writer.flush();
    expect(last()).toEqual([[slot, 'pin', 0]]);
    reader.close();
    await writer.close();

    // The same database as schema 3 wrote it (no such columns): opening it fills them from the rows.
    const old = new Sqlite(file);
    old.exec(`ALTER TABLE slot_stats DROP COLUMN last_cause; ALTER TABLE slot_stats DROP COLUMN last_backoff;
      DROP INDEX responses_odd; ALTER TABLE responses DROP COLUMN attempt;
      ALTER TABLE slot_stats DROP COLUMN retries; ALTER TABLE slot_stats DROP COLUMN robots; ALTER TABLE slot_stats DROP COLUMN depth_max;
      ALTER TABLE crawls DROP COLUMN shared_json`);
    old.pragma('user_version = 3');
    old.close();
    const again = await openHistoryWriter(file, { workerFile: bundle.workerFile });
    const reread = openHistoryReader(file);
    expect(reread.slotSummaries(crawlId).map((x) => [x.slot, x.lastCause, x.lastBackoffLevel])).toEqual([[slot, 'pin', 0]]);
    reread.close();
    await again.close();
  });

  it('filters responses, changes and events, and builds chart series', async () => {
    const { file, writer } = await openPair();
    const a = await writer.createCrawl('a', {}, {});
    const b = await writer.createCrawl('b', {}, {});
    const t0 = 1_700_000_080_000; // 40 s into a minute
    for (let i = 0; i < 120; i++) {
      writer.recordResponse(a, sampleResponse(i, { t: t0 + i * 500, slot: i % 2 ? 'odd' : 'even', latency: i % 2 ? 1 : 0.5, status: i % 3 ? 200 : 503 }));
    }
    writer.recordResponse(b, sampleResponse(0, { slot: 'odd' }));
    writer.recordChange(a, { t: t0, slot: 'odd', setting: 'delay', source: 'backoff', oldValue: 1, newValue: 2 });
    writer.recordChange(a, { t: t0 + 1, slot: null, setting: 'CONCURRENT_REQUESTS', source: 'user', oldValue: 8, newValue: 16 });
    writer.recordEvent(a, { t: t0, slot: 'odd', kind: 'warning', code: 'w', text: 'w' });
    writer.recordEvent(a, { t: t0 + 1, slot: 'even', kind: 'debug', code: 'd', text: 'd' });
    writer.recordEvent(a, { t: t0 + 2, slot: null, kind: 'debug', code: 'd', text: 'd2' });
    await writer.flush();
    const reader = openHistoryReader(file);

    expect(reader.responses(a)).toHaveLength(120);
    expect(reader.responses(b)).toHaveLength(1);
    expect(reader.responses(a, { slot: 'odd' }).every((r) => r.slot === 'odd')).toBe(true);
    expect(reader.responses(a, { slot: 'odd' })).toHaveLength(60);
    expect(reader.responses(a, { slot: 'nope' })).toEqual([]);
    const window = reader.responses(a, { from: t0 + 1000, to: t0 + 3000 });
    expect(window.map((r) => r.t)).toEqual([t0 + 1000, t0 + 1500, t0 + 2000, t0 + 2500]);
    expect(reader.responses(a, { slot: 'even', from: t0 + 1000, limit: 2 }).map((r) => r.t)).toEqual([t0 + 1000, t0 + 2000]);

    expect(reader.changes(a, { slot: 'odd' })).toHaveLength(1);
    expect(reader.changes(a, { slot: null }).map((c) => c.setting)).toEqual(['CONCURRENT_REQUESTS']);
    expect(reader.events(a, { kind: 'debug' }).map((e) => e.text)).toEqual(['d', 'd2']);
    expect(reader.events(a, { kind: 'debug', slot: 'even' }).map((e) => e.text)).toEqual(['d']);
    expect(reader.events(a, { slot: null }).map((e) => e.text)).toEqual(['d2']);
    expect(reader.events(a, { slot: 'odd' }).map((e) => e.kind)).toEqual(['warning']);
    // The log view's tail: the latest events, oldest first; without latest, the first ones.
    const texts = reader.events(a).map((e) => e.text);
    expect(texts.length).toBeGreaterThan(2);
    expect(reader.events(a, { limit: 2, latest: true }).map((e) => e.text)).toEqual(texts.slice(-2));
    expect(reader.events(a, { limit: 2 }).map((e) => e.text)).toEqual(texts.slice(0, 2));
    expect(reader.events(a, { kind: 'debug', limit: 1, latest: true }).map((e) => e.text)).toEqual(['d2']);
    expect(reader.events(a, { kind: 'debug', slot: 'even', limit: 5, latest: true }).map((e) => e.text)).toEqual(['d']);

    // 120 responses every 500 ms from second 40: 60 seconds of 2, split 40/80 over two minutes.
    const seconds = reader.series(a, { resolution: 'second' });
    expect(seconds).toHaveLength(60);
    expect(seconds[0]).toMatchObject({ t: t0, requests: 2, responses: 2, avgLatency: 0.75, maxLatency: 1 });
    const minutes = reader.series(a, { resolution: 'minute' });
    expect(minutes.map((p) => [p.t, p.requests])).toEqual([[t0 - 40_000, 40], [t0 + 20_000, 80]]);
    expect(minutes.reduce((n, p) => n + p.s5xx, 0)).toBe(40);
    expect(minutes.reduce((n, p) => n + p.s2xx, 0)).toBe(80);
    expect(reader.series(a, { resolution: 'minute', slot: 'odd' }).map((p) => p.requests)).toEqual([20, 40]);
    const oddSeconds = reader.series(a, { resolution: 'second', slot: 'odd' });
    expect(oddSeconds).toHaveLength(60);
    expect(oddSeconds.every((p) => p.requests === 1 && p.avgLatency === 1 && p.avgDelay === 0.75)).toBe(true);
    expect(reader.series(a, { resolution: 'second', from: t0 + 10_500, to: t0 + 12_000 }).map((p) => p.t)).toEqual([t0 + 10_000, t0 + 11_000]);
    expect(reader.series(a, { resolution: 'second', slot: 'odd', from: t0 + 10_500, to: t0 + 12_000 }).map((p) => p.t)).toEqual([t0 + 10_000, t0 + 11_000]);
    reader.close();
    await writer.close();
  });

  it('reports a failed batch through flush() and the error event, and keeps working', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('ok', {}, {});
    const errors: Error[] = [];
    writer.on('error', (e) => errors.push(e));

    writer.recordResponse(crawlId, sampleResponse(1));
    writer.recordResponse(4242, sampleResponse(2)); // no such crawl: the whole batch rolls back
    await expect(writer.flush()).rejects.toThrow(/history batch of 2 records not saved: FOREIGN KEY constraint failed/);
    expect(errors).toHaveLength(1);

    writer.updateCrawl(777, { status: 'running' });
    await expect(writer.flush()).rejects.toThrow('updateCrawl(777) failed: updateCrawl: no crawl with id 777');

    writer.recordResponse(crawlId, sampleResponse(3));
    writer.recordChange(crawlId, { t: 1, slot: 'host3.example', setting: 'delay', source: 'user', oldValue: 1, newValue: 2 });
    await writer.flush();
    const reader = openHistoryReader(file);
    expect(reader.responses(crawlId).map((r) => r.url)).toEqual([sampleResponse(3).url]);
    expect(reader.changes(crawlId, { slot: 'host3.example' })).toHaveLength(1);
    reader.close();
    await writer.close();
  });

  it('a batch refused inside a 32-row INSERT leaves nothing behind for the next batch', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('ok', {}, {});
    writer.on('error', () => undefined);
    for (let i = 0; i < 40; i++) writer.recordResponse(i === 10 ? 4242 : crawlId, sampleResponse(i));
    await expect(writer.flush()).rejects.toThrow(/history batch of 40 records not saved: FOREIGN KEY constraint failed/);
    for (let i = 100; i < 140; i++) writer.recordResponse(crawlId, sampleResponse(i));
    await writer.flush();
    const reader = openHistoryReader(file);
    expect(reader.responses(crawlId).map((r) => r.url)).toEqual(Array.from({ length: 40 }, (_, k) => sampleResponse(100 + k).url));
    reader.close();
    await writer.close();
  });

  it('never hangs when the worker dies: pending promises reject and recording throws', async () => {
    const { writer } = await openPair();
    const crawlId = await writer.createCrawl('doomed', {}, {});
    const errors: Error[] = [];
    writer.on('error', (e) => errors.push(e));
    writer.recordResponse(crawlId, sampleResponse(1));
    const flushed = writer.flush();
    // Kill the thread from outside, as a native crash or OOM would.
    await (writer as unknown as { worker: Worker }).worker.terminate();
    await expect(flushed).rejects.toThrow(/history worker exited unexpectedly/);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/exited unexpectedly/)]);
    expect(() => writer.recordResponse(crawlId, sampleResponse(2))).toThrow(/exited unexpectedly/);
    await expect(writer.flush()).rejects.toThrow(/exited unexpectedly/);
    await expect(writer.close()).rejects.toThrow(/exited unexpectedly/);
  });

  it('close() commits what is buffered and then refuses new records', async () => {
    const { file, writer } = await openPair();
    const crawlId = await writer.createCrawl('close', {}, {});
    for (let i = 0; i < 10; i++) writer.recordResponse(crawlId, sampleResponse(i));
    await writer.close();
    await writer.close();
    await writer.flush();
    expect(() => writer.recordResponse(crawlId, sampleResponse(11))).toThrow('HistoryWriter is closed');
    await expect(writer.createCrawl('x', {}, {})).rejects.toThrow('HistoryWriter is closed');
    const reader = openHistoryReader(file);
    expect(reader.responses(crawlId)).toHaveLength(10);
    reader.close();
  });

  it('asks for `npm run build` when the worker bundle is missing', () => {
    const root = freshDir();
    writeFileSync(join(root, 'package.json'), '{}');
    mkdirSync(join(root, 'electron/core/store'), { recursive: true });
    const moduleUrl = pathToFileURL(join(root, 'electron/core/store/history-writer.js')).href;
    expect(() => resolveWorkerFile(moduleUrl)).toThrow(/dist\/history-worker\.js is missing; run `npm run build`/);
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist/history-worker.js'), '');
    expect(resolveWorkerFile(moduleUrl).href).toBe(pathToFileURL(join(root, 'dist/history-worker.js')).href);
    writeFileSync(join(root, 'electron/core/store/history-worker.js'), '');
    expect(resolveWorkerFile(moduleUrl).href).toBe(pathToFileURL(join(root, 'electron/core/store/history-worker.js')).href);
  });
});
