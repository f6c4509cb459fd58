// One slot's throttle state (SPEC 1, 3, 4.4): its delay, lanes, pins and counters, and the
// rules that derive its effective delay and concurrency from the live settings.

import { drawFactor, type DownloadSlotOverride, type Randomize, type Settings } from '../../../../shared/settings';
import type { DelayCause } from '../../../../shared/types';
import { formatDebugLine } from '../../../../shared/debug-line';
import { autothrottleApplies, autothrottleNextDelay, autothrottleParams, autothrottleStartDelay } from './autothrottle';
import type { HeapItem } from '../heap';
import { RequestQueue, type CrawlRequest } from '../request';

/** What a slot remembers after it is cleaned up for being idle, so learned delays survive. */
export interface SlotMemory {
  readonly delay: number;
  readonly lastStart: number;
}

export class Slot implements HeapItem {
  heapIndex = -1;
  heapKey = 0;
  /** In the scheduler's ready ring. */
  inRing = false;

  readonly queue = new RequestQueue();
  inFlight = 0;
  /** Start time of the latest request, epoch ms (−∞: the first request does not wait). */
  lastStart = -Infinity;
  /** The latest request started (its send time may move lastStart forward). */
  lastReq: CrawlRequest | null = null;
  /** Multiplier drawn once per gap for randomized delays. */
  gapFactor = 1;
  /** Last start per lane (for DOWNLOAD_DELAY_PER_SLOT) and whether the lane is busy. */
  laneLast: number[] = [];
  laneBusy: boolean[] = [];

  /** The slot's own delay: AutoThrottle's when it is on, else the configured one (seconds). */
  delay: number;
  paused = false;
  pinDelay: number | null = null;
  pinConcurrency: number | null = null;
  lastActive = 0;

  // Counters for the slot table.
  requests = 0;
  responses = 0;
  failures = 0;
  bytes = 0;
  latencySum = 0;
  latencyCount = 0;
  lastLatency: number | null = null;
  readonly byClass = [0, 0, 0, 0, 0, 0]; // 1xx..5xx by index 1-5, index 0 unused

  constructor(
    readonly key: string,
    readonly override: DownloadSlotOverride | undefined,
    settings: Settings,
    memory?: SlotMemory,
  ) {
    this.delay = memory ? memory.delay : startDelay(override, settings);
    if (memory) this.lastStart = memory.lastStart;
  }

  concurrency(s: Settings): number {
    if (this.pinConcurrency !== null) return this.pinConcurrency;
    if (this.override?.concurrency !== undefined) return this.override.concurrency;
    return s.CONCURRENT_REQUESTS_PER_IP > 0 ? s.CONCURRENT_REQUESTS_PER_IP : s.CONCURRENT_REQUESTS_PER_DOMAIN;
  }

  randomization(s: Settings): Randomize {
    const r = this.override?.randomize_delay;
    if (r === undefined) return s.RANDOMIZE_DOWNLOAD_DELAY;
    return r ? 0.5 : false;
  }

  /** The largest of the delay sources (SPEC 4.4), in seconds, and which one binds. */
  effectiveDelay(s: Settings): { delay: number; cause: DelayCause } {
    let delay: number;
    let cause: DelayCause;
    if (this.pinDelay !== null) {
      delay = this.pinDelay;
      cause = 'pin';
    } else if (s.AUTOTHROTTLE_ENABLED) {
      const floor = s.DOWNLOAD_DELAY;
      if (this.delay >= floor) {
        delay = this.delay;
        cause = 'autothrottle';
      } else {
        delay = floor;
        cause = 'floor';
      }
    } else {
      delay = this.delay === -1 ? s.DOWNLOAD_DELAY : this.delay;
      cause = 'floor';
    }
    return { delay, cause: delay > 0 ? cause : 'none' };
  }

  /** Seconds of the effective delay only (hot path). */
  delaySeconds(s: Settings): number {
    if (this.pinDelay !== null) return this.pinDelay;
    if (s.AUTOTHROTTLE_ENABLED) return this.delay >= s.DOWNLOAD_DELAY ? this.delay : s.DOWNLOAD_DELAY;
    return this.delay === -1 ? s.DOWNLOAD_DELAY : this.delay;
  }

  /** The slot's own delay before floors, pins and backoff: AutoThrottle's, or the configured one. */
  ownDelay(s: Settings): number {
    return this.delay === -1 ? s.DOWNLOAD_DELAY : this.delay;
  }

  /** Earliest time (epoch ms) the next request may start, ignoring concurrency. */
  readyAt(s: Settings): number {
    let t = this.lastStart + this.delaySeconds(s) * 1000 * this.gapFactor;
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
    this.inFlight++;
    this.requests++;
    this.lastStart = now;
    this.lastActive = now;
    this.gapFactor = drawFactor(this.randomization(s), random);
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

  memory(): SlotMemory {
    return { delay: this.delay, lastStart: this.lastStart };
  }
}

/**
 * A new slot's delay: DOWNLOAD_SLOTS' delay, else AutoThrottle's start delay; with AutoThrottle
 * off and no override, −1 means "follow the live DOWNLOAD_DELAY".
 */
export function startDelay(override: DownloadSlotOverride | undefined, s: Settings): number {
  if (override?.delay !== undefined) return override.delay;
  return s.AUTOTHROTTLE_ENABLED ? autothrottleStartDelay(s) : -1;
}

/** One response as AutoThrottle sees it. */
export interface ThrottleFeedback {
  readonly latency: number | null;
  readonly status: number;
  readonly meta?: Readonly<Record<string, unknown>>;
  /** In flight on the slot including this response. */
  readonly inFlight: number;
  readonly size: number;
}

export interface FeedbackResult {
  readonly adjusted: boolean;
  readonly oldDelay: number;
  /** The AUTOTHROTTLE_DEBUG line, when AUTOTHROTTLE_DEBUG is on and the response was not skipped. */
  readonly debugLine: string | null;
}

/** Feeds one response to the slot's AutoThrottle (SPEC 4.2–4.3). Used by the engine and by `replay`. */
export function applyAutoThrottle(slot: Slot, fb: ThrottleFeedback, s: Settings): FeedbackResult {
  const old = slot.delay;
  if (!s.AUTOTHROTTLE_ENABLED || !autothrottleApplies(fb.latency, fb.meta)) {
    return { adjusted: false, oldDelay: old, debugLine: null };
  }
  slot.delay = autothrottleNextDelay(old, fb.latency, fb.status, autothrottleParams(s));
  const debugLine = s.AUTOTHROTTLE_DEBUG
    ? formatDebugLine({ slot: slot.key, concurrency: fb.inFlight, delay: slot.delay, oldDelay: old, latency: fb.latency, size: fb.size })
    : null;
  return { adjusted: true, oldDelay: old, debugLine };
}
