// Throttle rules that the engine, the slot rows and the renderer's charts all need, written once:
// a slot's concurrency from the settings, and AutoThrottle's parameters for one scope (SPEC 4.1).

import type { DownloadSlotOverride, ScopeSettings, Settings } from './settings';

/** A slot's concurrency from the settings alone (no pin, scope, Crawl-delay or override). */
export function settingsConcurrency(s: Settings): number {
  return s.CONCURRENT_REQUESTS_PER_IP > 0 ? s.CONCURRENT_REQUESTS_PER_IP : s.CONCURRENT_REQUESTS_PER_DOMAIN;
}

/** A map entry that is the map's own (a key such as `constructor` is a plain key, never a prototype member). */
function own<T>(map: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return map !== undefined && Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

/** A scope's THROTTLING_SCOPES entry and DOWNLOAD_SLOTS override, by its key. */
export function scopeConfig(key: string, s: Settings): { readonly scope: ScopeSettings | undefined; readonly override: DownloadSlotOverride | undefined } {
  return { scope: own(s.THROTTLING_SCOPES, key), override: own(s.DOWNLOAD_SLOTS, key) };
}

/**
 * A slot's concurrency (SPEC 3, 5.5): a user's pin, else its THROTTLING_SCOPES concurrency, else 1
 * under a robots.txt Crawl-delay, else its DOWNLOAD_SLOTS concurrency, else the settings'.
 */
export function concurrencyLimit(
  scope: ScopeSettings | undefined, override: DownloadSlotOverride | undefined, s: Settings, pin: number | null, crawlDelay: boolean,
): number {
  if (pin !== null) return pin;
  if (scope?.concurrency !== undefined) return scope.concurrency;
  if (crawlDelay) return 1;
  if (override?.concurrency !== undefined) return override.concurrency;
  return settingsConcurrency(s);
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
  const scope = own(s.THROTTLING_SCOPES, key);
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
