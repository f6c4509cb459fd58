// The main-thread side of history recording: buffers records in flat arrays on the crawl's hot
// path and hands them to the history worker in batches (every 250 ms or 5,000 records).
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ChangeRecord, CrawlStatus, EventRecord, ResponseRecord } from '../../../shared/types';
import {
  R_ATTEMPT, R_BACKOFF_LEVEL, R_BYTES, R_CONTENT_TYPE, R_CRAWL, R_DELAY_AFTER, R_DELAY_BEFORE, R_DELAY_CAUSE, R_DEPTH,
  R_DOWNLOAD_TIME, R_ERROR_KIND, R_ERROR_MESSAGE, R_IN_FLIGHT, R_LATENCY, R_METHOD, R_REUSED, R_SLOT,
  R_STARTED_AT, R_STATUS, R_T, R_WAIT_MS, RESPONSE_STRIDE,
} from './history-protocol';
import type { BatchMessage, ChangeTuple, CrawlPatchWire, EventTuple, FromWorker, ToWorker, WorkerInit } from './history-protocol';
import type { RetentionSettings } from '../../../shared/contract';
import type { PruneResult } from './retention';
import type { SharedMark } from './queries';
import { processMayLeaveIdle, setThreadPolicy, threadPolicy, type ThreadPolicy } from './thread-priority';
import type { StoreFaultKind } from './store-faults';
import {
  F_CRAWL, F_DEPTH, F_OP, F_PRIORITY, F_REDIRECTS, F_RETRIES, F_SEQ, FRONTIER_STRIDE, OP_QUEUED,
  type ResumeFrontierResult, type SlotStateTuple,
} from './history-protocol';

/**
 * The history database cannot be opened: corrupt, foreign, newer, locked by another program or in
 * use by another Slotscope. The message names the file and says what to do; hosts print it and exit.
 */
export class HistoryOpenError extends Error {}

/** Buffered records are sent to the worker at least this often. */
export const FLUSH_INTERVAL_MS = 250;
/** …or as soon as this many records (responses + changes + events) are pending. */
export const FLUSH_RECORDS = 5000;

/**
 * Records (responses, changes, events, frontier ops, slot states) that may wait for the worker:
 * past this the writer says it is `blocked` ('behind') so the crawl pauses and stops adding to
 * them; below half of it, `unblocked`. About 25 MB of records; the worker catches up well before
 * it when the disk merely is slow.
 */
export const MAX_PENDING_RECORDS = 100_000;

/** Why the writer cannot keep up: what the crawl must pause for (see HistoryWriter 'blocked'). */
export interface StoreBlock {
  /** A store fault (store-faults.ts), or `behind`: MAX_PENDING_RECORDS wait for a slow worker. */
  readonly kind: StoreFaultKind | 'behind';
  /** One sentence naming the file, the fault and what to do. */
  readonly text: string;
  /** Epoch ms the condition began. */
  readonly since: number;
  /** Records waiting to be written. */
  readonly pending: number;
}

/** What updateCrawl may change; absent keys are left as they are, null clears a time. */
export interface CrawlPatch {
  readonly status?: CrawlStatus;
  readonly startedAt?: number | null;
  readonly finishedAt?: number | null;
  readonly summary?: unknown;
  readonly settings?: unknown;
  /** A what-if replay: the crawl it derives from. */
  readonly derivedFrom?: number;
  /** What a what-if replay was run with (stored as JSON). */
  readonly derived?: unknown;
  /** A shared crawl (issue 18): where in Redis it lives. */
  readonly shared?: SharedMark;
}

export interface HistoryWriterOptions {
  /** The bundled worker script; by default dist/history-worker.js (see resolveWorkerFile). */
  readonly workerFile?: string | URL;
  /**
   * Run the worker thread at idle CPU priority while it keeps up (default true; Linux with chrt and
   * the right to return to normal priority, see thread-priority.ts). False keeps it at the process's priority.
   */
  readonly background?: boolean;
  /** The bound of records that may wait before the writer is 'blocked' as behind (default MAX_PENDING_RECORDS). */
  readonly maxPendingRecords?: number;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** performance.now() when it was posted. */
  readonly at: number;
}

/**
 * The worker runs at idle priority until something handed to it waits this long (ms) for its
 * answer: then it runs at normal priority, so a machine kept busy by other work cannot starve the
 * history (the writer lags at most about this much, and a flush waits at most about this much more).
 */
export const BACKGROUND_LAG_MS = 250;
/** Once raised, the worker stays at normal priority at least this long (ms) before it may idle again. */
export const BACKGROUND_HOLD_MS = 2000;

/** What the writer does with its worker's CPU priority (see HistoryWriter.priority). */
export interface WorkerPriority {
  /** The worker's kernel thread id, or null where there is none (not Linux). */
  readonly tid: number | null;
  /** 'idle' or 'normal' as last set, or null when the writer leaves it alone (not managed, or chrt failed). */
  readonly policy: ThreadPolicy | null;
  /** Times the worker was raised to normal priority: it fell BACKGROUND_LAG_MS behind, or an urgent flush asked for it. */
  readonly raised: number;
}

/**
 * Finds a bundled worker (`history-worker` by default): `./NAME.js` beside this module when running
 * from dist/, else `<package root>/dist/NAME.js`. Throws when it has not been built.
 */
export function resolveWorkerFile(moduleUrl: string = import.meta.url, name = 'history-worker'): URL {
  const beside = new URL(`./${name}.js`, moduleUrl);
  if (moduleUrl.startsWith('file:') && existsSync(beside)) return beside;
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) {
      const built = join(dir, 'dist', `${name}.js`);
      if (existsSync(built)) return pathToFileURL(built);
      throw new Error(`${name} not built: ${built} is missing; run \`npm run build\``);
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`${name} not found from ${moduleUrl}; run \`npm run build\``);
    dir = up;
  }
}

/**
 * Opens (creating and migrating) the history database in a worker thread and resolves once it is
 * ready. Rejects with the worker's error for a corrupt, foreign or newer database.
 */
export function openHistoryWriter(file: string, options: HistoryWriterOptions = {}): Promise<HistoryWriter> {
  let workerFile: string | URL;
  try {
    workerFile = options.workerFile ?? resolveWorkerFile();
  } catch (e) {
    return Promise.reject(e);
  }
  const init: WorkerInit = { file };
  const worker = new Worker(workerFile, { workerData: init });
  return new Promise<HistoryWriter>((resolve, reject) => {
    const onMessage = (m: FromWorker): void => {
      if (m.type === 'ready') {
        cleanup();
        const manage = options.background !== false && m.tid !== null && processMayLeaveIdle();
        resolve(new HistoryWriter(worker, file, m.interrupted, manage ? m.tid : null, options.maxPendingRecords));
      } else if (m.type === 'fatal') {
        cleanup();
        reject(new HistoryOpenError(m.message));
        void worker.terminate();
      }
    };
    const onError = (e: Error): void => {
      cleanup();
      reject(new Error(`history worker failed to start: ${e.message}`, { cause: e }));
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`history worker exited during start-up (code ${code})`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

const OPEN = 0;
const CLOSING = 1;
const CLOSED = 2;
const DEAD = 3;

/**
 * Records a crawl's history through the history worker. The record* methods only buffer
 * (synchronous, O(1)); flush() waits for the commit. Emits 'error' (Error) when a batch or update
 * was refused for its data or the worker died; with no 'error' listener these are logged instead.
 * After the worker died, record* throw and every pending promise rejects.
 *
 * When the store cannot write (a full disk, a lock held by another program, a read-only or
 * failing disk) nothing is dropped: the worker keeps every write, in order, and retries. The
 * writer then emits 'blocked' (StoreBlock) so the crawl pauses, and 'unblocked' (`{ ms }`) once
 * everything kept is committed. It is also 'blocked' (kind 'behind') while more than
 * MAX_PENDING_RECORDS wait, so memory stays bounded.
 */
export class HistoryWriter extends EventEmitter {
  private state = OPEN;
  private fatalError: Error | undefined;
  private closePromise: Promise<void> | undefined;
  private closeId = -1;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private sentRecords = 0;
  private doneRecords = 0;
  /** performance.now() of each batch posted and not yet answered, oldest first. */
  private readonly batchSentAt: number[] = [];
  private batchAcked = 0;
  // CPU priority of the worker thread (null policy: left alone).
  private policy: ThreadPolicy | null = null;
  private appliedPolicy: ThreadPolicy | null = null;
  private applying = false;
  private raisedAt = -Infinity;
  private raised = 0;
  private lagTimer: NodeJS.Timeout | undefined;
  // Store faults and the bound on what waits (see 'blocked').
  private fault: StoreBlock | null = null;
  private behindSince: number | null = null;
  private shown: StoreBlock | null = null;
  /** A retry the user asked for: its failure is said again. */
  private renotify = false;
  /** Records (all kinds) posted and not yet acknowledged, by batch seq. */
  private readonly inWorker = new Map<number, number>();
  private inWorkerTotal = 0;

  // The buffer of the batch being filled.
  private nums = new Float64Array(1024 * RESPONSE_STRIDE);
  private nResponses = 0;
  private readonly urls: string[] = [];
  private readonly dict = new Map<string, number>();
  private readonly dictList: string[] = [];
  private readonly changes: ChangeTuple[] = [];
  private readonly events: EventTuple[] = [];
  private buffered = 0;
  // Frontier ops and slot states (crash-safe resume) of the batch being filled.
  private fnums = new Float64Array(1024 * FRONTIER_STRIDE);
  private fn = 0;
  private readonly fstrs: (string | null)[] = [];
  private readonly slotStates: SlotStateTuple[] = [];
  /**
   * slotStates.length, kept apart: the hot record* paths read this count, and the array's first
   * tuple changes its elements kind (so its map), which deoptimized every one of them mid-crawl.
   */
  private nSlotStates = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.send();
  };
  private sendQueued = false;
  private readonly onMicrotask = (): void => {
    this.sendQueued = false;
    if (this.state === OPEN) this.send();
  };

  /** Use openHistoryWriter(). */
  constructor(
    private readonly worker: Worker,
    /** The database file. */
    readonly file: string,
    /** Crawls found 'running' when the file was opened (their process died): now 'interrupted'. */
    readonly interrupted: readonly number[] = [],
    /** The worker's thread id when its priority is to be managed (background), else null. */
    private readonly tid: number | null = null,
    /** Records that may wait before the writer is 'blocked' as behind. */
    private readonly maxPending: number = MAX_PENDING_RECORDS,
  ) {
    super();
    if (tid !== null) this.setPolicy('idle');
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (e: Error) => this.die(new Error(`history worker crashed: ${e.message}`, { cause: e })));
    worker.on('exit', (code: number) => {
      if (this.state === OPEN || this.state === CLOSING) this.die(new Error(`history worker exited unexpectedly (code ${code})`));
    });
  }

  /** Records handed to the worker but not yet committed: a measure of how far the writer lags. */
  get backlog(): number {
    return this.sentRecords - this.doneRecords;
  }

  /** Records of every kind (frontier ops and slot states too) buffered or waiting for the worker. */
  get waiting(): number {
    return this.inWorkerTotal + this.buffered + this.fn + this.nSlotStates;
  }

  /** Why the crawl must pause now (the store cannot write, or too much waits), or null. */
  get blocked(): StoreBlock | null {
    if (this.fault !== null) return { ...this.fault, pending: this.waiting };
    if (this.behindSince !== null) return this.behindBlock();
    return null;
  }

  /**
   * Tries the writes a store fault kept now instead of at the worker's next retry (the user said
   * resume). If it fails again, 'blocked' is emitted again.
   */
  retryNow(): void {
    if (this.state !== OPEN) return;
    if (this.fault !== null) {
      this.renotify = true;
      this.post({ type: 'retry' });
    } else if (this.behindSince !== null) {
      setImmediate(() => this.showBlock(true));
    }
  }

  private behindBlock(): StoreBlock {
    return {
      kind: 'behind',
      text: `the history writer of ${this.file} is ${this.waiting.toLocaleString('en-US')} records behind (the disk is slow): ` +
        'new requests wait until it catches up',
      since: this.behindSince!,
      pending: this.waiting,
    };
  }

  /** Emits 'blocked' when the reason to pause appears or changes, 'unblocked' when it is gone. */
  private showBlock(again = false): void {
    const now = this.blocked;
    const was = this.shown;
    if (now === null) {
      if (was === null) return;
      this.shown = null;
      if (this.listenerCount('unblocked') > 0) this.emit('unblocked', { ms: Date.now() - was.since, kind: was.kind });
      else console.error(`[slotscope:history] ${this.file} can be written again`);
      return;
    }
    if (!again && was !== null && was.kind === now.kind && was.since === now.since) return;
    this.shown = now;
    if (this.listenerCount('blocked') > 0) this.emit('blocked', now);
    else console.error(`[slotscope:history] ${now.text}`);
  }

  /** Past maxPending (MAX_PENDING_RECORDS) the writer is behind; below half of it, no longer. */
  private checkPending(): void {
    const n = this.waiting;
    if (this.behindSince === null && n > this.maxPending) {
      this.behindSince = Date.now();
      this.showBlock();
    } else if (this.behindSince !== null && n < this.maxPending / 2) {
      this.behindSince = null;
      this.showBlock();
    }
  }

  /** The worker thread's CPU priority as this writer manages it. */
  get priority(): WorkerPriority {
    return { tid: this.tid, policy: this.appliedPolicy, raised: this.raised };
  }

  /** Creates a crawl row (status 'created') and resolves with its id. */
  createCrawl(name: string, config: unknown, settings: unknown, createdAt: number = Date.now()): Promise<number> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.send();
    return this.request((id) => ({
      type: 'createCrawl',
      id,
      name,
      configJson: JSON.stringify(config ?? null),
      settingsJson: JSON.stringify(settings ?? null),
      createdAt,
    })) as Promise<number>;
  }

  /** Changes a crawl row, in order with the records buffered before it. Failures go to 'error' and flush(). */
  /** Deletes a crawl with all its history, after everything recorded before is written. */
  deleteCrawl(crawlId: number): Promise<number> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.send();
    return this.request((id) => ({ type: 'deleteCrawl', id, crawlId })) as Promise<number>;
  }

  updateCrawl(id: number, patch: CrawlPatch): void {
    this.assertOpen();
    const wire: { -readonly [K in keyof CrawlPatchWire]: CrawlPatchWire[K] } = {};
    if (patch.status !== undefined) wire.status = patch.status;
    if (patch.startedAt !== undefined) wire.startedAt = patch.startedAt;
    if (patch.finishedAt !== undefined) wire.finishedAt = patch.finishedAt;
    if (patch.summary !== undefined) wire.summaryJson = JSON.stringify(patch.summary);
    if (patch.settings !== undefined) wire.settingsJson = JSON.stringify(patch.settings);
    if (patch.derivedFrom !== undefined) wire.derivedFrom = patch.derivedFrom;
    if (patch.derived !== undefined) wire.derivedJson = JSON.stringify(patch.derived);
    if (patch.shared !== undefined) wire.sharedJson = JSON.stringify(patch.shared);
    this.send();
    this.post({ type: 'updateCrawl', crawlId: id, patch: wire });
  }

  /** Buffers one response or failed download. Hot path: no allocation beyond the URL push. */
  recordResponse(crawlId: number, r: ResponseRecord): void {
    if (this.state !== OPEN) this.assertOpen();
    const n = this.nResponses;
    if ((n + 1) * RESPONSE_STRIDE > this.nums.length) this.grow();
    const a = this.nums;
    const o = n * RESPONSE_STRIDE;
    a[o + R_CRAWL] = crawlId;
    a[o + R_T] = r.t;
    a[o + R_STARTED_AT] = r.startedAt;
    a[o + R_WAIT_MS] = r.waitMs;
    a[o + R_STATUS] = r.status ?? NaN;
    a[o + R_LATENCY] = r.latency ?? NaN;
    a[o + R_DOWNLOAD_TIME] = r.downloadTime ?? NaN;
    a[o + R_BYTES] = r.bytes;
    a[o + R_IN_FLIGHT] = r.inFlight;
    a[o + R_DELAY_BEFORE] = r.delayBefore;
    a[o + R_DELAY_AFTER] = r.delayAfter;
    a[o + R_BACKOFF_LEVEL] = r.backoffLevel;
    a[o + R_REUSED] = r.reused == null ? NaN : r.reused ? 1 : 0;
    a[o + R_DEPTH] = r.depth;
    a[o + R_ATTEMPT] = r.attempt ?? 0;
    a[o + R_SLOT] = this.intern(r.slot);
    a[o + R_METHOD] = this.intern(r.method);
    a[o + R_DELAY_CAUSE] = this.intern(r.delayCause);
    a[o + R_ERROR_KIND] = r.errorKind == null ? -1 : this.intern(r.errorKind);
    a[o + R_ERROR_MESSAGE] = r.errorMessage == null ? -1 : this.intern(r.errorMessage);
    a[o + R_CONTENT_TYPE] = r.contentType == null ? -1 : this.intern(r.contentType);
    this.urls.push(r.url);
    this.nResponses = n + 1;
    this.added();
  }

  /** Buffers one setting or slot change; old and new values are stored as JSON (undefined as SQL NULL). */
  recordChange(crawlId: number, c: ChangeRecord): void {
    if (this.state !== OPEN) this.assertOpen();
    this.changes.push([crawlId, c.t, c.slot, c.setting, c.source, toJson(c.oldValue), toJson(c.newValue)]);
    this.added();
  }

  /** Buffers one debug line, warning, error or note. */
  recordEvent(crawlId: number, e: EventRecord): void {
    if (this.state !== OPEN) this.assertOpen();
    this.events.push([crawlId, e.t, e.slot, e.kind, e.code, e.text, toJson(e.data)]);
    this.added();
  }

  // --- Frontier (crash-safe resume) ------------------------------------------------------------

  /** Buffers a newly accepted URL (state queued). `metaJson` null for empty meta. Hot path. */
  recordQueued(crawlId: number, seq: number, url: string, metaJson: string | null, depth: number, priority: number, redirects: number, retries: number): void {
    this.frontierOp(crawlId, OP_QUEUED, seq, depth, priority, redirects, retries);
    this.fstrs.push(url, metaJson);
  }

  /** Buffers a state change of a frontier row (OP_STARTED, OP_REQUEUED with priority/retries, OP_DONE). Hot path. */
  recordFrontier(crawlId: number, op: number, seq: number, priority = 0, retries = 0): void {
    this.frontierOp(crawlId, op, seq, 0, priority, 0, retries);
  }

  /** Buffers a slot's learned throttle state (JSON of engine/resume.ts SlotSnapshot). */
  recordSlotState(crawlId: number, t: number, slot: string, stateJson: string): void {
    if (this.state !== OPEN) this.assertOpen();
    this.slotStates.push([crawlId, t, slot, stateJson]);
    this.nSlotStates++;
    this.pendingAdded();
  }

  /** Crash accounting before resuming a crawl (see the `resumeFrontier` message), after everything buffered. */
  resumeFrontier(crawlId: number): Promise<ResumeFrontierResult> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.send();
    return this.request((id) => ({ type: 'resumeFrontier', id, crawlId })) as Promise<ResumeFrontierResult>;
  }

  private frontierOp(crawlId: number, op: number, seq: number, depth: number, priority: number, redirects: number, retries: number): void {
    if (this.state !== OPEN) this.assertOpen();
    const o = this.fn * FRONTIER_STRIDE;
    if (o + FRONTIER_STRIDE > this.fnums.length) {
      const bigger = new Float64Array(this.fnums.length * 2);
      bigger.set(this.fnums);
      this.fnums = bigger;
    }
    const a = this.fnums;
    a[o + F_CRAWL] = crawlId;
    a[o + F_OP] = op;
    a[o + F_SEQ] = seq;
    a[o + F_DEPTH] = depth;
    a[o + F_PRIORITY] = priority;
    a[o + F_REDIRECTS] = redirects;
    a[o + F_RETRIES] = retries;
    this.fn++;
    this.pendingAdded();
  }

  private pendingAdded(): void {
    if (this.buffered + this.fn + this.nSlotStates >= FLUSH_RECORDS) this.sendSoon();
    else if (this.timer === undefined) this.timer = setTimeout(this.onTimer, FLUSH_INTERVAL_MS).unref();
    if (this.behindSince === null && this.waiting > this.maxPending) this.checkPending();
  }
  // ------------------------------------------------------------------------------------------------

  /**
   * Validates and saves the database's retention settings (absent fields unchanged, null = no
   * limit), then prunes in the background. Rejects naming the refused values; nothing is saved then.
   */
  setRetention(patch: { readonly [K in keyof RetentionSettings]?: RetentionSettings[K] }): Promise<RetentionSettings> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.send();
    return this.request((id) => ({ type: 'setRetention', id, patch })) as Promise<RetentionSettings>;
  }

  /** Runs a retention pass now (`now`: the time ages count from) and resolves with what it deleted. */
  prune(now?: number): Promise<PruneResult> {
    try {
      this.assertOpen();
    } catch (e) {
      return Promise.reject(e);
    }
    this.send();
    return this.request((id) => ({ type: 'prune', id, ...(now !== undefined ? { now } : {}) })) as Promise<PruneResult>;
  }

  /**
   * Resolves once everything recorded before the call is committed. Rejects with the first data
   * error since the previous flush (those records were refused: a constraint, a bug). While the
   * store cannot write ('blocked' by a fault) it rejects at once with that fault, nothing being
   * lost; with `{ wait: true }` it waits instead until the store could write everything before it
   * (or the writer closes). With `{ urgent: true }` (a crawl has ended and waits for its history:
   * nothing of it competes with the worker any more) an idle-priority worker is raised to normal
   * priority at once instead of after BACKGROUND_LAG_MS, so a busy machine does not hold the end
   * of a crawl back; it goes back to idle as after any raise. With `{ rows: true }` it resolves
   * once the rows are committed, leaving the buckets (derived from them) to their own timer: for
   * a caller that flushes many times a second (a shared crawl's recorder acknowledging a batch).
   */
  flush(o: { readonly wait?: boolean; readonly urgent?: boolean; readonly rows?: boolean } = {}): Promise<void> {
    if (this.state === CLOSED) return Promise.resolve();
    if (this.state === DEAD) return Promise.reject(this.fatalError);
    if (o.urgent && this.policy === 'idle') this.raise();
    this.send();
    return this.request((id) => ({ type: 'flush', id, ...(o.wait ? { wait: true } : {}), ...(o.rows ? { rows: true } : {}) })).then(() => undefined);
  }

  /**
   * A crawl has ended: the worker writes the buckets in memory now (raised to normal priority as by
   * an urgent flush), while the caller still closes the crawl (1,000 hosts: ~100 ms of closing
   * connections, ~100 ms of buckets to write); the final flush then finds little left. No reply:
   * a data error is that flush's, a store fault leaves the buckets for it.
   */
  writeAggregatesNow(): void {
    if (this.state !== OPEN) return;
    if (this.policy === 'idle') this.raise();
    this.send();
    this.post({ type: 'aggregates' });
  }

  /** Flushes, checkpoints and closes the database, and ends the worker. Safe to call twice. */
  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    if (this.state === DEAD) return Promise.reject(this.fatalError);
    this.send();
    const closing = this.request((id) => {
      this.closeId = id;
      return { type: 'close', id };
    });
    this.state = CLOSING;
    this.closePromise = closing.then(
      async () => {
        await this.worker.terminate();
      },
      async (e: Error) => {
        if (this.state === CLOSED) await this.worker.terminate();
        throw e;
      },
    );
    return this.closePromise;
  }

  private added(): void {
    this.buffered++;
    this.pendingAdded();
  }

  /**
   * A full buffer goes out once the current synchronous run of the engine is over, not in its
   * middle: what one response leads to (its row, its frontier mark, the links it queued) always
   * travels in one batch and so commits in one transaction.
   */
  private sendSoon(): void {
    if (this.sendQueued) return;
    this.sendQueued = true;
    queueMicrotask(this.onMicrotask);
  }

  private intern(s: string): number {
    let i = this.dict.get(s);
    if (i === undefined) {
      i = this.dictList.length;
      this.dictList.push(s);
      this.dict.set(s, i);
    }
    return i;
  }

  private grow(): void {
    const bigger = new Float64Array(this.nums.length * 2);
    bigger.set(this.nums);
    this.nums = bigger;
  }

  /** Hands the buffered records to the worker (postMessage copies the arrays, so they are reused). */
  private send(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.buffered === 0 && this.fn === 0 && this.nSlotStates === 0) return;
    const n = this.nResponses;
    const nums = this.nums.slice(0, n * RESPONSE_STRIDE);
    const transfer = [nums.buffer];
    let frontier: BatchMessage['frontier'] = null;
    if (this.fn > 0 || this.nSlotStates > 0) {
      const fnums = this.fnums.slice(0, this.fn * FRONTIER_STRIDE);
      transfer.push(fnums.buffer);
      frontier = { n: this.fn, nums: fnums, strs: this.fstrs, slotStates: this.slotStates };
    }
    this.caughtUp();
    this.batchSentAt.push(performance.now());
    this.watchLag();
    const items = this.buffered + this.fn + this.nSlotStates;
    this.inWorker.set(this.seq + 1, items);
    this.inWorkerTotal += items;
    this.post(
      {
        type: 'batch',
        seq: ++this.seq,
        n,
        nums,
        urls: this.urls,
        dict: this.dictList,
        changes: this.changes,
        events: this.events,
        frontier,
      },
      transfer,
    );
    this.fn = 0;
    this.fstrs.length = 0;
    this.slotStates.length = 0;
    this.nSlotStates = 0;
    this.sentRecords += this.buffered;
    this.buffered = 0;
    this.nResponses = 0;
    this.urls.length = 0;
    this.dict.clear();
    this.dictList.length = 0;
    this.changes.length = 0;
    this.events.length = 0;
    if (this.behindSince === null && this.inWorkerTotal > this.maxPending) this.checkPending();
  }

  private post(m: ToWorker, transfer?: ArrayBuffer[]): void {
    this.worker.postMessage(m, transfer);
  }

  private request(make: (id: number) => ToWorker): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, at: performance.now() });
      this.watchLag();
      this.post(make(id));
    });
  }

  // --- The worker's CPU priority ------------------------------------------------------------------

  /** performance.now() of the oldest message still waiting for the worker's answer, or null. */
  private oldestWaiting(): number | null {
    let oldest = this.batchAcked < this.batchSentAt.length ? this.batchSentAt[this.batchAcked] : Infinity;
    for (const p of this.pending.values()) {
      if (p.at < oldest) oldest = p.at;
      break; // a Map keeps posting order: the first is the oldest
    }
    return oldest === Infinity ? null : oldest;
  }

  /** While the worker idles, checks that nothing waits on it longer than BACKGROUND_LAG_MS. */
  private watchLag(): void {
    if (this.policy !== 'idle' || this.lagTimer !== undefined) return;
    const oldest = this.oldestWaiting() ?? performance.now();
    this.lagTimer = setTimeout(this.onLagTimer, Math.max(1, oldest + BACKGROUND_LAG_MS - performance.now())).unref();
  }

  private readonly onLagTimer = (): void => {
    this.lagTimer = undefined;
    if (this.policy !== 'idle') return;
    const oldest = this.oldestWaiting();
    if (oldest === null) return;
    if (performance.now() - oldest >= BACKGROUND_LAG_MS) this.raise();
    else this.watchLag();
  };

  /** To normal priority (held at least BACKGROUND_HOLD_MS). */
  private raise(): void {
    this.raised++;
    this.raisedAt = performance.now();
    this.setPolicy('normal');
  }

  /** Back to idle once the worker has caught up and has held normal priority long enough. */
  private caughtUp(): void {
    if (this.policy === 'normal' && this.oldestWaiting() === null && performance.now() - this.raisedAt >= BACKGROUND_HOLD_MS) {
      this.setPolicy('idle');
    }
  }

  /** Applies the wanted policy with chrt, one call at a time; a failure stops managing it. */
  private setPolicy(p: ThreadPolicy): void {
    if (this.tid === null) return;
    this.policy = p;
    if (this.applying) return;
    const tid = this.tid;
    const step = async (): Promise<void> => {
      this.applying = true;
      while (this.policy !== null && this.policy !== this.appliedPolicy && (this.state === OPEN || this.state === CLOSING)) {
        const want = this.policy;
        // Only a thread of this process (a finished worker's id may be reused by another program).
        if (threadPolicy(tid) === null || !(await setThreadPolicy(tid, want))) {
          this.policy = null;
          this.appliedPolicy = null;
          break;
        }
        this.appliedPolicy = want;
      }
      this.applying = false;
      if (this.policy === 'idle') this.watchLag();
    };
    void step();
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'reply': {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        // Synchronously: the worker's 'exit' may be emitted before promise callbacks run.
        if (m.id === this.closeId) this.state = CLOSED;
        this.caughtUp();
        if (m.error !== undefined) p.reject(new Error(m.error));
        else p.resolve(m.value);
        return;
      }
      case 'batchDone': {
        this.doneRecords += m.records;
        const items = this.inWorker.get(m.seq) ?? 0;
        this.inWorker.delete(m.seq);
        this.inWorkerTotal -= items;
        if (this.behindSince !== null) this.checkPending();
        if (++this.batchAcked === this.batchSentAt.length || this.batchAcked >= 1024) {
          this.batchSentAt.splice(0, this.batchAcked);
          this.batchAcked = 0;
        }
        this.caughtUp();
        if (m.error !== undefined) this.report(new Error(m.error));
        return;
      }
      case 'stalled':
        this.fault = { kind: m.kind, text: m.text, since: m.since, pending: m.records };
        this.showBlock(this.renotify);
        this.renotify = false;
        return;
      case 'recovered':
        this.fault = null;
        this.showBlock();
        return;
      case 'error':
        this.report(new Error(m.message));
        return;
      default:
        return;
    }
  }

  private report(e: Error): void {
    if (this.listenerCount('error') > 0) this.emit('error', e);
    else console.error(`[slotscope:history] ${e.message}`);
  }

  private die(e: Error): void {
    if (this.state === DEAD || this.state === CLOSED) return;
    this.state = DEAD;
    this.fatalError = e;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lagTimer !== undefined) clearTimeout(this.lagTimer);
    this.lagTimer = undefined;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.report(e);
  }

  private assertOpen(): void {
    if (this.state === OPEN) return;
    if (this.state === DEAD) throw this.fatalError;
    throw new Error('HistoryWriter is closed');
  }
}

function toJson(v: unknown): string | null {
  return v === undefined ? null : JSON.stringify(v);
}
