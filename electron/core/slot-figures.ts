// A slot's figures for the slot table, counted from the response records of a crawl the core does
// not run itself (a Scrapy crawl streamed in, a shared crawl's workers): one shape, one count.

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
