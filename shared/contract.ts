// The one contract between the renderer and the core, declared once and imported by every side:
// each request (method → params/result) and each event (name → payload), with errors as data.

import type { SettingGroup, Settings } from './settings';
import type { ChangeRecord, CrawlStatus, DelayCause, EventRecord, FailureKind, FollowScope, ResponseRecord, ScopeRule } from './types';

/**
 * Every error code a host answers with: `invalid`: bad params or settings; `not-found`; `conflict`:
 * not possible in the crawl's state; `unknown-method`; `too-large`: a message or upload above the
 * host's limit; `canceled`: the user closed a dialog the request needed (Electron's save dialog);
 * `internal`.
 */
export const ERROR_CODES = ['invalid', 'not-found', 'conflict', 'unknown-method', 'too-large', 'canceled', 'internal'] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error crossing the boundary as data, never as a thrown object. */
export interface AppError {
  /** One of {@link ERROR_CODES}. */
  readonly code: ErrorCode;
  readonly message: string;
  /** The param or setting at fault, when there is one. */
  readonly field?: string;
}

export type Reply<T = unknown> = { readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: AppError };

// The WebSocket wire format (JSON text frames) between the browser host (electron/server) and its
// client (renderer/src/transport/ws-client.ts).

/** Correlates a reply with its request; chosen by the client. */
export type RequestId = number | string;

/** Client → server. */
export interface WireRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly params?: unknown;
}

/** Server → client, one per request; `id` is null when the frame was too broken to have one. */
export type WireReply = { readonly id: RequestId | null } & Reply;

/** Server → every client. */
export interface WireEvent<E extends EventName = EventName> {
  readonly event: E;
  readonly payload: AppEvents[E];
}

/** A crawl as listed. Times are epoch ms. */
export interface CrawlInfo {
  readonly id: number;
  readonly name: string;
  /** Its state (shared/types.ts CrawlStatus); `interrupted`: its process died mid-crawl, resume it with crawls.resume. */
  readonly status: CrawlStatus;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  readonly requests: number;
  readonly responses: number;
  readonly failures: number;
  readonly slots: number;
  /** Set for a what-if replay ('history.whatIf'): the crawl it was derived from. */
  readonly derivedFrom?: number;
  /** Set for a crawl run elsewhere and streamed in: 'Scrapy' for a spider with the slotscope-scrapy extension. */
  readonly source?: CrawlSource;
  /**
   * Set for a shared crawl (issue 18, `slotscope serve --redis URL`): its frontier and slots live in
   * Redis and several `slotscope worker` processes fetch it. Its workers are listed ('crawls.workers')
   * while this host records it: one it started, or one its Redis still held when it started again.
   */
  readonly shared?: true;
}

/** A fetcher of a shared crawl as the Workers panel shows it ('crawls.workers', 'workers.update'). */
export interface WorkerWire {
  /** Its --name (the host's own fetcher: recorder@HOST). */
  readonly name: string;
  /** The machine it runs on, and its process id there. */
  readonly host: string;
  readonly pid: number;
  /** Its heartbeat is fresh (it beats every second; it counts as dead after 3 s without one). */
  readonly alive: boolean;
  readonly inFlight: number;
  /** Requests it may have in flight at most. */
  readonly concurrency: number;
  /** Responses it fetched (robots.txt included; failed downloads not counted). */
  readonly responses: number;
  /** Responses per second over the last 3 s, from successive `responses` counts; null until two were read. */
  readonly responsesPerSecond: number | null;
  /** Its latest heartbeat, epoch ms (Redis's clock). */
  readonly lastSeen: number;
  /** When it joined, epoch ms. */
  readonly startedAt: number;
}

/** Where a crawl ran when not in Slotscope's engine (CrawlInfo.source): a Scrapy spider through slotscope-scrapy. */
export const CRAWL_SOURCES = ['Scrapy'] as const;

export type CrawlSource = (typeof CRAWL_SOURCES)[number];

/** Live figures of a crawl. */
export interface CrawlStatsWire {
  readonly status: CrawlStatus;
  readonly requests: number;
  readonly responses: number;
  readonly failures: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly bytes: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly slots: number;
  /** URLs robots.txt kept the crawl from. */
  readonly robotsDisallowed: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

/** What the GUI needs to render and validate a setting (the schema without its parser). */
export interface SettingDescription {
  readonly name: keyof Settings;
  readonly label: string;
  readonly help: string;
  readonly group: SettingGroup;
  readonly default: unknown;
  readonly allowed: string;
}

/** What a slot can be doing, in the slot table's words (and the order of its state filter). */
export const SLOT_STATES = ['active', 'waiting', 'backoff', 'paused', 'blocked', 'idle'] as const;

export type SlotState = (typeof SLOT_STATES)[number];

/**
 * Columns of a slot row, in tuple order (rows travel as compact tuples). `nextStartAt` is a time
 * (epoch ms on the host's clock, null when nothing is queued), not a countdown, so a waiting slot's
 * row stays the same until something about the slot changes; clients count down against the
 * host's clock, which 'slots.update' and 'slots.snapshot' carry as `now`.
 */
export const SLOT_COLUMNS = [
  'key', 'state', 'inFlight', 'concurrency', 'target', 'delay', 'cause', 'nextStartAt', 'lastLatency', 'avgLatency',
  'requests', 's2xx', 's3xx', 's4xx', 's5xx', 's429', 'failures', 'backoffLevel', 'queued', 'bytes', 'pinDelay', 'pinConcurrency',
] as const;

export type SlotTuple = readonly [
  key: string, state: SlotState, inFlight: number, concurrency: number, target: number | null, delay: number, cause: DelayCause,
  nextStartAt: number | null, lastLatency: number | null, avgLatency: number | null,
  requests: number, s2xx: number, s3xx: number, s4xx: number, s5xx: number, s429: number, failures: number,
  backoffLevel: number, queued: number, bytes: number, pinDelay: number | null, pinConcurrency: number | null,
];

export interface SeedLineErrorWire {
  readonly source: string;
  readonly line: number;
  readonly text: string;
  readonly message: string;
}

/**
 * One point of a slot's (or the crawl's) history: a second, a minute, or (downsampled) several
 * merged buckets; `span` says how many milliseconds it covers.
 */
export interface HistoryPoint {
  /** Start of the bucket, epoch ms. */
  readonly t: number;
  readonly requests: number;
  readonly responses: number;
  readonly s2xx: number;
  readonly s3xx: number;
  /** Includes 429s; s429 counts them alone. */
  readonly s4xx: number;
  readonly s5xx: number;
  readonly s429: number;
  readonly failures: number;
  /** Seconds; null when no row of the bucket had a latency. */
  readonly avgLatency: number | null;
  readonly maxLatency: number | null;
  /** Mean delay_after (seconds) over the bucket's rows. */
  readonly avgDelay: number;
  readonly bytes: number;
  /** Milliseconds the point covers, from `t` (1000 for a second; a multiple when buckets were merged). */
  readonly span: number;
  /** Seconds; null when no row of the bucket had a latency. */
  readonly minLatency: number | null;
  /**
   * Nearest-rank 95th percentile of the latencies, seconds, from a log-scale histogram: within
   * 4.5 % of the exact value (store/aggregates.ts); null when no row had a latency.
   */
  readonly p95Latency: number | null;
  /** delay_after (seconds) of the bucket's latest row. */
  readonly lastDelay: number;
  /** Mean in-flight count of the responding slot over the bucket's rows (for the whole crawl: of each row's slot). */
  readonly avgInFlight: number;
  readonly maxInFlight: number;
}

/** One response in a slot's latency scatter ('slots.responses'). */
export interface ScatterPoint {
  /** When the response finished, epoch ms. */
  readonly t: number;
  /** Seconds; null for a download that failed before the headers. */
  readonly latency: number | null;
  /** HTTP status; null for a failed download (colour it as a failure). */
  readonly status: number | null;
  /** The slot's delay (seconds) just after this response. */
  readonly delay: number;
}

/**
 * How long the history database keeps raw samples ('store.retention.get/set'); null = no limit.
 * Aggregates (minute and hour buckets), slot summaries, changes and warnings are always kept.
 */
export interface RetentionSettings {
  /** Raw responses (and AutoThrottle debug lines) older than this many days are deleted. */
  readonly rawMaxAgeDays: number | null;
  /** Only the newest this-many raw responses of each crawl are kept. */
  readonly rawMaxRowsPerCrawl: number | null;
  /** Per-second buckets older than this many days are deleted; at least rawMaxAgeDays. */
  readonly secondsMaxAgeDays: number | null;
}

/** What a what-if replay stored ('history.whatIf'). */
export interface WhatIfResult {
  /** The derived crawl holding the replayed responses (its `derivedFrom` is the original). */
  readonly crawlId: number;
  /** Slots replayed. */
  readonly slots: number;
  /** Responses replayed. */
  readonly responses: number;
}

/**
 * What the Requests tab filters rows by, one at a time: a status class (`4xx` includes 429, as in
 * the slot table), 429 alone, or `failed`: downloads that got no status (their error kind says why).
 */
export const REQUEST_CLASSES = ['2xx', '3xx', '4xx', '429', '5xx', 'failed'] as const;

export type RequestClass = (typeof REQUEST_CLASSES)[number];

/** The Requests tab's orders: the newest response first, or by time (the oldest first). */
export const REQUEST_ORDERS = ['newest', 'oldest'] as const;

export type RequestOrder = (typeof REQUEST_ORDERS)[number];

/** A row's place in the (t, id) order of a crawl's responses: its end time (epoch ms) and its row id. */
export type RequestCursor = readonly [t: number, id: number];

/** The Requests tab's filters; absent ones do not filter. */
export interface RequestFilter {
  readonly statusClass?: RequestClass;
  /** One slot's rows. */
  readonly slot?: string;
  /** Failed downloads of this kind (implies no status). */
  readonly errorKind?: FailureKind;
  /** Rows whose URL contains this text (case-sensitive, as typed). */
  readonly text?: string;
}

/** One response or failed download as the Requests tab shows it: the stored record with its row id. */
export interface RequestRow extends ResponseRecord {
  /** The row's id: with `t`, its cursor. */
  readonly id: number;
  /** Retries of the request before this attempt (0: its first attempt). */
  readonly attempt: number;
}

/** A page of 'requests.page'. */
export interface RequestPage {
  readonly rows: readonly RequestRow[];
  /**
   * Where the next page starts (pass it as `after`); null once the last matching row was returned. A
   * page may hold fewer than `limit` rows and still have a `next`: a filter the indexes do not cover
   * (a URL text, a status class within one slot) reads a bounded number of rows per request.
   */
  readonly next: RequestCursor | null;
  /** True when the filter can be paged by `offset` (an index covers it), so a list can jump anywhere. */
  readonly seekable: boolean;
  /** With `count`: the rows matching the filter up to `head`; null when only paging through can tell (a URL text). */
  readonly total?: number | null;
  /** With `count`: the crawl's newest row when the page was read, the anchor (`until`) of the pages after it; null when it has none. */
  readonly head?: RequestCursor | null;
}

/** Seeds a crawl's definition lists; 'crawls.seeds' pages through all of them. */
export const FIRST_SEEDS = 20;

/** What a crawl is ('crawls.definition'): what its config file said, and its settings now. */
export interface CrawlDefinition {
  readonly id: number;
  readonly name: string;
  readonly seedCount: number;
  /** The first FIRST_SEEDS seeds, in their order. */
  readonly firstSeeds: readonly string[];
  /** Link following: null limits are none. `include`/`exclude` are regular expressions on the absolute URL. */
  readonly follow: {
    readonly scope: FollowScope; readonly maxDepth: number | null; readonly maxPages: number | null;
    readonly include: readonly string[]; readonly exclude: readonly string[];
  };
  /** Host → IP address, like curl's --resolve. */
  readonly resolve: Readonly<Record<string, string>>;
  /** The config's scope rules, in order. */
  readonly scopes: readonly ScopeRule[];
  /** Its settings now: the live ones while it runs, else as recorded. */
  readonly settings: Settings;
  /** A what-if replay: the crawl it replays, the settings it changed and the one slot it replayed (null: every slot). */
  readonly whatIf: { readonly from: number; readonly settings: Readonly<Record<string, unknown>>; readonly slot: string | null } | null;
}

/** A request waiting in a slot's queue ('slots.queue'). */
export interface QueuedRequest {
  readonly url: string;
  /** Link depth (0 for a seed). */
  readonly depth: number;
  /** Retries so far (a retried request waits again at a lower priority). */
  readonly retries: number;
  readonly priority: number;
  /** Since when it waits, epoch ms on the host's clock; null when not known (a saved frontier). */
  readonly queuedAt: number | null;
}

/** The next requests a slot will start, in the order it will start them. */
export interface SlotQueue {
  readonly slot: string;
  /** Requests waiting in the slot's queue, all of them (`items` holds the first `limit`). */
  readonly queued: number;
  readonly items: readonly QueuedRequest[];
  /** False for a crawl that is not running: `items` are the pending URLs of its saved frontier whose host is the slot. */
  readonly live: boolean;
  /** The host's clock when read, epoch ms. */
  readonly now: number;
}

/**
 * A crawl's figures under Scrapy's stats names (`downloader/response_status_count/429`,
 * `retry/count`, `finish_reason`…), as Scrapy dumps them at the end of a crawl, sorted by name;
 * values are numbers or text (times as Scrapy prints a datetime, in UTC). Figures Slotscope adds
 * are named under `slotscope/`.
 */
export type ScrapyStats = readonly (readonly [name: string, value: number | string])[];

type CrawlRef = { readonly id: number };
type SlotRef = { readonly id: number; readonly slot: string };

/** Every request: method → params and result. */
export interface AppRequests {
  /** Crawls in the database, newest first. */
  'crawls.list': { params: Record<string, never>; result: readonly CrawlInfo[] };
  /** Creates a crawl from a crawl config (the CLI's C.json); `seedsText` adds one URL a line. Bad seed lines are reported, not fatal. */
  /**
   * Creates a crawl from a crawl config (the CLI's C.json); `seedsText` adds one URL a line and
   * `seedsFrom` every seed of that crawl (a copy edited before it starts, whose seeds never travel). Bad seed lines are reported, not fatal.
   */
  'crawls.create': {
    params: { readonly config: unknown; readonly seedsText?: string; readonly seedsFrom?: number };
    result: { readonly crawl: CrawlInfo; readonly seedErrors: readonly SeedLineErrorWire[] };
  };
  /**
   * A new crawl with the same config and the latest settings. `seedsText` (one URL a line) adds seeds;
   * a crawl without seeds (an imported Scrapy log) is copied only with it (refused naming `seedsText`).
   */
  'crawls.duplicate': { params: CrawlRef & { readonly seedsText?: string }; result: CrawlInfo };
  /** Starts a created crawl (refused for a crawl without seeds). */
  'crawls.start': { params: CrawlRef; result: CrawlInfo };
  /** In-flight requests finish; nothing new starts. */
  'crawls.pause': { params: CrawlRef; result: CrawlInfo };
  /**
   * Resumes a paused crawl. A crawl not running in this process (interrupted by a crash, paused
   * when the app quit, or stopped) continues from its saved frontier with its live settings, slot
   * pins and learned delays: URLs done are not fetched again, those in flight at a crash once more.
   */
  'crawls.resume': { params: CrawlRef; result: CrawlInfo };
  /** Cancels in-flight requests (recorded as cancelled) and ends the crawl. */
  'crawls.stop': { params: CrawlRef; result: CrawlInfo };
  /** Deletes a crawl that is not running, with its history. */
  'crawls.delete': { params: CrawlRef; result: { readonly deleted: number } };
  /** Live figures. */
  'crawls.stats': { params: CrawlRef; result: CrawlStatsWire };
  /** The settings schema, for forms. */
  'settings.schema': { params: Record<string, never>; result: readonly SettingDescription[] };
  /** A crawl's current settings. */
  'settings.get': { params: CrawlRef; result: Settings };
  /** Validates a change set whole and applies it to the next dispatch decision (per scope through THROTTLING_SCOPES). */
  'settings.update': { params: CrawlRef & { readonly changes: Readonly<Record<string, unknown>> }; result: { readonly changed: readonly string[]; readonly at: number } };
  'slots.pause': { params: SlotRef; result: SlotTuple };
  'slots.resume': { params: SlotRef; result: SlotTuple };
  /** Pins a slot's delay in seconds (null clears the pin). */
  'slots.pinDelay': { params: SlotRef & { readonly seconds: number | null }; result: SlotTuple };
  /** Pins a slot's concurrency (null clears the pin). */
  'slots.pinConcurrency': { params: SlotRef & { readonly value: number | null }; result: SlotTuple };
  'slots.clearPins': { params: SlotRef; result: SlotTuple };
  'slots.resetBackoff': { params: SlotRef; result: SlotTuple };
  /** Every slot of the crawl, as tuples in SLOT_COLUMNS order: live rows while it runs; for a crawl that is not running, its slots as recorded (state 'idle', nothing in flight or queued, the last delay applied).  */
  'slots.snapshot': { params: CrawlRef; result: { readonly columns: typeof SLOT_COLUMNS; readonly rows: readonly SlotTuple[]; readonly now: number } };
  /** A slot's (or, without `slot`, the crawl's) recorded history per second or minute, in [from, to). */
  /**
   * A slot's (or, without `slot`, the crawl's) recorded history in [from, to) (default: all of it),
   * at most `maxPoints` points (default 2,000): buckets of `resolution` (default 'second') or, when
   * there would be more, merged buckets of a coarser round span (2 s, 5 s, … 1 min, … 1 h, … 1 day).
   */
  'slots.history': {
    params: CrawlRef & {
      readonly slot?: string; readonly resolution?: 'second' | 'minute'; readonly from?: number; readonly to?: number;
      readonly maxPoints?: number;
    };
    result: readonly HistoryPoint[];
  };
  /**
   * A slot's latency scatter in [from, to): every response when there are at most `maxPoints`
   * (default 2,000), else per time bucket its slowest, its fastest and its worst-status response,
   * so spikes and errors survive. Ordered by time.
   */
  'slots.responses': {
    params: { readonly crawlId: number; readonly slot: string; readonly from?: number; readonly to?: number; readonly maxPoints?: number };
    result: readonly ScatterPoint[];
  };
  /**
   * A page of a crawl's responses and failed downloads (the Requests tab), newest first or oldest
   * first, filtered, read in (t, id) order by keyset: after `after`, or from the `offset`-th matching
   * row (only when the page says `seekable`), never past `until` (a page's `head`: rows recorded
   * since then wait for a new anchor). `limit` 1–500 (default 100). `count` adds `total` and `head`,
   * read in the same snapshot.
   */
  'requests.page': {
    params: {
      readonly crawlId: number; readonly order?: RequestOrder; readonly filter?: RequestFilter;
      readonly after?: RequestCursor; readonly offset?: number; readonly until?: RequestCursor; readonly limit?: number; readonly count?: boolean;
    };
    result: RequestPage;
  };
  /** The first `limit` (1–1000, default 200) requests waiting in a slot's queue, in the order they will start. */
  'slots.queue': { params: SlotRef & { readonly limit?: number }; result: SlotQueue };
  /** What a crawl is: its seeds (how many, the first ones), follow rules, resolve map, scope rules and settings. */
  'crawls.definition': { params: CrawlRef; result: CrawlDefinition };
  /** A crawl's seeds from `offset` (default 0), at most `limit` (1–50,000, default 10,000), and how many it has. */
  'crawls.seeds': { params: CrawlRef & { readonly offset?: number; readonly limit?: number }; result: { readonly total: number; readonly seeds: readonly string[] } };
  /**
   * The workers of a shared crawl (CrawlInfo.shared), every one that joined, alive or not, by name;
   * `now` is the host's clock. Refused (conflict) for a crawl that is not shared, or that this host
   * does not record (the message says why: another Redis, or none).
   */
  'crawls.workers': { params: CrawlRef; result: { readonly workers: readonly WorkerWire[]; readonly now: number } };
  /** The crawl's figures under Scrapy's stats names, from the store (live while it runs). */
  'crawls.scrapyStats': { params: CrawlRef; result: ScrapyStats };
  /** The history database's retention settings. */
  'store.retention.get': { params: Record<string, never>; result: RetentionSettings };
  /** Changes retention settings (absent fields unchanged, null = no limit), validated whole, then prunes. */
  'store.retention.set': { params: { readonly [K in keyof RetentionSettings]?: RetentionSettings[K] }; result: RetentionSettings };
  /**
   * Replays a crawl's recorded responses (one slot's with `slot`) through the throttle policy with
   * `settings` (changes over the crawl's own settings, validated like 'settings.update') and stores
   * the result as a derived crawl whose series and delays charts can overlay on the original's.
   */
  'history.whatIf': {
    params: { readonly crawlId: number; readonly slot?: string; readonly settings: Readonly<Record<string, unknown>> };
    result: WhatIfResult;
  };
  /** AutoThrottle debug lines (Scrapy's format) and engine events, newest last. */
  'log.events': { params: CrawlRef & { readonly kind?: EventRecord['kind']; readonly slot?: string; readonly limit?: number }; result: readonly EventRecord[] };
  /** Settings and slot changes, oldest first. */
  'log.changes': { params: CrawlRef & { readonly slot?: string }; result: readonly ChangeRecord[] };
  /**
   * Writes a crawl's responses to a file on the host, streaming (README "Exports and import"):
   * `slot` keeps one slot, `from`/`to` (epoch ms, `to` exclusive) a time range. `path` is absolute
   * and ends with the format's extension (EXPORT_EXTENSIONS; Electron's save dialog supplies it);
   * an existing file is replaced only once the export is complete. Without `path` the file goes
   * to an `exports` folder beside the database. `exportId` (client-chosen, else generated) tags the
   * 'history.exportProgress' events and comes back in the result.
   */
  'history.export': {
    params: {
      readonly crawlId: number; readonly slot?: string; readonly from?: number; readonly to?: number;
      readonly format: ExportFormat; readonly path?: string; readonly exportId?: string;
    };
    result: { readonly exportId: string; readonly path: string; readonly rows: number; readonly bytes: number };
  };
  /**
   * Stores a Scrapy log written with AUTOTHROTTLE_DEBUG (2.8 to 2.18 line format) as a finished
   * crawl, like `slotscope import --scrapy-log`: `name` is the file's name, `text` its content,
   * `tz` the zone of its times (`local` (the host's, default), `UTC` or `+HH:MM`). Lines that
   * cannot be read are counted and the first ten listed; a log without any debug line is refused
   * (field `text`). A WebSocket message is limited to 1 MiB: the browser host takes larger logs at
   * POST `/import?name=…[&tz=…]` (the log as the body), answering the same report as JSON.
   */
  'history.importScrapyLog': { params: { readonly name: string; readonly text: string; readonly tz?: string }; result: ImportReport };
}

/** A line of an imported log that could not be read, with why. */
export interface UnreadableLine {
  readonly line: number;
  readonly reason: string;
  /** The line, cut to 200 characters. */
  readonly text: string;
}

/** What a Scrapy log import read and stored. */
export interface ImportReport {
  /** The crawl created; null when the log had no debug line (nothing was written). */
  readonly crawlId: number | null;
  readonly name: string;
  readonly lines: number;
  /** Debug lines imported (one response row each). */
  readonly debugLines: number;
  /** Of those, how many got a status and URL from a Crawled/Redirecting/Retrying line. */
  readonly withStatus: number;
  readonly slots: number;
  readonly unreadable: number;
  /** The first 10 unreadable lines. */
  readonly firstUnreadable: readonly UnreadableLine[];
  readonly scrapyVersion: string | null;
  /** Scrapy settings of the log's "Overridden settings" applied to the crawl's settings, and those left out. */
  readonly settingsApplied: readonly string[];
  readonly settingsIgnored: readonly string[];
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

/**
 * Every format of a history export, in the order the CLI and the GUI list them: Scrapy's
 * AUTOTHROTTLE_DEBUG log text, JSON Lines, CSV (RFC 4180), HAR 1.2.
 */
export const EXPORT_FORMATS = ['scrapy-debug', 'jsonl', 'csv', 'har'] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The file extensions a 'history.export' path may end with, per format (the first is the default). */
export const EXPORT_EXTENSIONS: Readonly<Record<ExportFormat, readonly string[]>> = {
  'scrapy-debug': ['.log', '.txt'],
  jsonl: ['.jsonl', '.ndjson'],
  csv: ['.csv'],
  har: ['.har', '.json'],
};

export type Method = keyof AppRequests;
export type Params<M extends Method> = AppRequests[M]['params'];
export type Result<M extends Method> = AppRequests[M]['result'];

/** Every event: name → payload. */
export interface AppEvents {
  /** Changed slot rows of a running crawl, coalesced to at most 10 per second; `now`: the host's clock (epoch ms) when they were computed. */
  'slots.update': { readonly crawlId: number; readonly rows: readonly SlotTuple[]; readonly now: number };
  /** A crawl's status and figures changed (also sent once a second while it runs). */
  'crawl.status': { readonly crawlId: number; readonly stats: CrawlStatsWire };
  /** A warning of the engine (SPEC 5.6). */
  'warning': { readonly crawlId: number; readonly event: EventRecord };
  /** Settings or slot controls changed (by the user, AutoThrottle's config, backoff, robots...). */
  'settings.changed': { readonly crawlId: number; readonly changes: readonly ChangeRecord[] };
  /** The crawl list changed (created, deleted). */
  'crawls.changed': { readonly crawls: readonly CrawlInfo[] };
  /** Progress of a 'history.export': rows written so far, of about `total` (the scrapy-debug format skips failed downloads). */
  'history.exportProgress': { readonly exportId: string; readonly rows: number; readonly total: number };
  /** The workers of a running shared crawl, about once a second (as 'crawls.workers' answers). */
  'workers.update': { readonly crawlId: number; readonly workers: readonly WorkerWire[]; readonly now: number };
  /** A command of the desktop app's menu for the renderer to carry out (sent by the Electron host only, never by the core). */
  'app.command': { readonly command: AppCommand };
}

/** Menu commands the renderer carries out: `new-crawl` opens the new-crawl form; `export` asks to export the shown crawl. */
export const APP_COMMANDS = ['new-crawl', 'export'] as const;

export type AppCommand = (typeof APP_COMMANDS)[number];

export type EventName = keyof AppEvents;

/** The one entry point of a host: validate, run, answer with data. */
export interface Dispatcher {
  dispatch(method: string, params: unknown): Promise<Reply>;
  /** Subscribes to every event; returns the unsubscribe function. */
  subscribe(listener: <E extends EventName>(event: E, payload: AppEvents[E]) => void): () => void;
}

/** Every method name: what dispatch answers, and the Electron preload's invoke allowlist. */
export const METHODS = [
  'crawls.list', 'crawls.create', 'crawls.duplicate', 'crawls.start', 'crawls.pause', 'crawls.resume', 'crawls.stop',
  'crawls.delete', 'crawls.stats', 'settings.schema', 'settings.get', 'settings.update', 'slots.pause', 'slots.resume',
  'slots.pinDelay', 'slots.pinConcurrency', 'slots.clearPins', 'slots.resetBackoff', 'slots.snapshot', 'slots.history',
  'log.events', 'log.changes', 'history.export', 'slots.responses', 'store.retention.get', 'store.retention.set',
  'history.whatIf', 'history.importScrapyLog', 'requests.page', 'slots.queue', 'crawls.scrapyStats', 'crawls.definition', 'crawls.seeds',
  'crawls.workers',
] as const satisfies readonly Method[];

/** Every event name: the Electron preload's subscription allowlist. */
export const EVENTS = ['slots.update', 'crawl.status', 'warning', 'settings.changed', 'crawls.changed', 'app.command', 'history.exportProgress', 'workers.update'] as const satisfies readonly EventName[];

/** Compile-time checks that METHODS and EVENTS name every member of AppRequests and AppEvents (a missing one is an error here). */
type NoneMissing<T extends never> = T;
export type MethodsListed = NoneMissing<Exclude<Method, (typeof METHODS)[number]>>;
export type EventsListed = NoneMissing<Exclude<EventName, (typeof EVENTS)[number]>>;
