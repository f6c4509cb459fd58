// The messages between HistoryWriter (main thread) and the history worker, and the flat layout
// responses travel in: one Float64Array row per response plus a per-batch string dictionary.
import type { CrawlStatus } from '../../../shared/types';
import type { RetentionSettings } from '../../../shared/contract';
import type { StoreFaultKind } from './store-faults';

/** Column offsets of one response row in BatchMessage.nums (null numbers are NaN, null strings -1). */
export const R_CRAWL = 0;
export const R_T = 1;
export const R_STARTED_AT = 2;
export const R_WAIT_MS = 3;
export const R_STATUS = 4;
export const R_LATENCY = 5;
export const R_DOWNLOAD_TIME = 6;
export const R_BYTES = 7;
export const R_IN_FLIGHT = 8;
export const R_DELAY_BEFORE = 9;
export const R_DELAY_AFTER = 10;
export const R_BACKOFF_LEVEL = 11;
/** NaN unknown, 0 false, 1 true. */
export const R_REUSED = 12;
export const R_DEPTH = 13;
/** Indexes into BatchMessage.dict. */
export const R_SLOT = 14;
export const R_METHOD = 15;
export const R_DELAY_CAUSE = 16;
export const R_ERROR_KIND = 17;
export const R_ERROR_MESSAGE = 18;
export const R_CONTENT_TYPE = 19;
/** Retries before this attempt (ResponseRecord.attempt, 0 when absent). */
export const R_ATTEMPT = 20;
/** Numbers per response row. */
export const RESPONSE_STRIDE = 21;

// --- Frontier (crash-safe resume) ------------------------------------------------------------
/** Column offsets of one frontier op in FrontierBatch.nums. */
export const F_CRAWL = 0;
export const F_OP = 1;
export const F_SEQ = 2;
export const F_DEPTH = 3;
export const F_PRIORITY = 4;
export const F_REDIRECTS = 5;
export const F_RETRIES = 6;
/** Numbers per frontier op. */
export const FRONTIER_STRIDE = 7;
/** A new URL, queued; its URL and meta JSON (or null) are the next two entries of FrontierBatch.strs. */
export const OP_QUEUED = 0;
/** Handed to the HTTP client. */
export const OP_STARTED = 1;
/** Back in the queue with new retries/priority (retry after backoff feedback, or cancelled). */
export const OP_REQUEUED = 2;
/** Nothing more to fetch; committed in the same transaction as its response row. */
export const OP_DONE = 3;

/** [crawlId, t, slot, stateJson]: a slot's learned throttle state (engine/resume.ts SlotSnapshot). */
export type SlotStateTuple = readonly [number, number, string, string];

/** The frontier part of a batch, written after its responses in the same transaction. */
export interface FrontierBatch {
  /** Number of ops in `nums`. */
  readonly n: number;
  readonly nums: Float64Array;
  /** URL and meta JSON of each OP_QUEUED op, in op order. */
  readonly strs: readonly (string | null)[];
  readonly slotStates: readonly SlotStateTuple[];
}

/** Reply of `resumeFrontier`. */
export interface ResumeFrontierResult {
  /** Rows that were in flight when the previous run ended and are queued again. */
  readonly requeued: number;
  /** URLs in flight at their second interrupted run: marked given up (state 3). */
  readonly givenUp: readonly string[];
}
// ------------------------------------------------------------------------------------------------

/** [crawlId, t, slot, setting, source, oldJson, newJson]; a JSON column is null for an undefined value. */
export type ChangeTuple = readonly [number, number, string | null, string, string, string | null, string | null];
/** [crawlId, t, slot, kind, code, text, dataJson]. */
export type EventTuple = readonly [number, number, string | null, string, string, string, string | null];

/** Fields of updateCrawl; the JSON ones are already stringified. Absent keys are left unchanged. */
export interface CrawlPatchWire {
  readonly status?: CrawlStatus;
  readonly startedAt?: number | null;
  readonly finishedAt?: number | null;
  readonly summaryJson?: string | null;
  readonly settingsJson?: string;
  /** A what-if replay: the crawl it derives from, and what it was run with (JSON). */
  readonly derivedFrom?: number;
  readonly derivedJson?: string;
  /** A shared crawl's SharedMark (JSON). */
  readonly sharedJson?: string;
}

export interface BatchMessage {
  readonly type: 'batch';
  /** Increases by one per batch; the worker acknowledges each with BatchDoneMessage. */
  readonly seq: number;
  /** Number of response rows in `nums`. */
  readonly n: number;
  readonly nums: Float64Array;
  /** One URL per response row. */
  readonly urls: readonly string[];
  /** Strings referenced by index from the response rows. */
  readonly dict: readonly string[];
  readonly changes: readonly ChangeTuple[];
  readonly events: readonly EventTuple[];
  /** Frontier ops and slot states (crash-safe resume); null when there are none. */
  readonly frontier: FrontierBatch | null;
}

export type ToWorker =
  | BatchMessage
  | {
      readonly type: 'createCrawl';
      readonly id: number;
      readonly name: string;
      readonly configJson: string;
      readonly settingsJson: string;
      readonly createdAt: number;
    }
  | { readonly type: 'updateCrawl'; readonly crawlId: number; readonly patch: CrawlPatchWire }
  /** Deletes a crawl and all its history; replies with the number of crawl rows deleted. */
  | { readonly type: 'deleteCrawl'; readonly id: number; readonly crawlId: number }
  /**
   * Crash accounting before a crawl resumes, in one transaction: rows in flight when the previous
   * run ended count one more crash and are queued again, or given up at their second. Replies
   * with a ResumeFrontierResult.
   */
  | { readonly type: 'resumeFrontier'; readonly id: number; readonly crawlId: number }
  /** Validates and saves retention settings (absent fields unchanged), then prunes; replies with the settings. */
  | { readonly type: 'setRetention'; readonly id: number; readonly patch: { readonly [K in keyof RetentionSettings]?: RetentionSettings[K] } }
  /** A pruning pass (after any running one), `now` defaulting to the clock; replies with a PruneResult. */
  | { readonly type: 'prune'; readonly id: number; readonly now?: number }
  /**
   * Replied to once every earlier message is committed; carries the first write error since the
   * last flush. While the store cannot write (see `stalled`): replied to at once with that fault
   * as the error, or with `wait`, only once the store could write everything before it.
   */
  | {
    readonly type: 'flush'; readonly id: number; readonly wait?: boolean;
    /** Only the rows: the buckets (derived, rebuilt at the next open) keep their own write timer. */
    readonly rows?: boolean;
  }
  /** Try the writes kept by a store fault now instead of at the next retry (the user's word). */
  | { readonly type: 'retry' }
  /**
   * Write the buckets in memory now (after every write before it), with no reply: a crawl has
   * ended, and its final flush then finds little left to write. A data error is kept for the next
   * flush's reply; while the store cannot write, nothing is done.
   */
  | { readonly type: 'aggregates' }
  /** Checkpoint and close the connection, then reply. */
  | { readonly type: 'close'; readonly id: number };

export type FromWorker =
  /**
   * The database is open, migrated and locked for this writer. `interrupted`: crawls found
   * 'running' (their process died, since no other writer holds the lock), now marked 'interrupted'.
   * `tid`: the worker's kernel thread id (Linux), for its CPU priority (thread-priority.ts); null elsewhere.
   */
  | { readonly type: 'ready'; readonly schemaVersion: number; readonly interrupted: readonly number[]; readonly tid: number | null }
  /** Opening failed; the worker exits after sending this. */
  | { readonly type: 'fatal'; readonly message: string }
  | { readonly type: 'reply'; readonly id: number; readonly value?: unknown; readonly error?: string }
  /**
   * A batch was committed, or (with `error`) refused for its data (a constraint, a bug: retrying
   * cannot help). A batch the *store* cannot take (disk full, lock, read-only…) is kept and
   * retried instead: no batchDone until it is committed. `records` counts responses, changes and events.
   */
  | { readonly type: 'batchDone'; readonly seq: number; readonly records: number; readonly error?: string }
  /**
   * The store cannot write (a write failed for its disk, lock or file, not its data): every write
   * from the failed one on is kept, in order, and retried (about every 2 s at most). Sent at each
   * failed attempt. `text` names the file and what to do; `records` and `ops` are what waits.
   */
  | {
      readonly type: 'stalled';
      readonly kind: StoreFaultKind;
      readonly text: string;
      readonly records: number;
      readonly ops: number;
      /** Epoch ms of the first failed attempt of this stall. */
      readonly since: number;
      readonly attempts: number;
    }
  /** Everything kept by a stall is committed; `ms` it lasted. */
  | { readonly type: 'recovered'; readonly ms: number; readonly attempts: number }
  /** A write that has no reply (updateCrawl) failed. */
  | { readonly type: 'error'; readonly message: string };

/** What the worker is started with (workerData). */
export interface WorkerInit {
  readonly file: string;
}
