// The Scrapy debug-log export: one AUTOTHROTTLE_DEBUG line per response AutoThrottle sees, with
// Scrapy's default log prefix, built by the one formatter in shared/debug-line.ts (SPEC 4.3, 7).
import { recordDebugLine, scrapyLogPrefix } from '../../../../shared/debug-line';
import type { ResponseRecord } from '../../../../shared/types';

/**
 * Whether a response gets a debug line: it has a measured latency and is not a failed download
 * (SPEC 4.2: failures never reach AutoThrottle; a row without latency is skipped by it). Imported
 * Scrapy lines have a latency and no failure even when the log did not give their status.
 */
export function hasDebugLine(r: ResponseRecord): boolean {
  return r.latency !== null && !(r.status === null && r.errorKind !== null);
}

/**
 * The line Scrapy would log for this response, prefix and newline included, or null when
 * AutoThrottle would not see it. The time is the response's end (`t`) in this machine's local
 * time zone, as Scrapy's default LOG_DATEFORMAT writes it; `conc` is the slot's in-flight count,
 * `delay` and its diff the slot's delay after and before the response.
 */
export function scrapyDebugLine(r: ResponseRecord): string | null {
  if (!hasDebugLine(r)) return null;
  return `${scrapyLogPrefix(r.t)}${recordDebugLine(r)}\n`;
}
