// The engine's warnings (SPEC 5.6): settings that cannot take effect, delays stuck at the max,
// concurrency below target, signs of rate limiting or soft blocks, and CDN-hidden latency.
// Each cause is reported once (per slot where it is about one), in plain words with a fix.

import type { Settings } from '../../../shared/settings';
import type { Slot } from './slot';

export type Warn = (code: string, slot: string | null, text: string) => void;

/** How many responses a pattern must hold for before it is reported. */
export const STREAK = 10;
const SMALL_BODY = 4096;
const CDN_LATENCY_S = 0.03;

interface SlotWatch {
  atMaxStreak: number;
  fastErrorStreak: number;
  sameSizeStreak: number;
  lastSize: number;
  sizesSeen: Set<number>;
  okLatencySum: number;
  okCount: number;
  latencySum: number;
  count: number;
  cacheHits: number;
  backlogSamples: number;
  backlogInFlightSum: number;
}

export interface ResponseFacts {
  readonly status: number | null;
  readonly latency: number | null;
  readonly bytes: number;
  readonly headers: Readonly<Record<string, string | string[]>> | null;
}

function h(headers: ResponseFacts['headers'], name: string): string {
  const v = headers?.[name];
  return (Array.isArray(v) ? v.join(',') : v ?? '').toLowerCase();
}

export class WarningWatch {
  private readonly slots = new Map<string, SlotWatch>();
  private delayedWarned = false;

  constructor(private readonly warn: Warn) {}

  /** Settings that cannot take effect as configured (at start and after every change). */
  checkSettings(s: Settings): void {
    if (s.AUTOTHROTTLE_ENABLED && s.AUTOTHROTTLE_TARGET_CONCURRENCY > s.CONCURRENT_REQUESTS_PER_DOMAIN) {
      this.warn('target-above-concurrency', null,
        `AUTOTHROTTLE_TARGET_CONCURRENCY (${s.AUTOTHROTTLE_TARGET_CONCURRENCY}) is above CONCURRENT_REQUESTS_PER_DOMAIN ` +
        `(${s.CONCURRENT_REQUESTS_PER_DOMAIN}): no slot can reach the target. Raise CONCURRENT_REQUESTS_PER_DOMAIN or lower the target.`);
    }
    if (s.AUTOTHROTTLE_ENABLED && s.AUTOTHROTTLE_MAX_DELAY < s.DOWNLOAD_DELAY) {
      this.warn('max-below-floor', null,
        `AUTOTHROTTLE_MAX_DELAY (${s.AUTOTHROTTLE_MAX_DELAY} s) is below DOWNLOAD_DELAY (${s.DOWNLOAD_DELAY} s): ` +
        `AutoThrottle caps delays at the max, so the DOWNLOAD_DELAY floor never holds. Raise AUTOTHROTTLE_MAX_DELAY.`);
    }
    if (s.CONCURRENT_REQUESTS > 0 && s.CONCURRENT_REQUESTS < s.CONCURRENT_REQUESTS_PER_DOMAIN) {
      this.warn('global-below-domain', null,
        `CONCURRENT_REQUESTS (${s.CONCURRENT_REQUESTS}) is below CONCURRENT_REQUESTS_PER_DOMAIN (${s.CONCURRENT_REQUESTS_PER_DOMAIN}): ` +
        `one slot can never use all its lanes. Raise CONCURRENT_REQUESTS or lower the per-domain value.`);
    }
  }

  /** Requests waiting in memory (queued and waiting for robots.txt). */
  checkDelayed(waiting: number, s: Settings): void {
    if (this.delayedWarned || waiting < s.DELAYED_REQUESTS_WARN_THRESHOLD) return;
    this.delayedWarned = true;
    this.warn('delayed-requests', null,
      `${waiting} requests are waiting in memory (DELAYED_REQUESTS_WARN_THRESHOLD ${s.DELAYED_REQUESTS_WARN_THRESHOLD}): ` +
      `the crawl finds URLs faster than the throttle lets it fetch them. Narrow the follow rules or a page limit, or allow more concurrency where the sites can take it.`);
  }

  /**
   * One response of `slot` (after AutoThrottle and backoff have seen it), `inFlight` on the slot
   * when it arrived (this one included). `r` is the download's result itself: no object per response.
   */
  onResponse(slot: Slot, r: ResponseFacts, inFlight: number, s: Settings): void {
    let w = this.slots.get(slot.key);
    if (!w) {
      w = { atMaxStreak: 0, fastErrorStreak: 0, sameSizeStreak: 0, lastSize: -1, sizesSeen: new Set(), okLatencySum: 0, okCount: 0,
        latencySum: 0, count: 0, cacheHits: 0, backlogSamples: 0, backlogInFlightSum: 0 };
      this.slots.set(slot.key, w);
    }
    if (r.status === null || r.latency === null) return;
    const key = slot.key;
    const at = slot.autothrottle(s);
    w.count++;
    w.latencySum += r.latency;
    const avgLatency = w.latencySum / w.count;

    // Delay stuck at AUTOTHROTTLE_MAX_DELAY.
    if (at.enabled && slot.delay >= at.maxdelay) {
      if (++w.atMaxStreak === STREAK * 2) {
        this.warn('delay-at-max', key,
          `${key}: the AutoThrottle delay has stayed at AUTOTHROTTLE_MAX_DELAY (${at.maxdelay} s) for ${STREAK * 2} responses ` +
          `(latency about ${avgLatency.toFixed(2)} s). The server is slow or overloaded; let it rest (pause the slot) or raise the max if you accept slower crawling.`);
      }
    } else w.atMaxStreak = 0;

    // DOWNLOAD_DELAY at or above the latency: lanes never overlap.
    const conc = slot.concurrency(s);
    const floor = slot.floor(s);
    if (conc > 1 && floor > 0 && w.count >= STREAK && floor >= avgLatency) {
      this.warn('delay-makes-concurrency-1', key,
        `${key}: the delay (${floor} s) is at least the latency (${avgLatency.toFixed(2)} s), so requests never overlap and ` +
        `a concurrency of ${conc} has no effect. Lower the delay, or set the concurrency to 1 to say what happens.`);
    }

    // Achieved concurrency below the target while requests wait.
    if (at.enabled && slot.queue.size > 0) {
      w.backlogSamples++;
      w.backlogInFlightSum += inFlight;
      if (w.backlogSamples === STREAK * 5) {
        const mean = w.backlogInFlightSum / w.backlogSamples;
        if (mean < at.target * 0.5) {
          const cause = slot.effectiveDelay(s).cause;
          this.warn('concurrency-below-target', key,
            `${key}: ${mean.toFixed(2)} requests in flight on average while requests wait, below AUTOTHROTTLE_TARGET_CONCURRENCY (${at.target}); ` +
            `what binds is the ${cause} delay. Lower that delay or the target to what the site allows.`);
        }
      }
    }

    // Fast non-2xx/3xx answers: a rate limiter or a block rather than real pages.
    if (r.status >= 200 && r.status < 400) {
      if (r.status === 200) {
        w.okLatencySum += r.latency;
        w.okCount++;
      }
      w.fastErrorStreak = 0;
    } else {
      const okAvg = w.okCount >= 5 ? w.okLatencySum / w.okCount : 0.05 / 0.5;
      // A slow error (e.g. one that opened a connection) does not count, but does not end the run either.
      if (r.latency < okAvg * 0.5) {
        if (++w.fastErrorStreak === STREAK) {
          this.warn('fast-errors', key,
            `${key}: ${STREAK} error responses without a good one between (last: ${r.status}) came back in under half the time of its pages: ` +
            `likely a rate limit or a block. Add the status to BACKOFF_HTTP_CODES, slow the slot down, or pause it and check the site.`);
        }
      }
    }

    // Near-identical small 200 bodies after varied ones: a soft block page.
    if (r.status === 200) {
      if (r.bytes === w.lastSize && r.bytes < SMALL_BODY) {
        if (++w.sameSizeStreak === STREAK && w.sizesSeen.size > 1) {
          this.warn('soft-block', key,
            `${key}: ${STREAK + 1} pages in a row came back with the same small size (${r.bytes} bytes) after varied pages: ` +
            `a soft block ("please slow down" page)? Check a page; pause or slow the slot.`);
        }
      } else w.sameSizeStreak = 0;
      w.lastSize = r.bytes;
      if (w.sizesSeen.size < 8) w.sizesSeen.add(r.bytes);
    }

    // CDN cache hits: latency does not show the origin's load.
    if (r.latency < CDN_LATENCY_S && (Number(h(r.headers, 'age')) > 0 || h(r.headers, 'x-cache').includes('hit') || h(r.headers, 'cf-cache-status') === 'hit')) {
      if (++w.cacheHits === STREAK * 2) {
        this.warn('cdn-cache', key,
          `${key}: responses come from a CDN cache (Age / X-Cache / CF-Cache-Status) in under ${CDN_LATENCY_S * 1000} ms, so latency ` +
          `does not show the origin's load and AutoThrottle will speed up too much. Set a DOWNLOAD_DELAY floor for this site.`);
      }
    }
  }
}
