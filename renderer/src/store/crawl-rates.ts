// Requests and bytes per second of each crawl over its last 10 seconds, from the counters that
// 'crawl.status' carries about once a second (the host sends totals; rates are differences).

import type { CrawlStatsWire } from '../../../shared/contract';
import { FrameStore, type Scheduler } from './frame-store';

/** The window the header's rates cover, in ms. */
export const RATE_WINDOW_MS = 10_000;

interface Sample {
  readonly t: number;
  readonly requests: number;
  readonly bytes: number;
}

export interface CrawlRate {
  readonly requestsPerSecond: number;
  readonly bytesPerSecond: number;
  /** Milliseconds the two samples the rate comes from lie apart (up to the window). */
  readonly overMs: number;
}

export class CrawlRates extends FrameStore {
  private readonly samples = new Map<number, Sample[]>();
  private readonly rates = new Map<number, CrawlRate | null>();

  constructor(private readonly now: () => number = () => Date.now(), schedule?: Scheduler) {
    super(schedule);
  }

  /** The rate over the last 10 s; null until two samples of a live crawl lie at least 0.5 s apart. */
  rate(crawlId: number): CrawlRate | null {
    return this.rates.get(crawlId) ?? null;
  }

  /** Adds the figures of one 'crawl.status' (or 'crawls.stats' answer). */
  add(crawlId: number, stats: CrawlStatsWire): void {
    const live = stats.status === 'running' || stats.status === 'paused';
    if (!live) {
      if (this.samples.delete(crawlId) || this.rates.get(crawlId)) {
        this.rates.set(crawlId, null);
        this.changed();
      }
      return;
    }
    const t = this.now();
    let list = this.samples.get(crawlId);
    if (!list) this.samples.set(crawlId, (list = []));
    const last = list[list.length - 1];
    // A restart of the counters (never expected) starts the window again.
    if (last && (stats.requests < last.requests || stats.bytes < last.bytes)) list.length = 0;
    list.push({ t, requests: stats.requests, bytes: stats.bytes });
    // Keep the samples inside the window (and at least two).
    while (list.length > 2 && list[0].t < t - RATE_WINDOW_MS) list.shift();
    const first = list[0];
    const span = t - first.t;
    const rate = span >= 500 && list.length >= 2
      ? { requestsPerSecond: ((stats.requests - first.requests) * 1000) / span, bytesPerSecond: ((stats.bytes - first.bytes) * 1000) / span, overMs: span }
      : null;
    this.rates.set(crawlId, rate);
    this.changed();
  }
}
