// A slot at run time (SPEC 1, 3): its policy state (throttle/policy.ts) plus what only the running
// crawl has: the queue, the lanes, its place in the scheduler's heap and ring, in-flight counts and
// the figures of the slot table.

import type { Settings } from '../../../shared/settings';
import { SlotPolicy } from './throttle/policy';
import type { HeapItem } from './heap';
import { RequestQueue, type CrawlRequest } from './request';

export class Slot extends SlotPolicy implements HeapItem {
  heapIndex = -1;
  heapKey = 0;
  /** In the scheduler's ready ring. */
  inRing = false;

  readonly queue = new RequestQueue();
  inFlight = 0;
  /** The latest request started (its send time may move lastStart forward). */
  lastReq: CrawlRequest | null = null;
  /** Last start per lane (for DOWNLOAD_DELAY_PER_SLOT) and whether the lane is busy. */
  laneLast: number[] = [];
  laneBusy: boolean[] = [];
  lastActive = 0;
  /** Slots whose next request waits for this scope's concurrency or pause. */
  readonly waiters = new Set<Slot>();

  // Counters for the slot table.
  requests = 0;
  responses = 0;
  failures = 0;
  bytes = 0;
  latencySum = 0;
  latencyCount = 0;
  lastLatency: number | null = null;
  readonly byClass = [0, 0, 0, 0, 0, 0]; // 1xx..5xx by index 1-5, index 0 unused
  s429 = 0;

  /** This scope takes a request (its own, or another slot's): its concurrency and its gap count. */
  beginScope(now: number, s: Settings, random: () => number): void {
    this.inFlight++;
    this.requests++;
    this.lastActive = now;
    this.started(now, s, random);
  }

  endScope(now: number): void {
    this.inFlight--;
    this.lastActive = now;
  }

  /** Whether this scope lets another request start at `now`, ignoring quota. */
  admits(s: Settings, now: number): boolean {
    return !this.paused && this.inFlight < this.concurrency(s) && this.readyAt(s) <= now;
  }

  /** Earliest time (epoch ms) the next request may start, ignoring concurrency: the scope's gap, then its lanes. */
  readyAt(s: Settings): number {
    let t = this.gapReadyAt(s);
    const perLane = s.DOWNLOAD_DELAY_PER_SLOT;
    if (perLane > 0) {
      const lanes = this.concurrency(s);
      let laneReady = Infinity;
      for (let i = 0; i < lanes; i++) {
        if (this.laneBusy[i]) continue;
        const last = this.laneLast[i] ?? -Infinity;
        if (last < laneReady) laneReady = last;
      }
      laneReady += perLane * 1000;
      if (laneReady > t) t = laneReady;
    }
    return t;
  }

  /** Reserves a lane and records the start (SPEC 3: reserved in the same step as the dequeue). */
  begin(req: CrawlRequest, now: number, s: Settings, random: () => number): void {
    this.lastReq = req;
    this.beginScope(now, s, random);
    if (s.DOWNLOAD_DELAY_PER_SLOT > 0) {
      const lanes = this.concurrency(s);
      let best = -1;
      for (let i = 0; i < lanes; i++) {
        if (this.laneBusy[i]) continue;
        if (best < 0 || (this.laneLast[i] ?? -Infinity) < (this.laneLast[best] ?? -Infinity)) best = i;
      }
      if (best < 0) best = lanes; // concurrency lowered while busy: use an extra lane
      this.laneBusy[best] = true;
      this.laneLast[best] = now;
      req.lane = best;
    }
  }

  end(req: CrawlRequest, now: number): void {
    if (this.lastReq === req) this.lastReq = null;
    this.inFlight--;
    this.lastActive = now;
    if (req.lane >= 0) {
      this.laneBusy[req.lane] = false;
      req.lane = -1;
    }
  }

  /** Has work it may start once its delay allows (not paused, under its concurrency). */
  runnable(s: Settings): boolean {
    return !this.paused && this.queue.size > 0 && this.inFlight < this.concurrency(s);
  }
}
