// The dispatch rules of SPEC 3 on a virtual clock: exact start times, concurrency reserved at
// dequeue, one gap draw per gap, fair rotation, live changes, and idle slots that keep their delay.
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../electron/core/clock';
import { Scheduler } from '../../../electron/core/engine/scheduler';
import type { CrawlRequest } from '../../../electron/core/engine/request';
import type { Slot } from '../../../electron/core/engine/slot';
import { parseSettings, type Settings } from '../../../shared/settings';

const T0 = Date.UTC(2026, 0, 1);

function req(slotKey: string, i: number, priority = 0): CrawlRequest {
  return { url: `http://${slotKey}/${i}`, origin: `http://${slotKey}`, path: `/${i}`, host: slotKey, method: 'GET', depth: 0,
    priority, meta: {}, redirects: 0, retries: 0, robots: false, enqueuedAt: 0, slotKey, lane: -1,
    scopeKeys: [], costs: null, quotaWindows: null };
}

/** A scheduler whose "downloads" take `latencyMs` of virtual time; records every start. */
function harness(settings: Record<string, unknown>, latencyMs = 50, random?: () => number) {
  const clock = new VirtualClock(T0);
  const starts: { key: string; t: number; lane: number; inFlight: number; path: string }[] = [];
  let maxGlobal = 0;
  const sched: Scheduler = new Scheduler({
    settings: parseSettings(settings),
    clock,
    random,
    start: (r: CrawlRequest, slot: Slot) => {
      starts.push({ key: slot.key, t: clock.now() - T0, lane: r.lane, inFlight: slot.inFlight, path: r.path });
      maxGlobal = Math.max(maxGlobal, sched.inFlight);
      clock.setTimer(clock.now() + latencyMs, () => sched.finish(r, slot));
    },
  });
  return { clock, sched, starts, maxGlobal: () => maxGlobal };
}

describe('scheduler', () => {
  it('SPEC 3 example: per-domain 2, delay 0.3, per-lane 1.0 start at 0.0, 0.3 and 1.0', async () => {
    const h = harness({ CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.3, DOWNLOAD_DELAY_PER_SLOT: 1.0, RANDOMIZE_DOWNLOAD_DELAY: false });
    for (let i = 0; i < 3; i++) h.sched.enqueue(req('a.test', i));
    await h.clock.runTo(T0 + 5000);
    expect(h.starts.map((s) => [s.t, s.lane])).toEqual([[0, 0], [300, 1], [1000, 0]]);
  });

  it('reserves per-slot concurrency at dequeue: delay 0 never overshoots (Scrapy 2.14+ bug)', async () => {
    const h = harness({ CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0 }, 100);
    for (let i = 0; i < 10; i++) h.sched.enqueue(req('a.test', i));
    await h.clock.runTo(T0);
    expect(h.starts).toHaveLength(2);
    await h.clock.runTo(T0 + 10_000);
    expect(h.starts).toHaveLength(10);
    expect(Math.max(...h.starts.map((s) => s.inFlight))).toBe(2);
  });

  it('respects CONCURRENT_REQUESTS across slots and rotates fairly between ready slots', async () => {
    const h = harness({ CONCURRENT_REQUESTS: 1, DOWNLOAD_DELAY: 0 }, 10);
    for (const k of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) h.sched.enqueue(req(k, i));
    await h.clock.runTo(T0 + 1000);
    expect(h.maxGlobal()).toBe(1);
    expect(h.starts.map((s) => s.key).join('')).toBe('abcabcabc');
  });

  it('a slot whose delay ran out starts before waiting-free slots, which still get every 9th start', async () => {
    // One request at a time, 10 ms each: `a` (delay 1 s) is due at 1,000 ms while 200 fresh
    // slots queue for the single lane; `a` must go next, not after them.
    const h = harness({ CONCURRENT_REQUESTS: 1, DOWNLOAD_DELAY: 0, DOWNLOAD_SLOTS: { a: { delay: 1 } }, RANDOMIZE_DOWNLOAD_DELAY: false }, 10);
    for (let i = 0; i < 3; i++) h.sched.enqueue(req('a', i));
    for (let k = 0; k < 200; k++) h.sched.enqueue(req(`f${k}`, 0));
    await h.clock.runTo(T0 + 5000);
    expect(h.starts.filter((s) => s.key === 'a').map((s) => s.t)).toEqual([0, 1000, 2000]);
    // With 20 slots due at once, the fresh ones still get one start in every nine.
    const g = harness({ CONCURRENT_REQUESTS: 1, DOWNLOAD_DELAY: 1, RANDOMIZE_DOWNLOAD_DELAY: false }, 10);
    for (let k = 0; k < 20; k++) for (let i = 0; i < 2; i++) g.sched.enqueue(req(`d${k}`, i));
    await g.clock.runTo(T0 + 1000 - 1);
    for (let k = 0; k < 20; k++) g.sched.enqueue(req(`f${k}`, 0));
    await g.clock.runTo(T0 + 10_000);
    const after = g.starts.filter((s) => s.t >= 1000).map((s) => s.key[0]).join('');
    expect(after.slice(0, 18)).toBe('ddddddddfddddddddf');
  });

  it('a waiting-free slot neither starts just before a due slot nor between due starts and their writes', async () => {
    // Issue 17 (timing on the wire): a fresh slot's first request opens a connection, the costliest
    // start; run just before a due slot, or between due slots' starts and the HTTP client's deferred
    // writes of them, it makes their gaps late. It starts right after them instead.
    const h = harness({ CONCURRENT_REQUESTS: 0, DOWNLOAD_DELAY: 1, RANDOMIZE_DOWNLOAD_DELAY: false }, 10);
    for (let k = 0; k < 20; k++) for (let i = 0; i < 2; i++) h.sched.enqueue(req(`d${k}`, i));
    await h.clock.runTo(T0 + 999.5);
    // 0.5 ms before the 20 due slots: the fresh ones wait for them (RING_GUARD_MS) ...
    for (let k = 0; k < 20; k++) h.sched.enqueue(req(`f${k}`, 0));
    await h.clock.runTo(T0 + 999.9);
    expect(h.starts.filter((s) => s.key[0] === 'f')).toEqual([]);
    await h.clock.runTo(T0 + 5000);
    const late = h.starts.filter((s) => s.t >= 999);
    // ... and do not go between them (no 'ddddddddf' here: the due slots' writes go out first).
    expect(late.map((s) => s.key[0]).join('')).toBe('d'.repeat(20) + 'f'.repeat(20));
    expect(new Set(late.map((s) => s.t))).toEqual(new Set([1000]));
  });

  it('waiting-free slots are not starved by a loop that never clears its due slots', async () => {
    // 300 slots due at once: each due start leaves its write pending, yet the fresh slot still gets
    // its start within RING_FLOOR_STREAK (32) due starts, not after all 300.
    const h = harness({ CONCURRENT_REQUESTS: 0, DOWNLOAD_DELAY: 1, RANDOMIZE_DOWNLOAD_DELAY: false }, 10);
    for (let k = 0; k < 300; k++) for (let i = 0; i < 2; i++) h.sched.enqueue(req(`d${k}`, i));
    await h.clock.runTo(T0 + 999.5);
    h.sched.enqueue(req('fresh', 0));
    await h.clock.runTo(T0 + 5000);
    const after = h.starts.filter((s) => s.t >= 999).map((s) => s.key);
    expect(after.indexOf('fresh')).toBeGreaterThanOrEqual(0);
    expect(after.indexOf('fresh')).toBeLessThanOrEqual(32);
  });

  it('with a handover lead, hands a due slot over that much early, stamped with its due time', async () => {
    // The real clock's lead (HANDOVER_LEAD_MS): the downloader holds the write until the stamp.
    const vc = new VirtualClock(T0);
    const clock = { now: () => vc.now(), setTimer: vc.setTimer.bind(vc), defer: vc.defer.bind(vc), handoverLeadMs: 1 };
    const starts: { t: number; stamp: number }[] = [];
    const sched: Scheduler = new Scheduler({
      settings: parseSettings({ DOWNLOAD_DELAY: 0.5, RANDOMIZE_DOWNLOAD_DELAY: false }),
      clock,
      start: (r: CrawlRequest, slot: Slot) => {
        starts.push({ t: vc.now() - T0, stamp: slot.lastStart - T0 });
        vc.setTimer(vc.now() + 10, () => sched.finish(r, slot));
      },
    });
    for (let i = 0; i < 3; i++) sched.enqueue(req('a', i));
    await vc.runTo(T0 + 5000);
    expect(starts).toEqual([{ t: 0, stamp: 0 }, { t: 499, stamp: 500 }, { t: 999, stamp: 1000 }]);
  });

  it('higher priority first, FIFO within a priority', async () => {
    const h = harness({ CONCURRENT_REQUESTS: 1, CONCURRENT_REQUESTS_PER_DOMAIN: 1 }, 10);
    h.sched.pause();
    h.sched.enqueue(req('a', 1));
    h.sched.enqueue(req('a', 2));
    h.sched.enqueue(req('a', 3, 5));
    h.sched.enqueue(req('a', 4, 5));
    h.sched.resume();
    await h.clock.runTo(T0 + 1000);
    expect(h.starts.map((s) => s.path)).toEqual(['/3', '/4', '/1', '/2']);
  });

  it('draws the randomized gap once per gap: mean gap equals the delay (no 1.22x bias)', async () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const h = harness({ DOWNLOAD_DELAY: 1, CONCURRENT_REQUESTS_PER_DOMAIN: 1 }, 10, random);
    for (let i = 0; i < 2000; i++) h.sched.enqueue(req('a', i));
    await h.clock.runTo(T0 + 3_000_000);
    expect(h.starts).toHaveLength(2000);
    const gaps = h.starts.slice(1).map((s, i) => s.t - h.starts[i].t);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(980);
    expect(mean).toBeLessThan(1020);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(500);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1500);
  });

  it('keeps one timer for thousands of waiting slots', async () => {
    const h = harness({ CONCURRENT_REQUESTS: 0, DOWNLOAD_DELAY: 0.5, RANDOMIZE_DOWNLOAD_DELAY: false }, 5);
    for (let k = 0; k < 2000; k++) for (let i = 0; i < 3; i++) h.sched.enqueue(req(`h${k}`, i));
    await h.clock.runTo(T0 + 1);
    expect(h.starts).toHaveLength(2000);
    // Downloads finished; every slot now waits for its delay. One scheduler timer (+ the idle sweep).
    await h.clock.runTo(T0 + 100);
    const pending = (h.clock as unknown as { timers: { cancelled: boolean }[] }).timers.filter((t) => !t.cancelled).length;
    expect(pending).toBeLessThanOrEqual(2);
    await h.clock.runTo(T0 + 5000);
    expect(h.starts).toHaveLength(6000);
    const byKey = new Map<string, number[]>();
    for (const s of h.starts) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s.t]);
    for (const ts of byKey.values()) expect(ts).toEqual([0, 500, 1000]);
  });

  it('applies a settings change to the next decision', async () => {
    const h = harness({ DOWNLOAD_DELAY: 10, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 }, 10);
    for (let i = 0; i < 3; i++) h.sched.enqueue(req('a', i));
    await h.clock.runTo(T0 + 2000);
    expect(h.starts).toHaveLength(1);
    h.sched.setSettings(parseSettings({ DOWNLOAD_DELAY: 1, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 }));
    await h.clock.runTo(T0 + 2000);
    expect(h.starts.map((s) => s.t)).toEqual([0, 2000]);
    await h.clock.runTo(T0 + 4000);
    expect(h.starts.map((s) => s.t)).toEqual([0, 2000, 3000]);
  });

  it('DOWNLOAD_SLOTS gives a slot its own concurrency and delay', async () => {
    const h = harness({ DOWNLOAD_DELAY: 0, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 4,
      DOWNLOAD_SLOTS: { slow: { concurrency: 1, delay: 2 } } }, 10);
    for (let i = 0; i < 3; i++) {
      h.sched.enqueue(req('slow', i));
      h.sched.enqueue(req('fast', i));
    }
    await h.clock.runTo(T0 + 10_000);
    expect(h.starts.filter((s) => s.key === 'slow').map((s) => s.t)).toEqual([0, 2000, 4000]);
    expect(h.starts.filter((s) => s.key === 'fast').map((s) => s.t)).toEqual([0, 0, 0]);
  });

  it('cleans up idle slots but keeps their learned delay and last start', async () => {
    const clock = new VirtualClock(T0);
    const settings: Settings = parseSettings({ AUTOTHROTTLE_ENABLED: true, RANDOMIZE_DOWNLOAD_DELAY: false });
    const sched: Scheduler = new Scheduler({ settings, clock, idleSlotMs: 60_000,
      start: (r, slot) => clock.setTimer(clock.now() + 10, () => sched.finish(r, slot)) });
    sched.enqueue(req('a', 0));
    await clock.runTo(T0 + 100);
    sched.existingSlot('a')!.delay = 2.5; // as if AutoThrottle had learned it
    await clock.runTo(T0 + 200_000);
    expect(sched.existingSlot('a')).toBeUndefined();
    expect(sched.slotCount).toBe(1);
    sched.enqueue(req('a', 1));
    expect(sched.existingSlot('a')!.delay).toBe(2.5);
    sched.close();
  });

  it('quota: prefers the request taking the largest share, others wait for the next window', async () => {
    const h = harness({ RANDOMIZE_DOWNLOAD_DELAY: false, THROTTLING_SCOPES: { a: { quota: 5, window: 10 } } }, 10);
    h.sched.pause();
    const withCost = (i: number, cost: number) => ({ ...req('a', i), costs: { a: cost } });
    h.sched.enqueue(withCost(1, 1));
    h.sched.enqueue(withCost(2, 1));
    h.sched.enqueue(withCost(3, 5));
    h.sched.resume();
    await h.clock.runTo(T0 + 30_000);
    expect(h.starts.map((s) => [s.path, s.t])).toEqual([['/3', 0], ['/1', 10_000], ['/2', 10_000]]);
  });

  it('a request waits for every scope: a busy shared scope holds the other slot until it frees', async () => {
    const h = harness({ RANDOMIZE_DOWNLOAD_DELAY: false, THROTTLING_SCOPES: { shared: { concurrency: 1 } } }, 100);
    h.sched.enqueue({ ...req('a', 1), scopeKeys: ['shared'] });
    h.sched.enqueue({ ...req('b', 1), scopeKeys: ['shared'] });
    h.sched.enqueue(req('c', 1));
    await h.clock.runTo(T0 + 1000);
    expect(h.starts.map((s) => [s.key, s.t])).toEqual([['a', 0], ['c', 0], ['b', 100]]);
  });

  it('pausing holds every slot; paused slot holds only itself', async () => {
    const h = harness({ DOWNLOAD_DELAY: 0 }, 10);
    h.sched.pause();
    h.sched.enqueue(req('a', 0));
    await h.clock.runTo(T0 + 1000);
    expect(h.starts).toHaveLength(0);
    h.sched.resume();
    h.sched.slot('b').paused = true;
    h.sched.enqueue(req('b', 0));
    await h.clock.runTo(T0 + 2000);
    expect(h.starts.map((s) => s.key)).toEqual(['a']);
    h.sched.slot('b').paused = false;
    h.sched.reschedule(h.sched.slot('b'));
    await h.clock.runTo(T0 + 3000);
    expect(h.starts.map((s) => s.key)).toEqual(['a', 'b']);
  });
});
