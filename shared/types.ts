// Wire and record types shared by the core, the store, the hosts and the renderer.
// Pure TypeScript: no DOM and no Node types, so every side can import it. Every vocabulary that
// crosses the contract is a const list here or in contract.ts, its type derived from it.

import type { SettingName } from './settings';

/**
 * Every delay source, and which of them binds a slot's effective delay (SPEC 4.4): `none`, `floor`
 * (DOWNLOAD_DELAY), `autothrottle`, `backoff`, `rampup`, `crawl-delay` (robots.txt), `retry-after`
 * (a Retry-After / RateLimit block), `pin` (the user's pinned delay), `ratelimit` (pacing by the
 * server's RateLimit / X-RateLimit limit and window, THROTTLING_RATELIMIT_PACE).
 */
export const DELAY_CAUSES = ['none', 'floor', 'autothrottle', 'backoff', 'rampup', 'crawl-delay', 'retry-after', 'pin', 'ratelimit'] as const;

export type DelayCause = (typeof DELAY_CAUSES)[number];

/**
 * Which links a crawl follows (the crawl config's `follow.scope`): `host` to the seeds' hosts,
 * `domain` to their registrable domains, `any` everywhere, `none` the seeds only.
 */
export const FOLLOW_SCOPES = ['host', 'domain', 'any', 'none'] as const;

export type FollowScope = (typeof FOLLOW_SCOPES)[number];

/** A declarative scope rule of the crawl config's `scopes` list (SPEC 5.1), evaluated in order. */
export type ScopeRule =
  | { readonly by: 'domain' }
  | { readonly by: 'host' }
  | { readonly by: 'prefix'; readonly prefix: string; readonly scope?: string }
  | { readonly by: 'query'; readonly param: string; readonly then?: 'domain' | 'host' };

/** Who or what changed a setting or a slot's delay. */
export const CHANGE_SOURCES = ['user', 'config', 'autothrottle', 'backoff', 'rampup', 'robots'] as const;

export type ChangeSource = (typeof CHANGE_SOURCES)[number];

/** The kinds of download failure, as recorded and as named in BACKOFF_EXCEPTIONS (shared/settings.ts BACKOFF_EXCEPTION_KINDS, a subset). */
export const FAILURE_KINDS = ['timeout', 'connect-refused', 'connect-reset', 'tls', 'dns', 'maxsize', 'cancelled', 'redirect-limit', 'invalid-url', 'other'] as const;

export type FailureKind = (typeof FAILURE_KINDS)[number];

/**
 * Where a crawl is: `created` (not started), `running`, `paused` (nothing new starts; also a crawl
 * that was running when the app quit), `stopped` (by the user), `finished`, `failed`, or
 * `interrupted`: its process died mid-crawl (kill -9, crash, power loss), found when the database
 * is opened next. Paused, stopped and interrupted crawls can be resumed (crawls.resume,
 * `slotscope crawl --resume ID`).
 */
export const CRAWL_STATUSES = ['created', 'running', 'paused', 'stopped', 'finished', 'failed', 'interrupted'] as const;

export type CrawlStatus = (typeof CRAWL_STATUSES)[number];

/** One response or failed download, with the fields of SPEC 7. Times are epoch milliseconds. */
export interface ResponseRecord {
  /** When the response finished (body read) or the failure happened. */
  readonly t: number;
  /** When the request was handed to the HTTP client. */
  readonly startedAt: number;
  /** Milliseconds the request waited between entering its slot's queue and starting. */
  readonly waitMs: number;
  readonly slot: string;
  readonly url: string;
  readonly method: string;
  /** HTTP status; null for a failed download. */
  readonly status: number | null;
  /** Seconds from hand-over to the HTTP client until the response headers arrived; null on failure before headers. */
  readonly latency: number | null;
  /** Seconds from the headers to the end of the body; null when no body was read. */
  readonly downloadTime: number | null;
  /** Body bytes as received on the wire (before decompression). */
  readonly bytes: number;
  /** Requests in flight on the slot when the response arrived, this one included. */
  readonly inFlight: number;
  /** The slot's effective delay (seconds) just before and just after this response was processed. */
  readonly delayBefore: number;
  readonly delayAfter: number;
  readonly delayCause: DelayCause;
  readonly backoffLevel: number;
  /** Whether the request went over an already open connection (null if unknown). */
  readonly reused: boolean | null;
  readonly errorKind: FailureKind | null;
  readonly errorMessage: string | null;
  readonly depth: number;
  /** The response's Content-Type, if any. */
  readonly contentType: string | null;
  /**
   * Retries of this request before this attempt (RETRY_TIMES counts them): 0 or absent for a first
   * attempt. Stored with the row; not a column of the exports.
   */
  readonly attempt?: number;
}

/**
 * What can change about one slot, as ChangeRecord.setting names it (besides a setting's name):
 * `pin_delay` (seconds) and `pin_concurrency` (requests): the user's pins, null when cleared;
 * `paused`: true when the user paused the slot, false when resumed; `backoff_reset`: the user's
 * Reset backoff, old and new values {@link BackoffResetValue}; `crawl_delay`: robots.txt's
 * Crawl-delay in seconds (capped), null before; `backoff_level`: a backoff step up or a recovery;
 * `blocked_until`: the end of a Retry-After / RateLimit block (epoch ms), null for none;
 * `rampup_rate`: a rampup cut (requests per second); `delay`: the AutoThrottle delay (seconds) of
 * an imported Scrapy log's debug line.
 */
export const SLOT_CHANGES = [
  'pin_delay', 'pin_concurrency', 'paused', 'backoff_reset', 'crawl_delay', 'backoff_level', 'blocked_until', 'rampup_rate', 'delay',
] as const;

export type SlotChange = (typeof SLOT_CHANGES)[number];

/**
 * What the operator does to a whole crawl (slot null), in the crawl's journal: `started` (new value
 * true); `paused`: true when paused, false when resumed (the old value then the status it was
 * resumed from: paused, stopped or interrupted); `stopped`, the new value the reason. A crawl steered
 * from outside (a Scrapy spider) records its pauses and stops the same way.
 */
export const CRAWL_CHANGES = ['started', 'paused', 'stopped'] as const;

export type CrawlChange = (typeof CRAWL_CHANGES)[number];

/** What ChangeRecord.setting names: a setting or a crawl change (slot null), or what changed about one slot. */
export type ChangeName = SettingName | SlotChange | CrawlChange;

/** Old and new value of a `backoff_reset` change: the level and the Retry-After block's end (epoch ms) it cleared. */
export interface BackoffResetValue {
  readonly level: number;
  readonly blockedUntil: number | null;
}

/** A change of a setting (slot null) or of one slot's throttle state. */
export interface ChangeRecord {
  readonly t: number;
  readonly slot: string | null;
  /** A setting's Scrapy name (DOWNLOAD_DELAY), or with a slot one of {@link SLOT_CHANGES}. */
  readonly setting: ChangeName;
  readonly source: ChangeSource;
  readonly oldValue: unknown;
  readonly newValue: unknown;
}

/** Kinds of engine event: a debug line (AutoThrottle's), a note, a warning, an error. In the order the Log tab lists them. */
export const EVENT_KINDS = ['debug', 'info', 'warning', 'error'] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * Codes of the engine's `warning` events (SPEC 5.6), one warning per code (and slot, for a slot's):
 * settings that cannot take effect (`target-above-concurrency`, `max-below-floor`,
 * `global-below-domain`), `delayed-requests` piling up in memory, a slot's delay stuck
 * (`delay-at-max`, `delay-makes-concurrency-1`, `concurrency-below-target`), signs of a limit or a
 * block (`fast-errors`, `soft-block`), `cdn-cache` hiding latency, robots.txt's Crawl-delay
 * overridden or capped (`crawl-delay-overridden`, `crawl-delay-capped`), a THROTTLING_MANAGER that
 * threw (`plugin-error`), a seed line skipped (`seed-line`), robots.txt failing (`robots-retry`,
 * `robots-unavailable`), a body that could not be decoded (`decode-failed`).
 */
export const WARNING_CODES = [
  'target-above-concurrency', 'max-below-floor', 'global-below-domain', 'delayed-requests', 'delay-at-max', 'delay-makes-concurrency-1',
  'concurrency-below-target', 'fast-errors', 'soft-block', 'cdn-cache', 'crawl-delay-overridden', 'crawl-delay-capped', 'plugin-error',
  'seed-line', 'robots-retry', 'robots-unavailable', 'decode-failed', 'download-warnsize', 'robots-truncated',
  // A Scrapy crawl streamed in (electron/core/scrapy): records its bridge dropped, a bridge gone quiet, the host closed on it.
  'scrapy-dropped', 'scrapy-silent', 'scrapy-host-closed',
  // A shared crawl (electron/core/cluster): a worker whose heartbeat lapsed.
  'worker-lost',
] as const;

export type WarningCode = (typeof WARNING_CODES)[number];

/**
 * Codes of the throttle's `info` notes, one per decision worth saying: `backoff-step`, `rampup-cut`,
 * `retry-after` (a block began; its text says why, e.g. "Retry-After: 2"), and `ratelimit-pace`
 * (the server's RateLimit headers pace the scope, or their limit or window changed).
 */
export const THROTTLE_NOTES = ['backoff-step', 'rampup-cut', 'retry-after', 'ratelimit-pace'] as const;

export type ThrottleNote = (typeof THROTTLE_NOTES)[number];

/** A debug line, warning, error or note. `code` names the cause (one warning per cause). */
export interface EventRecord {
  readonly t: number;
  readonly slot: string | null;
  readonly kind: EventKind;
  readonly code: string;
  readonly text: string;
  readonly data?: unknown;
}

/** Final figures of a crawl, as printed by `slotscope crawl`. */
export interface CrawlSummary {
  readonly crawl_id: number;
  readonly requests: number;
  readonly responses: number;
  readonly by_status: Readonly<Record<string, number>>;
  readonly failures: number;
  readonly slots: number;
  readonly seconds: number;
}
