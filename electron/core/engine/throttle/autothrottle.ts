// Scrapy's AutoThrottle, exactly (SPEC 4): a pure function of the slot's delay, one response's
// latency and status, and the parameters. The recorded Scrapy cases replay through this code.

import type { Settings } from '../../../../shared/settings';

export interface AutoThrottleParams {
  /** DOWNLOAD_DELAY (or a scope's delay): the floor. */
  readonly mindelay: number;
  /** AUTOTHROTTLE_MAX_DELAY. */
  readonly maxdelay: number;
  /** AUTOTHROTTLE_TARGET_CONCURRENCY. */
  readonly target: number;
}

export function autothrottleParams(s: Settings): AutoThrottleParams {
  return { mindelay: s.DOWNLOAD_DELAY, maxdelay: s.AUTOTHROTTLE_MAX_DELAY, target: s.AUTOTHROTTLE_TARGET_CONCURRENCY };
}

/** A new slot's delay with AutoThrottle on: max(mindelay, START_DELAY), not capped by maxdelay. */
export function autothrottleStartDelay(s: Settings): number {
  return Math.max(s.DOWNLOAD_DELAY, s.AUTOTHROTTLE_START_DELAY);
}

/** Whether a response feeds AutoThrottle at all (SPEC 4.2: latency measured, not opted out). */
export function autothrottleApplies(latency: number | null | undefined, meta: Readonly<Record<string, unknown>> | undefined): latency is number {
  return latency !== null && latency !== undefined && !(meta && meta.autothrottle_dont_adjust_delay === true);
}

/** The slot's next delay after one response (SPEC 4.2 steps 1–6, in that order). */
export function autothrottleNextDelay(old: number, latency: number, status: number, p: AutoThrottleParams): number {
  const target = latency / p.target;
  const avg = (old + target) / 2;
  let next = Math.max(target, avg);
  next = Math.min(Math.max(p.mindelay, next), p.maxdelay);
  if (status !== 200 && next <= old) return old;
  return next;
}
