// One slot's throttle state (SPEC 1, 3, 4.4): its delay, lanes, pins and counters, and the
// rules that derive its effective delay and concurrency from the live settings.

import { drawFactor, type DownloadSlotOverride, type Randomize, type ScopeSettings, type Settings } from '../../../../shared/settings';
import type { DelayCause } from '../../../../shared/types';
import { formatDebugLine } from '../../../../shared/debug-line';
import { autothrottleApplies, autothrottleNextDelay, type AutoThrottleParams } from './autothrottle';
import { BackoffState, backoffDelay, backoffParams, type BackoffParams } from './backoff';
import { RampupState, rampupBegin, rampupDelay, type RampupParams } from './rampup';
import type { HeapItem } from '../heap';
import { RequestQueue, type CrawlRequest } from '../request';

/** A slot's concurrency from the settings alone (no pin, scope, Crawl-delay or override). */
export function settingsConcurrency(s: Settings): number {
  return s.CONCURRENT_REQUESTS_PER_IP > 0 ? s.CONCURRENT_REQUESTS_PER_IP : s.CONCURRENT_REQUESTS_PER_DOMAIN;
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
  readonly backoff = new BackoffState();
  readonly rampup = new RampupState();
  /** robots.txt Crawl-delay in force (seconds, already capped), or null. */
  crawlDelay: number | null = null;
  /** Quota units taken in the current window, and when that window began (SPEC 5.4). */
  quotaUsed = 0;
  quotaWindowStart = -Infinity;
  /** Slots whose next request waits for this scope's concurrency or pause. */
  readonly waiters = new Set<Slot>();

  // The scope's THROTTLING_SCOPES entry and derived parameters, cached per settings object.
  private cfgFor: Settings | null = null;
  private cfg: ScopeSettings | undefined;
  private backoffP!: BackoffParams;
  private atP!: AutoThrottleParams & { readonly enabled: boolean };
  private rampupP: RampupParams | null = null;

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

  constructor(
    readonly key: string,
    readonly override: DownloadSlotOverride | undefined,
    settings: Settings,
  ) {
    this.delay = startDelay(key, override, settings);
  }

  /** THROTTLING_SCOPES settings of this scope (undefined when none), refreshed when settings change. */
  scope(s: Settings): ScopeSettings | undefined {
    if (this.cfgFor !== s) this.refresh(s);
    return this.cfg;
  }

  backoffParams(s: Settings): BackoffParams {
    if (this.cfgFor !== s) this.refresh(s);
    return this.backoffP;
  }

  /** AutoThrottle parameters of this scope: per-scope values replace the global ones (SPEC 4.1). */
  autothrottle(s: Settings): AutoThrottleParams & { readonly enabled: boolean } {
    if (this.cfgFor !== s) this.refresh(s);
    return this.atP;
  }

  private refresh(s: Settings): void {
    this.cfgFor = s;
    this.cfg = s.THROTTLING_SCOPES[this.key];
    this.backoffP = backoffParams(s, this.cfg?.backoff);
    this.atP = scopeAutoThrottle(this.key, s);
    this.rampupP = this.cfg?.rampup ? { target: s.RAMPUP_BACKOFF_TARGET, window: this.backoffP.window } : null;
  }

  /** Rampup parameters when this scope has `rampup: true`, else null. */
  rampupParams(s: Settings): RampupParams | null {
    if (this.cfgFor !== s) this.refresh(s);
    return this.rampupP;
  }

  /** This scope's quota, when it has one. */
  quota(s: Settings): { limit: number; windowMs: number } | null {
    const q = this.scope(s)?.quota;
    if (q === undefined) return null;
    return { limit: q, windowMs: (this.scope(s)?.window ?? s.THROTTLING_WINDOW) * 1000 };
  }

  /** Units left in the window at `now` (Infinity without a quota). */
  quotaLeft(s: Settings, now: number): number {
    const q = this.quota(s);
    if (!q) return Infinity;
    if (now >= this.quotaWindowStart + q.windowMs) return q.limit;
    return q.limit - this.quotaUsed;
  }

  /**
   * When a request costing `cost` may start under the quota: `now` when it fits (an oversized
   * request is let through at the start of a fresh window rather than starving), else the
   * start of the next window.
   */
  quotaReadyAt(s: Settings, cost: number, now: number): number {
    const q = this.quota(s);
    if (!q) return now;
    const end = this.quotaWindowStart + q.windowMs;
    if (now >= end || this.quotaUsed === 0 || this.quotaUsed + cost <= q.limit) return now;
    return end;
  }

  /** Takes `cost` units; returns the start of the window they came from. */
  consumeQuota(s: Settings, cost: number, now: number): number {
    const q = this.quota(s);
    if (!q) return NaN;
    if (now >= this.quotaWindowStart + q.windowMs) {
      this.quotaWindowStart = now;
      this.quotaUsed = 0;
    }
    this.quotaUsed += cost;
    return this.quotaWindowStart;
  }

  /** Settles the difference between the actual and the expected cost, if its window is still current. */
  settleQuota(windowStart: number, diff: number): void {
    if (windowStart === this.quotaWindowStart) this.quotaUsed = Math.max(0, this.quotaUsed + diff);
  }

  /** This scope takes a request (its own, or another slot's): its concurrency and its gap count. */
  beginScope(now: number, s: Settings, random: () => number): void {
    this.inFlight++;
    this.requests++;
    this.lastStart = now;
    this.lastActive = now;
    this.gapFactor = drawFactor(this.randomization(s), random);
    if (this.rampupParams(s)) rampupBegin(this.rampup, now);
  }

  endScope(now: number): void {
    this.inFlight--;
    this.lastActive = now;
  }

  /** Whether this scope lets another request start at `now`, ignoring quota. */
  admits(s: Settings, now: number): boolean {
    return !this.paused && this.inFlight < this.concurrency(s) && this.readyAt(s) <= now;
  }

  concurrency(s: Settings): number {
    if (this.pinConcurrency !== null) return this.pinConcurrency;
    const scoped = this.scope(s)?.concurrency;
    if (scoped !== undefined) return scoped;
    if (this.crawlDelay !== null) return 1;
    if (this.override?.concurrency !== undefined) return this.override.concurrency;
    return settingsConcurrency(s);
  }

  randomization(s: Settings): Randomize {
    if (this.backoff.level > 0 || this.rampupParams(s)) return this.backoffParams(s).jitter;
    const scoped = this.scope(s)?.jitter;
    if (scoped !== undefined) return scoped;
    const r = this.override?.randomize_delay;
    if (r === undefined) return s.RANDOMIZE_DOWNLOAD_DELAY;
    return r ? 0.5 : false;
  }

  /**
   * The configured floor: the scope's delay, else (AutoThrottle off) a DOWNLOAD_SLOTS delay,
   * which replaces DOWNLOAD_DELAY for its slot as in Scrapy, else DOWNLOAD_DELAY.
   */
  floor(s: Settings): number {
    const scoped = this.scope(s)?.delay;
    if (scoped !== undefined) return scoped;
    if (this.override?.delay !== undefined && !this.autothrottle(s).enabled) return this.override.delay;
    return s.DOWNLOAD_DELAY;
  }

  /**
   * The largest of the delay sources (SPEC 4.4), in seconds, and which one binds: the floor,
   * AutoThrottle's delay (or a user's pin in place of both), robots.txt Crawl-delay, backoff,
   * rampup, and a Retry-After block (as the time left from `now`, when given).
   */
  effectiveDelay(s: Settings, now?: number): { delay: number; cause: DelayCause } {
    let delay = this.delaySeconds(s);
    let cause: DelayCause;
    const rp = this.rampupParams(s);
    if (rp && rampupDelay(this.rampup, this.rampupTime(now), rp) === delay) cause = 'rampup';
    else if (this.backoff.level > 0 && backoffDelay(this.backoff, this.backoffParams(s)) === delay) cause = 'backoff';
    else if (this.crawlDelay !== null && this.crawlDelay === delay) cause = 'crawl-delay';
    else if (this.pinDelay !== null) cause = 'pin';
    else if (this.learned() > this.floor(s)) cause = this.autothrottle(s).enabled ? 'autothrottle' : 'floor';
    else cause = 'floor';
    if (now !== undefined && this.backoff.blockedUntil > now) {
      const left = (this.backoff.blockedUntil - now) / 1000;
      if (left >= delay) {
        delay = left;
        cause = 'retry-after';
      }
    }
    return { delay, cause: delay > 0 ? cause : 'none' };
  }

  /** Seconds of the effective delay, without a Retry-After block (hot path: no allocation). */
  delaySeconds(s: Settings): number {
    let d: number;
    if (this.pinDelay !== null) d = this.pinDelay;
    else {
      const floor = this.floor(s);
      const own = this.learned();
      d = own > floor ? own : floor;
    }
    if (this.crawlDelay !== null && this.crawlDelay > d) d = this.crawlDelay;
    if (this.backoff.level > 0) {
      const b = backoffDelay(this.backoff, this.backoffParams(s));
      if (b > d) d = b;
    }
    const rp = this.rampupParams(s);
    if (rp) {
      const r = rampupDelay(this.rampup, this.rampupTime(), rp);
      if (r > d) d = r;
    }
    return d;
  }

  /** The slot's own delay before floors, pins and backoff: AutoThrottle's, or the configured one. */
  ownDelay(s: Settings): number {
    return this.delay === -1 ? s.DOWNLOAD_DELAY : this.delay;
  }

  /** Its own delay when it has one (AutoThrottle's, or a DOWNLOAD_SLOTS delay); 0 when it follows the floor. */
  private learned(): number {
    return this.delay === -1 ? 0 : this.delay;
  }

  /** Rampup's rate is read at the latest start (or `now` before any): the gap after a start follows the rate then. */
  private rampupTime(now?: number): number {
    return this.lastStart > -Infinity ? this.lastStart : now ?? 0;
  }

  /** Earliest time (epoch ms) the next request may start, ignoring concurrency. */
  readyAt(s: Settings): number {
    let t = this.lastStart + this.delaySeconds(s) * 1000 * this.gapFactor;
    if (this.backoff.blockedUntil > t) t = this.backoff.blockedUntil;
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

/** AutoThrottle for one scope: THROTTLING_SCOPES' delay replaces mindelay, its autothrottle map the rest (SPEC 4.1). */
export function scopeAutoThrottle(key: string, s: Settings): AutoThrottleParams & { readonly enabled: boolean; readonly startDelay: number } {
  const scope = s.THROTTLING_SCOPES[key];
  const at = scope?.autothrottle;
  const mindelay = scope?.delay ?? s.DOWNLOAD_DELAY;
  return {
    enabled: at?.enabled ?? s.AUTOTHROTTLE_ENABLED,
    mindelay,
    maxdelay: at?.max_delay ?? s.AUTOTHROTTLE_MAX_DELAY,
    target: at?.target_concurrency ?? s.AUTOTHROTTLE_TARGET_CONCURRENCY,
    startDelay: Math.max(mindelay, at?.start_delay ?? s.AUTOTHROTTLE_START_DELAY),
  };
}

/**
 * A new slot's delay: DOWNLOAD_SLOTS' delay, else AutoThrottle's start delay; with AutoThrottle
 * off and no override, −1 means "no delay of its own: follow the live floor".
 */
export function startDelay(key: string, override: DownloadSlotOverride | undefined, s: Settings): number {
  if (override?.delay !== undefined) return override.delay;
  const at = scopeAutoThrottle(key, s);
  return at.enabled ? at.startDelay : -1;
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
  const p = slot.autothrottle(s);
  if (!p.enabled || !autothrottleApplies(fb.latency, fb.meta)) {
    return { adjusted: false, oldDelay: old, debugLine: null };
  }
  slot.delay = autothrottleNextDelay(old, fb.latency, fb.status, p);
  const debugLine = s.AUTOTHROTTLE_DEBUG
    ? formatDebugLine({ slot: slot.key, concurrency: fb.inFlight, delay: slot.delay, oldDelay: old, latency: fb.latency, size: fb.size })
    : null;
  return { adjusted: true, oldDelay: old, debugLine };
}
