// One scope's throttle policy state (SPEC 3, 4.4, 5): its AutoThrottle delay, pins, pause, backoff,
// rampup, Crawl-delay and quota, and the rules deriving its effective delay and concurrency from
// the live settings. It knows nothing of queues, lanes or the heap (those are the runtime slot's).

import { drawFactor, type DownloadSlotOverride, type Randomize, type ScopeSettings, type Settings } from '../../../../shared/settings';
import { concurrencyLimit, scopeAutoThrottle, scopeConfig, type ScopeAutoThrottleParams } from '../../../../shared/throttle-rules';
import type { DelayCause } from '../../../../shared/types';
import { BackoffState, backoffDelay, backoffParams, type BackoffParams } from './backoff';
import { RampupState, rampupBegin, rampupRate, type RampupParams } from './rampup';
import { HeaderPace, headerPaceBegin } from './ratelimit';

/**
 * Share of a paced gap that is kept once a window's worth of starts is known: the window then
 * holds the rate, and the shorter gap lets a start that a late timer delayed be caught up by the
 * next ones (a full gap would carry every timer's lateness into the rate). The first window is
 * spread with the full gap, and the window repeats that spacing.
 */
export const CATCH_UP = 0.75;

export class SlotPolicy {
  /** The scope's own delay: AutoThrottle's when it is on, a DOWNLOAD_SLOTS delay, or −1 (follow the live floor). Seconds. */
  delay: number;
  paused = false;
  pinDelay: number | null = null;
  pinConcurrency: number | null = null;
  readonly backoff = new BackoffState();
  readonly rampup = new RampupState();
  /** Pacing by the server's RateLimit headers, made on the first response that carries them. */
  headerPace: HeaderPace | null = null;
  /** robots.txt Crawl-delay in force (seconds, already capped), or null. */
  crawlDelay: number | null = null;
  /** Quota units taken in the current window, and when that window began (SPEC 5.4). */
  quotaUsed = 0;
  quotaWindowStart = -Infinity;
  /** Start time of the latest request, epoch ms (−∞: the first request does not wait). */
  lastStart = -Infinity;
  /** Multiplier drawn once per gap for randomized delays (SPEC 3.3). */
  gapFactor = 1;

  // The scope's THROTTLING_SCOPES entry and derived parameters, cached per settings object.
  private cfgFor: Settings | null = null;
  private cfg: ScopeSettings | undefined;
  private backoffP!: BackoffParams;
  private atP!: ScopeAutoThrottleParams;
  private rampupP: RampupParams | null = null;

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
  autothrottle(s: Settings): ScopeAutoThrottleParams {
    if (this.cfgFor !== s) this.refresh(s);
    return this.atP;
  }

  private refresh(s: Settings): void {
    this.cfgFor = s;
    this.cfg = scopeConfig(this.key, s).scope;
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

  /** A request of this scope started at `now`: the next gap counts from here, with its own random draw. */
  started(now: number, s: Settings, random: () => number): void {
    this.lastStart = now;
    this.gapFactor = drawFactor(this.randomization(s), random);
    if (this.rampupParams(s)) rampupBegin(this.rampup, now);
    if (this.headerPace !== null) headerPaceBegin(this.headerPace, now);
  }

  /**
   * A request that began at `begin` went onto the wire at `t`: the pacing windows count it from
   * then (under load the write can come tens of ms after the start, and the server sees the write).
   */
  paceSent(begin: number, t: number): void {
    if (t <= begin) return;
    if (this.rampup.recent.count > 0) this.rampup.recent.replace(begin, t);
    if (this.headerPace !== null) this.headerPace.starts.replace(begin, t);
  }

  /** Whether the server's RateLimit headers pace this scope (THROTTLING_RATELIMIT_PACE and a known limit and window). */
  headerPaced(s: Settings): boolean {
    return this.headerPace !== null && this.headerPace.active && s.THROTTLING_RATELIMIT_PACE;
  }

  /** Rampup's window: at most round(rate × span) starts in that many / rate seconds; −∞ before any start. */
  private rampupWindowReadyAt(rp: RampupParams): number {
    const r = this.rampup;
    if (this.lastStart === -Infinity) return -Infinity;
    const rate = rampupRate(r, this.lastStart, rp);
    const n = Math.max(1, Math.round(rate * r.span));
    return r.recent.windowReadyAt(n, (n / rate) * 1000);
  }

  /** Rampup's gap (s): 1 / rate. */
  private rampupGap(rp: RampupParams): number {
    return 1 / rampupRate(this.rampup, this.rampupTime(), rp);
  }

  /**
   * Whether the binding delay is a paced one (RateLimit headers or rampup) whose window already
   * holds a window's worth of starts: the gap may then shrink to CATCH_UP of itself, the window
   * keeping the rate.
   */
  private windowHolds(s: Settings, delay: number): boolean {
    if (this.headerPaced(s)) {
      const hp = this.headerPace!;
      return hp.gapSeconds() === delay && hp.starts.nth(hp.perWindow()) > -Infinity;
    }
    const rp = this.rampupParams(s);
    if (!rp || this.lastStart === -Infinity) return false;
    const rate = rampupRate(this.rampup, this.lastStart, rp);
    if (1 / rate !== delay) return false;
    return this.rampup.recent.nth(Math.max(1, Math.round(rate * this.rampup.span))) > -Infinity;
  }

  concurrency(s: Settings): number {
    return concurrencyLimit(this.scope(s), this.override, s, this.pinConcurrency, this.crawlDelay !== null);
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
    const paced = this.headerPaced(s);
    if (paced && this.headerPace!.gapSeconds() === delay) cause = 'ratelimit';
    else if (rp && !paced && this.rampupGap(rp) === delay) cause = 'rampup';
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
    if (this.headerPaced(s)) {
      // The server's own limit replaces rampup's search for it.
      const h = this.headerPace!.gapSeconds();
      if (h > d) d = h;
    } else {
      const rp = this.rampupParams(s);
      if (rp) {
        const r = this.rampupGap(rp);
        if (r > d) d = r;
      }
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

  /**
   * Earliest time (epoch ms) the scope's delay lets the next request start (SPEC 3.3): the latest
   * start plus the effective delay with this gap's random factor, never before a delay the server
   * declared: a Crawl-delay is a hard floor at the server, so randomization only lengthens it, and
   * a Retry-After / RateLimit block is waited out whole.
   */
  gapReadyAt(s: Settings): number {
    const delay = this.delaySeconds(s);
    let gap = delay * 1000 * this.gapFactor;
    if (this.windowHolds(s, delay)) gap *= CATCH_UP;
    if (this.crawlDelay !== null && gap < this.crawlDelay * 1000) gap = this.crawlDelay * 1000;
    let t = this.lastStart + gap;
    // The pacing windows: never more in a window than its rate allows, whatever the gaps were.
    if (this.headerPaced(s)) {
      const w = this.headerPace!.readyAt();
      if (w > t) t = w;
    } else {
      const rp = this.rampupParams(s);
      if (rp) {
        const w = this.rampupWindowReadyAt(rp);
        if (w > t) t = w;
      }
    }
    return this.backoff.blockedUntil > t ? this.backoff.blockedUntil : t;
  }
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

/** Switching AutoThrottle on or off live: slots take up or drop their learned delay, as Scrapy's new slots would. */
export function autothrottleSwitched(p: SlotPolicy, s: Settings): void {
  if (s.AUTOTHROTTLE_ENABLED && p.delay === -1) p.delay = startDelay(p.key, p.override, s);
  else if (!s.AUTOTHROTTLE_ENABLED) p.delay = startDelay(p.key, p.override, s);
}
