// A host-side slot feed for the console's scale test and benchmark: thousands of real engine Slot
// objects, turned into rows by the core's own SlotRowDiff and pushed as 'slots.update' events
// through the real WebSocket server, beside a real core (a crawl with 10,000 live hosts is too heavy).

import type { AppEvents, Dispatcher, EventName, Reply, SlotTuple } from '../../shared/contract';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings';
import { Slot } from '../../electron/core/engine/slot';
import type { CrawlRequest } from '../../electron/core/engine/request';
import { SlotRowDiff, slotTuple } from '../../electron/core/slot-rows';
import { mulberry32 } from '../../electron/core/testsite/random';

type Listener = <E extends EventName>(event: E, payload: AppEvents[E]) => void;

export interface SlotFeed {
  /** The core with the feed's slots added to one crawl: its events, and its 'slots.snapshot'. */
  readonly dispatcher: Dispatcher;
  /** Every slot key of the feed, in creation order. */
  readonly keys: readonly string[];
  /** Changes `share` of the slots (0..1) and sends the changed rows as one 'slots.update'; returns how many. */
  tick(share?: number): number;
  /** Ticks every 1000/hz ms until stop(); returns the stop function. */
  run(hz: number, share?: number): () => void;
  /**
   * Computes `ticks` updates ahead (each exactly what tick() would send) and then sends them in turn,
   * round and round, every 1000/hz ms: the page gets the same load without the feed's CPU in the way.
   */
  replay(ticks: number, hz: number, share?: number): () => void;
  /** Rows sent so far, and ticks. */
  readonly sent: { rows: number; ticks: number; ms: number };
  /** The row of a slot as the feed last computed it. */
  row(key: string): SlotTuple | undefined;
}

/** Key of the i-th fed slot: `h-00042.scale.test`. */
export const feedKey = (i: number): string => `h-${String(i).padStart(5, '0')}.scale.test`;


/** A queued request as the slot sees it (only its place in the queue matters here). */
const QUEUED = { priority: 0 } as unknown as CrawlRequest;

/**
 * `n` slots on crawl `crawlId` of `core`. The slots get a mix of states (active, waiting, backoff,
 * paused, blocked, idle) and counters that grow at each tick; rows are computed exactly as the
 * core's tick does (slotTuple + SlotRowDiff), so the renderer sees what a real crawl would send.
 */
export function feedSlots(core: Dispatcher, crawlId: number, n: number, o: { seed?: number; settings?: Settings } = {}): SlotFeed {
  const settings = o.settings ?? DEFAULT_SETTINGS;
  const random = mulberry32(o.seed ?? 1);
  const listeners = new Set<Listener>();
  const diff = new SlotRowDiff();
  const slots: Slot[] = [];
  const now = () => performance.timeOrigin + performance.now();
  for (let i = 0; i < n; i++) {
    const s = new Slot(feedKey(i), undefined, settings);
    const kind = random();
    if (kind < 0.02) s.paused = true;
    else if (kind < 0.05) s.backoff.level = 1 + Math.floor(random() * 3);
    else if (kind < 0.07) s.backoff.blockedUntil = now() + 3_600_000;
    else if (kind < 0.25) {
      s.queue.push(QUEUED);
      s.pinDelay = 1 + Math.floor(random() * 4);
    }
    s.requests = Math.floor(random() * 5000);
    s.byClass[2] = Math.floor(s.requests * 0.9);
    s.byClass[4] = s.requests - s.byClass[2];
    s.s429 = Math.floor(s.byClass[4] * random());
    s.bytes = s.requests * 4000;
    slots.push(s);
  }
  const last = new Map<string, SlotTuple>();
  const sent = { rows: 0, ticks: 0, ms: 0 };

  const emit: Listener = (event, payload) => {
    for (const l of listeners) l(event, payload);
  };

  function step(share: number): SlotTuple[] {
    const t = now();
    for (const s of slots) {
      if (share < 1 && random() >= share) continue;
      if (s.paused) continue;
      const r = 1 + Math.floor(random() * 3);
      s.requests += r;
      s.byClass[2] += r;
      s.bytes += r * (2000 + Math.floor(random() * 6000));
      const latency = 0.02 + random() * 0.4;
      s.lastLatency = Math.round(latency * 10_000) / 10_000;
      s.latencySum += latency;
      s.latencyCount++;
      s.inFlight = s.queue.size > 0 ? 0 : Math.floor(random() * 3);
      if (s.queue.size > 0) s.lastStart = t - random() * 500;
    }
    return diff.changed(slots, settings, t);
  }

  function send(rows: readonly SlotTuple[]): void {
    for (const r of rows) last.set(r[0], r);
    if (rows.length > 0) emit('slots.update', { crawlId, rows, now: now() });
  }

  function tick(share = 1): number {
    const t0 = performance.now();
    const rows = step(share);
    send(rows);
    sent.rows += rows.length;
    sent.ticks++;
    sent.ms += performance.now() - t0;
    return rows.length;
  }

  const dispatcher: Dispatcher = {
    async dispatch(method: string, params: unknown): Promise<Reply> {
      const r = await core.dispatch(method, params);
      if (method !== 'slots.snapshot' || (params as { id?: unknown })?.id !== crawlId) return r;
      if (!r.ok) return r;
      const t = now();
      const fed = slots.map((s) => slotTuple(s, settings, t));
      const result = r.result as { columns: unknown; rows: readonly SlotTuple[] };
      return { ok: true, result: { ...result, rows: [...result.rows, ...fed], now: t } };
    },
    subscribe(listener) {
      const off = core.subscribe(listener);
      listeners.add(listener as Listener);
      return () => {
        off();
        listeners.delete(listener as Listener);
      };
    },
  };

  return {
    dispatcher,
    keys: slots.map((s) => s.key),
    tick,
    run(hz, share = 1) {
      const timer = setInterval(() => tick(share), 1000 / hz);
      return () => clearInterval(timer);
    },
    replay(ticks, hz, share = 1) {
      const recorded = Array.from({ length: ticks }, () => step(share));
      let i = 0;
      const timer = setInterval(() => {
        const t0 = performance.now();
        const rows = recorded[i++ % recorded.length];
        send(rows);
        sent.rows += rows.length;
        sent.ticks++;
        sent.ms += performance.now() - t0;
      }, 1000 / hz);
      return () => clearInterval(timer);
    },
    sent,
    row: (key) => last.get(key),
  };
}
