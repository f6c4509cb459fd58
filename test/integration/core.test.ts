// The core through its one entry point, dispatch, as every host calls it: crawls created,
// started, steered and deleted against the real test site and a real SQLite file.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AppEvents, EventName, Reply, SlotTuple } from '../../shared/contract';
import { SLOT_COLUMNS } from '../../shared/contract';
import { createCore, type Core } from '../../electron/core/create-core';
import { openHistoryReader } from '../../electron/core/store/queries';
import { arrivals, defer, ensureBuilt, freshDir, gaps, site, sleep, waitFor } from './helpers';

async function core(): Promise<{ c: Core; events: { event: EventName; payload: unknown; at: number }[]; db: string }> {
  await ensureBuilt();
  const db = join(freshDir(), 'core.sqlite');
  const c = await createCore({ db });
  const events: { event: EventName; payload: unknown; at: number }[] = [];
  c.subscribe((event, payload) => events.push({ event, payload, at: Date.now() }));
  let closed = false;
  defer(async () => {
    if (!closed) await c.close();
  });
  const close = c.close;
  (c as { close: () => Promise<void> }).close = async () => {
    closed = true;
    await close();
  };
  return { c, events, db };
}

async function ok<T>(r: Promise<Reply>): Promise<T> {
  const reply = await r;
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.result as T;
}

const col = (name: (typeof SLOT_COLUMNS)[number]) => SLOT_COLUMNS.indexOf(name);

describe('core dispatch', () => {
  it('creates, lists, starts and finishes a crawl; streams slot rows and status', async () => {
    const s = await site({ hosts: { 'core.test': { address: '127.0.22.1', pages: 12, latency_ms: 5 } } });
    const { c, events } = await core();
    const created = await ok<{ crawl: { id: number; status: string }; seedErrors: { line: number }[] }>(c.dispatch('crawls.create', {
      config: { name: 'core', seeds: [`${s.origin('core.test')}/`, 'not a url'], resolve: s.resolve,
        settings: { RANDOMIZE_DOWNLOAD_DELAY: false, DOWNLOAD_DELAY: 0.02 } },
    }));
    expect(created.crawl.status).toBe('created');
    expect(created.seedErrors.map((e) => e.line)).toEqual([2]);
    const id = created.crawl.id;
    expect((await ok<{ id: number }[]>(c.dispatch('crawls.list', {}))).map((x) => x.id)).toEqual([id]);
    await ok(c.dispatch('crawls.start', { id }));
    await waitFor(() => events.some((e) => e.event === 'crawl.status' && (e.payload as AppEvents['crawl.status']).stats.status === 'finished'), 'the crawl to finish', 20_000);
    const updates = () => events.filter((e) => e.event === 'slots.update').map((e) => e.payload as AppEvents['slots.update']);
    // The final rows follow on the next tick (at most 100 ms after the end).
    // (requests count when they start: a row with 13 may still have the last one in flight.)
    await waitFor(() => updates().some((u) => u.rows.some((r) => r[0] === 'core.test' && r[col('requests')] === 13 && r[col('inFlight')] === 0)), 'the final slot row', 2000);
    const last = updates().at(-1)!.rows.find((r) => r[0] === 'core.test')!;
    expect(last[col('requests')]).toBe(13); // 12 pages + robots.txt
    expect(last[col('s2xx')]).toBe(12);
    // Coalesced: at most about 10 updates per second while the crawl runs (an ended crawl's last rows go
    // out at once, before its final status, so that one may follow the last tick closely).
    const times = events.filter((e) => e.event === 'slots.update').map((e) => e.at).slice(0, -1);
    for (const g of gaps(times.map((t) => ({ t })))) expect(g).toBeGreaterThanOrEqual(80);
    const list = await ok<{ status: string; responses: number }[]>(c.dispatch('crawls.list', {}));
    expect(list[0]).toMatchObject({ status: 'finished', responses: 13 });
    expect(events.some((e) => e.event === 'crawls.changed')).toBe(true);
  });

  it('gives a waiting slot the time of its next start, and sends its row again only when the slot changes', async () => {
    const s = await site({ hosts: { 'wait.test': { address: '127.0.22.7', pages: 4, latency_ms: 2 } } });
    const { c, events, db } = await core();
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: { seeds: [1, 2, 3].map((i) => `${s.origin('wait.test')}/page/${i}`), follow: { scope: 'none' }, resolve: s.resolve,
        settings: { RANDOMIZE_DOWNLOAD_DELAY: false, DOWNLOAD_DELAY: 1.2, ROBOTSTXT_OBEY: false, AUTOTHROTTLE_ENABLED: false } },
    }));
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    await waitFor(() => arrivals(s, 'wait.test').length >= 2, 'the second request', 10_000);
    await sleep(50); // its response, and a tick
    await c.close();
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const [first, second] = reader.responses(crawl.id).sort((a, b) => a.startedAt - b.startedAt);
    // The slot's rows computed after its first response and before its second request started (engine clock).
    const rows = events.filter((e) => e.event === 'slots.update').map((e) => e.payload as AppEvents['slots.update'])
      .flatMap((u) => u.rows.filter((r) => r[0] === 'wait.test').map((r) => ({ r, now: u.now })))
      .filter(({ now }) => now > first.t && now < second.startedAt);
    // About 1.1 s of waiting at 10 ticks a second, and the unchanged row was sent once, not every tick.
    // The second request is handed to the HTTP client up to the handover lead before its recorded
    // start (the write is held until then), so a tick inside that lead may show the slot active.
    const states = rows.map(({ r }) => r[col('state')]);
    expect(states[0]).toBe('waiting');
    expect(states.slice(1)).toEqual(states.length > 1 ? ['active'] : []);
    // A time, not a countdown: 1.2 s after the first request went out (its hand-over to the HTTP
    // client plus the connection set-up, from which the delay counts), when the second did start.
    const at = rows[0].r[col('nextStartAt')] as number;
    expect(at - first.startedAt).toBeGreaterThanOrEqual(1199.5);
    expect(at - first.startedAt).toBeLessThan(1300);
    expect(second.startedAt).toBeGreaterThanOrEqual(at - 1);
    expect(second.startedAt - at).toBeLessThan(50);
    expect(rows[0].now).toBeLessThan(at);
  });

  it('changes settings of a running crawl at the next decision; a refused change applies nothing', async () => {
    const s = await site({ hosts: { 'live.test': { address: '127.0.22.2', pages: 30, latency_ms: 2 } } });
    const { c } = await core();
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: { seeds: Array.from({ length: 25 }, (_, i) => `${s.origin('live.test')}/page/${i + 1}`), follow: { scope: 'none' }, resolve: s.resolve,
        settings: { RANDOMIZE_DOWNLOAD_DELAY: false, DOWNLOAD_DELAY: 0.02, ROBOTSTXT_OBEY: false } },
    }));
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    await waitFor(() => arrivals(s, 'live.test').length >= 4, 'some requests', 10_000);
    const refused = await c.dispatch('settings.update', { id: crawl.id, changes: { DOWNLOAD_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 0 } });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid', field: 'AUTOTHROTTLE_TARGET_CONCURRENCY' } });
    expect((await ok<{ DOWNLOAD_DELAY: number }>(c.dispatch('settings.get', { id: crawl.id }))).DOWNLOAD_DELAY).toBe(0.02);
    const at = performance.timeOrigin + performance.now();
    const applied = await ok<{ changed: string[] }>(c.dispatch('settings.update', { id: crawl.id, changes: { DOWNLOAD_DELAY: 0.2 } }));
    expect(applied.changed).toEqual(['DOWNLOAD_DELAY']);
    await waitFor(() => arrivals(s, 'live.test').length >= 10, 'more requests', 10_000);
    await ok(c.dispatch('crawls.stop', { id: crawl.id }));
    const log = arrivals(s, 'live.test');
    const before = log.filter((e) => s.startedAt + e.t < at);
    const after = log.slice(before.length + 1);
    expect(after.length).toBeGreaterThanOrEqual(3);
    for (const g of gaps(after)) expect(g).toBeGreaterThan(190);
    const changes = await ok<{ setting: string; oldValue: unknown; newValue: unknown; source: string }[]>(c.dispatch('log.changes', { id: crawl.id }));
    expect(changes).toContainEqual(expect.objectContaining({ setting: 'DOWNLOAD_DELAY', oldValue: 0.02, newValue: 0.2, source: 'user' }));
  });

  it('pauses and resumes one slot, pins and resets it, returning its row', async () => {
    const s = await site({ hosts: {
      'p1.test': { address: '127.0.22.3', pages: 40, latency_ms: 2 },
      'p2.test': { address: '127.0.22.4', pages: 40, latency_ms: 2 },
    } });
    const { c } = await core();
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: { seeds: [`${s.origin('p1.test')}/`, `${s.origin('p2.test')}/`], resolve: s.resolve,
        settings: { RANDOMIZE_DOWNLOAD_DELAY: false, DOWNLOAD_DELAY: 0.05 } },
    }));
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    await waitFor(() => arrivals(s, 'p1.test').length >= 3, 'p1 requests', 10_000);
    const row = await ok<SlotTuple>(c.dispatch('slots.pause', { id: crawl.id, slot: 'p1.test' }));
    expect(row[col('state')]).toBe('paused');
    await sleep(100);
    const frozen = arrivals(s, 'p1.test').length;
    const p2 = arrivals(s, 'p2.test').length;
    await sleep(400);
    expect(arrivals(s, 'p1.test').length).toBe(frozen);
    expect(arrivals(s, 'p2.test').length).toBeGreaterThan(p2);
    const pinned = await ok<SlotTuple>(c.dispatch('slots.pinDelay', { id: crawl.id, slot: 'p1.test', seconds: 0.3 }));
    expect([pinned[col('pinDelay')], pinned[col('delay')], pinned[col('cause')]]).toEqual([0.3, 0.3, 'pin']);
    expect(await c.dispatch('slots.pinConcurrency', { id: crawl.id, slot: 'p1.test', value: 0 })).toMatchObject({ ok: false, error: { code: 'invalid', field: 'value' } });
    await ok(c.dispatch('slots.resume', { id: crawl.id, slot: 'p1.test' }));
    await waitFor(() => arrivals(s, 'p1.test').length > frozen, 'p1 to resume', 5000);
    const cleared = await ok<SlotTuple>(c.dispatch('slots.clearPins', { id: crawl.id, slot: 'p1.test' }));
    expect(cleared[col('pinDelay')]).toBeNull();
    const snap = await ok<{ columns: string[]; rows: SlotTuple[] }>(c.dispatch('slots.snapshot', { id: crawl.id }));
    expect(snap.rows.map((r) => r[0]).sort()).toEqual(['p1.test', 'p2.test']);
    await ok(c.dispatch('crawls.stop', { id: crawl.id }));
  });

  it('answers bad requests with errors naming the field, and refuses what the state forbids', async () => {
    const s = await site({ hosts: { 'e.test': { address: '127.0.22.5', pages: 3 } } });
    const { c } = await core();
    expect(await c.dispatch('crawls.explode', {})).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(await c.dispatch('crawls.start', { id: 'one' })).toMatchObject({ ok: false, error: { code: 'invalid', field: 'id' } });
    expect(await c.dispatch('crawls.start', { id: 99 })).toMatchObject({ ok: false, error: { code: 'not-found' } });
    expect(await c.dispatch('crawls.create', { config: { seeds: [], settings: { DOWNLOAD_DELAY: -1 } } }))
      .toMatchObject({ ok: false, error: { code: 'invalid' } });
    expect(await c.dispatch('settings.update', { id: 1, changes: 'fast' })).toMatchObject({ ok: false, error: { field: 'changes' } });
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', { config: { seeds: [`${s.origin('e.test')}/`], resolve: s.resolve } }));
    expect(await c.dispatch('slots.pause', { id: crawl.id, slot: 'e.test' })).toMatchObject({ ok: false, error: { code: 'conflict' } });
    // Settings of a crawl not yet started change in the database, validated the same way.
    expect(await c.dispatch('settings.update', { id: crawl.id, changes: { CONCURRENT_REQUESTS: -3 } }))
      .toMatchObject({ ok: false, error: { code: 'invalid', field: 'CONCURRENT_REQUESTS' } });
    await ok(c.dispatch('settings.update', { id: crawl.id, changes: { DOWNLOAD_DELAY: 0.01 } }));
    expect((await ok<{ DOWNLOAD_DELAY: number }>(c.dispatch('settings.get', { id: crawl.id }))).DOWNLOAD_DELAY).toBe(0.01);
    const copy = await ok<{ id: number; name: string }>(c.dispatch('crawls.duplicate', { id: crawl.id }));
    expect(copy.name).toMatch(/\(copy\)$/);
    expect((await ok<{ DOWNLOAD_DELAY: number }>(c.dispatch('settings.get', { id: copy.id }))).DOWNLOAD_DELAY).toBe(0.01);
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    expect(await c.dispatch('crawls.delete', { id: crawl.id })).toMatchObject({ ok: false, error: { code: 'conflict' } });
    await ok(c.dispatch('crawls.stop', { id: crawl.id }));
    await waitFor(() => true, '', 10);
    await sleep(200);
    expect(await ok<{ deleted: number }>(c.dispatch('crawls.delete', { id: crawl.id }))).toEqual({ deleted: 1 });
    expect((await ok<{ id: number }[]>(c.dispatch('crawls.list', {}))).map((x) => x.id)).toEqual([copy.id]);
  });

  it('closing pauses a running crawl and keeps it paused in the database, history flushed', async () => {
    const s = await site({ hosts: { 'q.test': { address: '127.0.22.6', pages: 50, latency_ms: 5 } } });
    const { c, db } = await core();
    const { crawl } = await ok<{ crawl: { id: number } }>(c.dispatch('crawls.create', {
      config: { seeds: [`${s.origin('q.test')}/`], resolve: s.resolve, settings: { DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false } },
    }));
    await ok(c.dispatch('crawls.start', { id: crawl.id }));
    await waitFor(() => arrivals(s, 'q.test').length >= 5, 'requests', 10_000);
    await c.close();
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(reader.getCrawl(crawl.id)!.status).toBe('paused');
    expect(reader.crawlSummary(crawl.id).requests).toBe(arrivals(s, 'q.test').length);
  });
});
