// Throttle rules that the engine, the slot rows and the renderer's charts all need, written once:
// a slot's concurrency from the settings, and AutoThrottle's parameters for one scope (SPEC 4.1).

import type { Settings } from './settings';

/** A slot's concurrency from the settings alone (no pin, scope, Crawl-delay or override). */
export function settingsConcurrency(s: Settings): number {
  return s.CONCURRENT_REQUESTS_PER_IP > 0 ? s.CONCURRENT_REQUESTS_PER_IP : s.CONCURRENT_REQUESTS_PER_DOMAIN;
}

/** AutoThrottle's parameters for one scope. */
export interface ScopeAutoThrottleParams {
  readonly enabled: boolean;
  /** DOWNLOAD_DELAY, or the scope's delay: the floor. */
  readonly mindelay: number;
  /** AUTOTHROTTLE_MAX_DELAY. */
  readonly maxdelay: number;
  /** AUTOTHROTTLE_TARGET_CONCURRENCY. */
  readonly target: number;
  /** A new slot's delay: max(mindelay, START_DELAY), not capped by maxdelay. */
  readonly startDelay: number;
}

/** AutoThrottle for one scope: THROTTLING_SCOPES' delay replaces mindelay, its autothrottle map the rest (SPEC 4.1). */
export function scopeAutoThrottle(key: string, s: Settings): ScopeAutoThrottleParams {
  const scope = Object.prototype.hasOwnProperty.call(s.THROTTLING_SCOPES, key) ? s.THROTTLING_SCOPES[key] : undefined;
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
