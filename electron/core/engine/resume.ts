// What a crawl needs to continue after a crash or a quit (crash-safe resume): the engine's side of
// the saved records (../saved-crawl.ts): the frontier sink, and a slot's state snapshot taken and restored.

import type { CrawlRequest } from './request';
import type { Slot } from './slot';
import type { SavedSlot, SlotSnapshot } from '../saved-crawl';

export type { SavedCrawl, SavedRequest, SavedSlot, SlotSnapshot, SlotTotals } from '../saved-crawl';

/** Where the crawl reports its frontier (the store's frontier table). Every call is synchronous and cheap. */
export interface FrontierSink {
  /** A URL was accepted (seed, link or redirect target) and queued; `req.seq` is its number. */
  queued(req: CrawlRequest): void;
  /** Its request was handed to the HTTP client. */
  started(req: CrawlRequest): void;
  /** Back in the queue (retry after backoff feedback, or cancelled by stop/quit), with its current retries and priority. */
  requeued(req: CrawlRequest): void;
  /** Nothing more will be fetched for it. Called right after its response was reported, so both commit together. */
  done(req: CrawlRequest): void;
}

const orNull = (t: number): number | null => (Number.isFinite(t) ? t : null);

/** The learned state of a slot, as saved. */
export function snapshotSlot(slot: Slot): SlotSnapshot {
  const b = slot.backoff;
  return {
    delay: slot.delay,
    paused: slot.paused,
    pinDelay: slot.pinDelay,
    pinConcurrency: slot.pinConcurrency,
    crawlDelay: slot.crawlDelay,
    backoff: {
      level: b.level,
      base: b.base,
      lastStepAt: orNull(b.lastStepAt),
      quietSince: orNull(b.quietSince),
      good: b.good,
      blockedUntil: b.blockedUntil,
      blockReason: b.blockReason,
    },
  };
}

/** Whether the slot's state differs from a snapshot (cheap: no allocation). */
export function slotChanged(slot: Slot, s: SlotSnapshot): boolean {
  const b = slot.backoff;
  const sb = s.backoff;
  return slot.delay !== s.delay || slot.paused !== s.paused || slot.pinDelay !== s.pinDelay ||
    slot.pinConcurrency !== s.pinConcurrency || slot.crawlDelay !== s.crawlDelay || b.level !== sb.level ||
    b.base !== sb.base || orNull(b.lastStepAt) !== sb.lastStepAt || orNull(b.quietSince) !== sb.quietSince ||
    b.good !== sb.good || b.blockedUntil !== sb.blockedUntil || b.blockReason !== sb.blockReason;
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Puts a saved state (and totals) back into a slot. Tolerates missing or malformed fields. */
export function restoreSlot(slot: Slot, saved: SavedSlot): void {
  const s = saved.state;
  if (s) {
    slot.delay = num(s.delay, slot.delay);
    slot.paused = s.paused === true;
    slot.pinDelay = numOrNull(s.pinDelay);
    slot.pinConcurrency = numOrNull(s.pinConcurrency);
    slot.crawlDelay = numOrNull(s.crawlDelay);
    const b = s.backoff;
    if (b && typeof b === 'object') {
      slot.backoff.level = num(b.level, 0);
      slot.backoff.base = num(b.base, 0);
      slot.backoff.lastStepAt = num(b.lastStepAt, -Infinity);
      slot.backoff.quietSince = num(b.quietSince, -Infinity);
      slot.backoff.good = num(b.good, 0);
      slot.backoff.blockedUntil = num(b.blockedUntil, 0);
      slot.backoff.blockReason = typeof b.blockReason === 'string' ? b.blockReason : '';
    }
  }
  const t = saved.totals;
  if (t) {
    slot.requests = t.requests;
    slot.responses = t.responses;
    slot.failures = t.failures;
    slot.bytes = t.bytes;
    slot.byClass[2] = t.s2xx;
    slot.byClass[3] = t.s3xx;
    slot.byClass[4] = t.s4xx;
    slot.byClass[5] = t.s5xx;
    slot.s429 = t.s429;
    slot.latencySum = t.latencySum;
    slot.latencyCount = t.latencyN;
    slot.lastLatency = t.lastLatency;
  }
}
