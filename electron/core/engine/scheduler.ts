// Decides when each queued request may start (SPEC 3): global and per-slot concurrency reserved
// at dequeue, per-slot delays via one timer over a heap of ready times, round-robin between slots.

import type { Settings } from '../../../shared/settings';
import type { Clock, TimerHandle } from '../clock';
import { IndexedHeap } from './heap';
import { Deque, type CrawlRequest } from './request';
import { Slot } from './slot';
import { autothrottleSwitched } from './throttle/policy';

/** How many queued requests of a slot are looked at to prefer the largest quota share. */
const QUOTA_SCAN = 16;

/** A request's expected cost in a scope (SPEC 5.4: 1 unless given). */
export function costOf(req: CrawlRequest, key: string): number {
  const costs = req.costs;
  return (costs !== null && Object.hasOwn(costs, key) ? costs[key] : undefined) ?? 1;
}

/** A map's own entry (never one of Object's: a slot may be called constructor or __proto__). */
function ownValue<T>(map: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Starts per pump before yielding to the event loop. */
const MAX_STARTS_PER_PUMP = 256;
/**
 * Milliseconds of starting work per pump before yielding. A burst of slots released together
 * by the timer (1,000 hosts at one delay) then leaves in small groups, each sent at once, instead
 * of one long burst that queues at the servers and evens nothing; short pumps are unaffected.
 */
const PUMP_SLICE_MS = 1.5;
/**
 * Slots whose delay just ran out (they come from the timer heap) start before slots that were
 * ready without waiting, so a busy loop (say 1,000 new connections) makes first requests late,
 * not the gaps of slots keeping a cadence; one waiting-free slot in every DUE_STREAK + 1 starts
 * keeps them from starving.
 */
const DUE_STREAK = 8;
/**
 * A waiting-free slot (most often a host's first request: a new connection, the costliest start,
 * which can also hand the CPU to a local server for milliseconds) is not started while a waiting
 * slot is due within this many ms, unless the waiting-free slots are owed their turn (DUE_STREAK):
 * its cost would make the due slot's gap late.
 */
const RING_GUARD_MS = 1;
/**
 * Due starts after which a waiting-free slot starts even amid a burst of due slots whose writes
 * are pending (a loop too busy to ever catch up must not starve new slots).
 */
const RING_FLOOR_STREAK = 4 * DUE_STREAK;

export interface SchedulerOptions {
  readonly settings: Settings;
  readonly clock: Clock;
  /** U[0, 1) source for randomized delays. */
  readonly random?: () => number;
  /** Starts the download of a request whose slot place is already reserved. */
  readonly start: (req: CrawlRequest, slot: Slot) => void;
  /** Slots idle this long (ms) are cleaned up, keeping their learned delay. */
  readonly idleSlotMs?: number;
}

export class Scheduler {
  settings: Settings;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly startFn: (req: CrawlRequest, slot: Slot) => void;
  private readonly slots = new Map<string, Slot>();
  /** Long-idle slots, kept whole (learned delay, backoff, quota) but out of the working set. */
  private readonly dormant = new Map<string, Slot>();
  private readonly heap = new IndexedHeap<Slot>();
  private readonly ring = new Deque<Slot>();
  /** Ready slots that waited for their delay (see DUE_STREAK). */
  private readonly dueRing = new Deque<Slot>();
  private dueStreak = 0;
  /**
   * Due slots were started and their writes may not have gone out yet: the HTTP client writes a
   * request on a reused connection one check phase later (undici checks an idle socket first), so
   * no waiting-free slot starts until `releaseTask`, deferred after those writes, has run.
   */
  private writesPending = false;
  private releaseQueued = false;
  /** A pump started due slots while `releaseTask` was already queued: it defers once more. */
  private releaseAgain = false;
  private timer: TimerHandle | null = null;
  private timerAt = Infinity;
  private pumpQueued = false;
  private pumping = false;
  private paused = false;
  private closed = false;
  private readonly idleSlotMs: number;
  /** Clock.handoverLeadMs: a slot due within this many ms is started now, stamped with its due time. */
  private readonly lead: number;
  private sweepTimer: TimerHandle | null = null;
  /** Requests in flight across the crawl. */
  inFlight = 0;
  /** Requests waiting in slot queues. */
  queued = 0;

  constructor(o: SchedulerOptions) {
    this.settings = o.settings;
    this.clock = o.clock;
    this.random = o.random ?? Math.random;
    this.startFn = o.start;
    this.idleSlotMs = o.idleSlotMs ?? 120_000;
    this.lead = o.clock.handoverLeadMs ?? 0;
  }

  /** The slot for a key, created on first use (restoring a cleaned-up slot's memory). */
  slot(key: string): Slot {
    let slot = this.slots.get(key);
    if (!slot) {
      slot = this.dormant.get(key);
      if (slot) this.dormant.delete(key);
      else slot = new Slot(key, ownValue(this.settings.DOWNLOAD_SLOTS, key), this.settings);
      slot.lastActive = this.clock.now();
      this.slots.set(key, slot);
      this.armSweep();
    }
    return slot;
  }

  existingSlot(key: string): Slot | undefined {
    return this.slots.get(key);
  }

  /** Whether the crawl has seen this slot: in the working set, or cleaned up after a long idle. */
  knows(key: string): boolean {
    return this.slots.has(key) || this.dormant.has(key);
  }

  allSlots(): IterableIterator<Slot> {
    return this.slots.values();
  }

  /** Slots seen in this crawl, cleaned-up ones included. */
  get slotCount(): number {
    return this.slots.size + this.dormant.size;
  }

  enqueue(req: CrawlRequest): void {
    const slot = this.slot(req.slotKey);
    req.enqueuedAt = this.clock.now();
    slot.queue.push(req);
    this.queued++;
    this.place(slot);
  }

  /** A started request has finished (response, failure or cancel): free its places in every scope. */
  finish(req: CrawlRequest, slot: Slot): void {
    const now = this.clock.now();
    slot.end(req, now);
    this.inFlight--;
    for (const key of req.scopeKeys) {
      const scope = this.slot(key);
      scope.endScope(now);
      this.wake(scope);
    }
    this.wake(slot);
    this.place(slot);
    this.requestPump();
  }

  /** After a slot's delay, concurrency or pause changed: move it to its new ready time. */
  reschedule(slot: Slot): void {
    this.wake(slot);
    this.place(slot);
  }

  /** Slots waiting on this scope get another look. */
  private wake(scope: Slot): void {
    if (scope.waiters.size === 0) return;
    const waiting = [...scope.waiters];
    scope.waiters.clear();
    for (const w of waiting) this.place(w);
  }

  /**
   * The request to start from a ready slot: its head, or, when scopes or quotas are involved,
   * the first few requests whose every scope admits them now, preferring the one that takes the
   * largest share of a quota (SPEC 5.4). Null when none may start: the slot then waits for the
   * scope that holds it (a timer, or a wake-up when that scope frees a place).
   */
  private choose(slot: Slot, now: number): CrawlRequest | null {
    const s = this.settings;
    const head = slot.queue.peek()!;
    if (head.scopeKeys.length === 0 && slot.quota(s) === null) return slot.queue.shift()!;
    const req = slot.queue.takeBest(QUOTA_SCAN, (r) => this.score(slot, r, now));
    if (req) return req;
    let at = slot.quotaReadyAt(s, costOf(head, slot.key), now);
    for (const key of head.scopeKeys) {
      const scope = this.slot(key);
      if (scope.paused || scope.inFlight >= scope.concurrency(s)) {
        scope.waiters.add(slot);
        return null;
      }
      at = Math.max(at, scope.readyAt(s), scope.quotaReadyAt(s, costOf(head, key), now));
    }
    this.heap.set(slot, at > now ? at : now + 1);
    return null;
  }

  /** −∞ unless every scope admits `r` now; else the largest share of a quota it would take. */
  private score(slot: Slot, r: CrawlRequest, now: number): number {
    const s = this.settings;
    let share = 0;
    const own = costOf(r, slot.key);
    if (slot.quotaReadyAt(s, own, now) > now) return -Infinity;
    share = Math.max(share, own / slot.quotaLeft(s, now));
    for (const key of r.scopeKeys) {
      const scope = this.slot(key);
      const cost = costOf(r, key);
      if (!scope.admits(s, now) || scope.quotaReadyAt(s, cost, now) > now) return -Infinity;
      share = Math.max(share, cost / scope.quotaLeft(s, now));
    }
    return share;
  }

  /** The request's other scopes take their place, and every scope with a quota its cost. */
  private beginScopes(req: CrawlRequest, slot: Slot, now: number): void {
    const s = this.settings;
    // No prototype: a scope named __proto__ or constructor is a key like any other.
    let windows: Record<string, number> | null = null;
    if (slot.quota(s)) (windows ??= Object.create(null) as Record<string, number>)[slot.key] = slot.consumeQuota(s, costOf(req, slot.key), now);
    for (const key of req.scopeKeys) {
      const scope = this.slot(key);
      scope.beginScope(now, s, this.random);
      if (scope.quota(s)) (windows ??= Object.create(null) as Record<string, number>)[key] = scope.consumeQuota(s, costOf(req, key), now);
    }
    req.quotaWindows = windows;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.requestPump();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Applies new settings to the next decision: every waiting slot is re-keyed. */
  setSettings(next: Settings): void {
    const prev = this.settings;
    this.settings = next;
    if (prev.AUTOTHROTTLE_ENABLED !== next.AUTOTHROTTLE_ENABLED) {
      for (const slot of this.slots.values()) autothrottleSwitched(slot, next);
    }
    this.replaceAll();
  }

  /** Re-places every slot (after a change that may move many ready times). */
  replaceAll(): void {
    for (const slot of this.slots.values()) this.place(slot);
    this.requestPump();
  }

  /** Stops timers; nothing starts after this. */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
    this.sweepTimer?.cancel();
    this.sweepTimer = null;
  }

  /** Takes every queued request out (for stop); returns them. */
  drain(): CrawlRequest[] {
    const out: CrawlRequest[] = [];
    for (const slot of this.slots.values()) {
      for (let r = slot.queue.shift(); r; r = slot.queue.shift()) out.push(r);
      this.heap.remove(slot);
    }
    this.queued = 0;
    return out;
  }

  /** Puts a slot where it belongs: ready ring, heap at its ready time, or nowhere (blocked). */
  private place(slot: Slot): void {
    if (!slot.runnable(this.settings)) {
      if (slot.heapIndex >= 0) this.heap.remove(slot);
      return;
    }
    if (slot.inRing) return;
    const at = slot.readyAt(this.settings);
    if (at <= this.clock.now()) {
      if (slot.heapIndex >= 0) this.heap.remove(slot);
      slot.inRing = true;
      this.ring.push(slot);
      this.requestPump();
    } else {
      this.heap.set(slot, at);
      if (at < this.timerAt) this.armTimer();
    }
  }

  /**
   * Coalesces dispatch into one pump per event-loop turn. Deferring (setImmediate, not a
   * microtask) lets undici mark a finished connection free before the next request reuses it.
   */
  private requestPump(): void {
    if (this.pumpQueued || this.closed) return;
    this.pumpQueued = true;
    this.clock.defer(this.pumpTask);
  }

  /**
   * The request's headers went out at `t` (after connection set-up): the slot's and the lane's
   * delay count from then, so a slow connect does not shorten the next gap.
   */
  sent(req: CrawlRequest, slot: Slot, t: number): void {
    if (slot.lastReq !== req || t <= slot.lastStart) return;
    slot.lastStart = t;
    if (req.lane >= 0) slot.laneLast[req.lane] = t;
    if (slot.heapIndex >= 0) this.place(slot);
  }

  private readonly pumpTask = (): void => {
    this.pumpQueued = false;
    this.pump();
  };

  /** After the writes of due slots: waiting-free slots may start again. */
  private readonly releaseTask = (): void => {
    if (this.releaseAgain) {
      this.releaseAgain = false;
      this.clock.defer(this.releaseTask);
      return;
    }
    this.releaseQueued = false;
    this.writesPending = false;
    this.pump();
  };

  /** Starts every request that may start now, rotating between ready slots. */
  pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    let dueStarts = 0;
    try {
      const s = this.settings;
      let now = this.clock.now();
      // Slots whose time has come (or comes within the handover lead) join the ring.
      for (let top = this.heap.peek(); top && top.heapKey <= now + this.lead; top = this.heap.peek()) {
        this.heap.pop();
        top.inRing = true;
        this.dueRing.push(top);
      }
      if (!this.paused) {
        const limit = s.CONCURRENT_REQUESTS;
        let budget = MAX_STARTS_PER_PUMP;
        const sliceEnd = now + PUMP_SLICE_MS;
        while (this.ring.size + this.dueRing.size > 0 && (limit === 0 || this.inFlight < limit)) {
          if (budget-- <= 0 || now > sliceEnd) {
            // Let I/O and timers run between large bursts (event-loop lag); continue next turn.
            this.requestPump();
            break;
          }
          // Time is read at each start: a long pump must not stamp late starts with an early time.
          now = this.clock.now();
          let due = this.dueRing.size > 0 && (this.ring.size === 0 || this.dueStreak < DUE_STREAK);
          if (!due && !this.ringMayStart(now, dueStarts)) {
            // Due slots go first; the waiting-free ones get their turn once the writes are out.
            if (this.dueRing.size === 0) break;
            due = true;
          }
          const slot = due ? this.dueRing.shift()! : this.ring.shift()!;
          if (due) this.dueStreak++;
          else this.dueStreak = 0;
          slot.inRing = false;
          if (!slot.runnable(s)) continue;
          const at = slot.readyAt(s);
          if (at > now + this.lead) {
            this.heap.set(slot, at);
            continue;
          }
          // Due within the lead: started now, at its due time (the downloader holds the write until then).
          const t = at > now ? at : now;
          const req = this.choose(slot, t);
          if (!req) continue; // a scope of its next request holds it; choose() placed the slot
          this.queued--;
          slot.begin(req, t, s, this.random);
          this.beginScopes(req, slot, t);
          this.inFlight++;
          this.startFn(req, slot);
          if (due) dueStarts++;
          if (slot.runnable(s)) this.place(slot);
        }
      }
    } finally {
      this.pumping = false;
    }
    if (dueStarts > 0) {
      // Deferred now, after the HTTP client's own deferred writes of these starts.
      this.writesPending = true;
      if (this.releaseQueued) this.releaseAgain = true;
      else {
        this.releaseQueued = true;
        this.clock.defer(this.releaseTask);
      }
    }
    this.armTimer();
  }

  /**
   * Whether a waiting-free slot may start now: not while due slots' writes are pending, nor just
   * before the next due time (RING_GUARD_MS) unless they are owed their turn (DUE_STREAK), and
   * always after RING_FLOOR_STREAK due starts in a row.
   */
  private ringMayStart(now: number, dueStarts: number): boolean {
    if (this.dueStreak >= RING_FLOOR_STREAK) return true;
    if (dueStarts > 0 || this.writesPending) return false;
    if (this.dueStreak >= DUE_STREAK) return true;
    const top = this.heap.peek();
    return top === undefined || top.heapKey - this.lead > now + RING_GUARD_MS;
  }

  private armTimer(): void {
    const top = this.heap.peek();
    const at = top ? top.heapKey - this.lead : Infinity;
    if (at === this.timerAt && this.timer) return;
    this.timer?.cancel();
    this.timer = null;
    this.timerAt = at;
    if (at !== Infinity && !this.closed) {
      this.timer = this.clock.setTimer(at, () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.pump();
      });
    }
  }

  private armSweep(): void {
    if (this.sweepTimer || this.closed) return;
    this.sweepTimer = this.clock.setTimer(this.clock.now() + this.idleSlotMs / 2, () => {
      this.sweepTimer = null;
      this.sweep();
      if (this.slots.size > 0) this.armSweep();
    });
  }

  /** Moves long-idle slots out of the working set, keeping everything they learned (unlike Scrapy). */
  private sweep(): void {
    const cutoff = this.clock.now() - this.idleSlotMs;
    for (const [key, slot] of this.slots) {
      if (slot.queue.size === 0 && slot.inFlight === 0 && slot.waiters.size === 0 && !slot.paused &&
        slot.pinDelay === null && slot.pinConcurrency === null && slot.lastActive < cutoff) {
        this.heap.remove(slot);
        this.slots.delete(key);
        slot.laneLast = [];
        slot.laneBusy = [];
        this.dormant.set(key, slot);
      }
    }
  }
}
