// What a crawl needs to continue after a crash or a quit, as records: the saved frontier, each
// slot's learned throttle state and the figures so far. Written by the engine (engine/resume.ts)
// and kept by the store (store/frontier-store.ts); here so the store never imports the engine.

/** One URL still to fetch, as saved. */
export interface SavedRequest {
  readonly seq: number;
  readonly url: string;
  readonly depth: number;
  readonly priority: number;
  readonly redirects: number;
  readonly retries: number;
  readonly meta: Record<string, unknown>;
}

/** A slot's learned throttle state (SPEC 4.4's sources that are learned or set by the user). JSON-safe. */
export interface SlotSnapshot {
  /** The slot's own delay: AutoThrottle's when on (seconds). */
  readonly delay: number;
  readonly paused: boolean;
  readonly pinDelay: number | null;
  readonly pinConcurrency: number | null;
  /** robots.txt Crawl-delay in force (seconds). */
  readonly crawlDelay: number | null;
  readonly backoff: {
    readonly level: number;
    readonly base: number;
    /** Epoch ms; null for never. */
    readonly lastStepAt: number | null;
    readonly quietSince: number | null;
    readonly good: number;
    /** Retry-After block end (epoch ms); 0 = none. */
    readonly blockedUntil: number;
    readonly blockReason: string;
  };
}

/** A slot's running totals from the history (slot_stats), so the slot table continues where it was. */
export interface SlotTotals {
  readonly requests: number;
  readonly responses: number;
  readonly failures: number;
  readonly bytes: number;
  readonly s2xx: number;
  readonly s3xx: number;
  readonly s4xx: number;
  readonly s5xx: number;
  readonly s429: number;
  readonly latencySum: number;
  readonly latencyN: number;
  readonly lastLatency: number | null;
}

export interface SavedSlot {
  readonly key: string;
  /** Null when no snapshot was recorded: the slot restarts from the settings. */
  readonly state: SlotSnapshot | null;
  readonly totals: SlotTotals | null;
}

/** Everything `Crawler.startFrom` needs. */
export interface SavedCrawl {
  /** Every URL the crawl accepted, in any state (for de-duplication). */
  readonly seen: Iterable<string>;
  /** URLs still to fetch, in acceptance order (those in flight at the crash included, once). */
  readonly pending: readonly SavedRequest[];
  /** URLs given up because they were in flight at two interrupted runs. */
  readonly givenUp: readonly string[];
  /** How many of them were in flight when the previous run ended. */
  readonly wasInFlight: number;
  /** Page URLs accepted so far (counted against follow.max_pages). */
  readonly accepted: number;
  /** The next acceptance number. */
  readonly nextSeq: number;
  readonly slots: readonly SavedSlot[];
  readonly totals: {
    readonly requests: number;
    readonly responses: number;
    readonly failures: number;
    readonly bytes: number;
    readonly byStatus: Readonly<Record<string, number>>;
  };
  /** When the crawl first started (epoch ms). */
  readonly startedAt: number | null;
}
