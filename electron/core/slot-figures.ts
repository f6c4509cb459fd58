// A slot's figures for the slot table, counted from the response records of a crawl the core does
// not run itself (a Scrapy crawl streamed in, a shared crawl's workers): one shape, one count.

import type { SlotSummary } from './store/queries';

/** What a slot row shows of the responses recorded so far. */
export interface SlotFigures {
  requests: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s5xx: number;
  s429: number;
  failures: number;
  bytes: number;
  lastLatency: number | null;
  latencySum: number;
  latencyCount: number;
}

export function emptySlotFigures(): SlotFigures {
  return { requests: 0, s2xx: 0, s3xx: 0, s4xx: 0, s5xx: 0, s429: 0, failures: 0, bytes: 0, lastLatency: null, latencySum: 0, latencyCount: 0 };
}

/** Counts one response (status null: a failed download) into its slot's figures. */
export function countResponse(f: SlotFigures, r: { readonly status: number | null; readonly latency: number | null; readonly bytes: number }): void {
  f.requests++;
  f.bytes += r.bytes;
  if (r.latency !== null) {
    f.lastLatency = r.latency;
    f.latencySum += r.latency;
    f.latencyCount++;
  }
  if (r.status === null) {
    f.failures++;
    return;
  }
  const k = Math.floor(r.status / 100);
  if (k === 2) f.s2xx++;
  else if (k === 3) f.s3xx++;
  else if (k === 4) f.s4xx++;
  else if (k === 5) f.s5xx++;
  if (r.status === 429) f.s429++;
}

/** Adds what the history already holds of a slot (a crawl taken up again counts from there). */
export function countStored(f: SlotFigures, s: SlotSummary): void {
  f.requests += s.requests;
  f.s2xx += s.s2xx;
  f.s3xx += s.s3xx;
  f.s4xx += s.s4xx;
  f.s5xx += s.s5xx;
  f.s429 += s.s429;
  f.failures += s.failures;
  f.bytes += s.bytes;
  f.lastLatency ??= s.lastLatency;
  // The stored mean, weighted by the slot's responses (the table shows the mean).
  if (s.avgLatency !== null) {
    f.latencySum += s.avgLatency * s.responses;
    f.latencyCount += s.responses;
  }
}
