// The history worker thread: owns the only write connection and commits each batch from
// HistoryWriter in one transaction, keeping the per-slot, per-status and per-second/minute aggregates.
import { parentPort, workerData } from 'node:worker_threads';
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { lockHistoryFile, openDatabase, timed, type HistoryLock } from './database';
import { isStoreFault, storeFaultKind, storeFaultText } from './store-faults';
import { FrontierWriter, markInterrupted } from './frontier-store';
import { MultiRow, valuesList } from './multi-row';
import { readSchemaVersion } from './migrate';
import { countStatus, SeriesAggregator } from './aggregates';
import { currentThreadId, nameThisThread } from './thread-priority';
import { RetentionPruner, PRUNE_INTERVAL_MS, mergeRetention, readRetention, writeRetention } from './retention';
import {
  R_ATTEMPT, R_BACKOFF_LEVEL, R_BYTES, R_CONTENT_TYPE, R_CRAWL, R_DELAY_AFTER, R_DELAY_BEFORE, R_DELAY_CAUSE, R_DEPTH,
  R_DOWNLOAD_TIME, R_ERROR_KIND, R_ERROR_MESSAGE, R_IN_FLIGHT, R_LATENCY, R_METHOD, R_REUSED, R_SLOT,
  R_STARTED_AT, R_STATUS, R_T, R_WAIT_MS, RESPONSE_STRIDE, F_CRAWL, FRONTIER_STRIDE,
} from './history-protocol';
import type { BatchMessage, CrawlPatchWire, FromWorker, ToWorker, WorkerInit } from './history-protocol';

/** A batch slower than one flush interval means the writer is falling behind: worth a warning. */
const SLOW_BATCH_MS = 250;
/** A write the store refused is retried after this long, doubling up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 2000;

/** Running figures for one slot_stats or series row, accumulated over one batch. */
class Acc {
  requests = 0;
  responses = 0;
  s2xx = 0;
  s3xx = 0;
  s4xx = 0;
  s5xx = 0;
  s429 = 0;
  failures = 0;
  latencySum = 0;
  latencyN = 0;
  latencyMax: number | null = null;
  lastLatency: number | null = null;
  lastLatencyT: number | null = null;
  lastDelay = 0;
  lastT = -Infinity;
  /** delay_cause and backoff_level of the latest row (slot_stats only). */
  lastCause: string | null = null;
  lastBackoff: number | null = null;
  /** Retried attempts, robots.txt fetches and the deepest page (slot_stats only: the Scrapy stats' figures). */
  retries = 0;
  robots = 0;
  depthMax = 0;
  delaySum = 0;
  bytes = 0;

  constructor(
    readonly crawlId: number,
    readonly slotId: number,
    readonly resMs = 0,
    readonly bucket = 0,
  ) {}

  add(t: number, status: number | null, latency: number | null, failed: boolean, delayAfter: number, bytes: number): void {
    this.requests++;
    if (status !== null) countStatus(this, status);
    if (failed) this.failures++;
    if (latency !== null) {
      this.latencySum += latency;
      this.latencyN++;
      if (this.latencyMax === null || latency > this.latencyMax) this.latencyMax = latency;
      if (this.lastLatencyT === null || t >= this.lastLatencyT) {
        this.lastLatency = latency;
        this.lastLatencyT = t;
      }
    }
    if (t >= this.lastT) {
      this.lastT = t;
      this.lastDelay = delayAfter;
    }
    this.delaySum += delayAfter;
    this.bytes += bytes;
  }
}

function nul(v: number): number | null {
  return v !== v ? null : v;
}

function post(port: NonNullable<typeof parentPort>, m: FromWorker): void {
  port.postMessage(m);
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A write kept in order in the worker's queue: a batch of records or a change of a crawl row. */
type WriteOp = BatchMessage | Extract<ToWorker, { type: 'updateCrawl' }>;

/** Responses, changes and events of a write (0 for a crawl update). */
function opRecords(op: WriteOp): number {
  return op.type === 'batch' ? op.n + op.changes.length + op.events.length : 0;
}

/** The crawls a write is about (for messages). */
function opCrawls(op: WriteOp): number[] {
  if (op.type === 'updateCrawl') return [op.crawlId];
  const out = new Set<number>();
  for (let i = 0; i < op.n; i++) out.add(op.nums[i * RESPONSE_STRIDE + R_CRAWL]);
  for (const c of op.changes) out.add(c[0]);
  for (const e of op.events) out.add(e[0]);
  if (op.frontier) {
    for (let i = 0; i < op.frontier.n; i++) out.add(op.frontier.nums[i * FRONTIER_STRIDE + F_CRAWL]);
    for (const st of op.frontier.slotStates) out.add(st[0]);
  }
  return [...out];
}

function opsLabel(ops: readonly WriteOp[]): string {
  const records = ops.reduce((k, op) => k + opRecords(op), 0);
  const batches = ops.filter((op) => op.type === 'batch').length;
  return batches === 1 && ops.length === 1 ? `batch of ${records} records` : `${ops.length} writes (${batches} batches) of ${records} records`;
}

/** The write side: prepared statements, the slot cache and the batch transaction. */
class HistoryStore {
  /** crawl id → slot key → slot id. Cleared when a transaction rolls back (it may hold rolled-back ids). */
  private readonly slotIds = new Map<number, Map<string, number>>();
  private readonly insertSlot: Statement;
  private readonly selectSlot: Statement;
  /** Response rows, many to an INSERT. */
  private readonly responseRows: MultiRow;
  private readonly insertChange: Statement;
  private readonly insertEvent: Statement;
  private readonly insertCrawl: Statement;
  private readonly upsertSlotStats: Statement;
  private readonly upsertStatus: Statement;
  private readonly updateStatements = new Map<string, Statement>();
  private readonly writeOpsTx: Transaction<(ops: readonly WriteOp[]) => void>;
  /** Frontier ops and slot states (crash-safe resume). */
  readonly frontier: FrontierWriter;
  /** The 1 s … 1 h buckets of every slot and crawl (store/aggregates.ts). */
  readonly series: SeriesAggregator;
  /** The buckets in memory were forgotten after a rollback: catch up from the rows before writing. */
  private seriesStale = false;

  constructor(private readonly db: Database) {
    this.frontier = new FrontierWriter(db, (crawlId, key) => this.slotId(crawlId, key));
    this.insertSlot = db.prepare(`INSERT OR IGNORE INTO slots (crawl_id, key) VALUES (?, ?)`);
    this.selectSlot = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();
    this.responseRows = new MultiRow(db, (rows) =>
      `INSERT INTO responses (crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time,
         bytes, in_flight, delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message,
         depth, content_type, attempt)
       VALUES ${valuesList(RESPONSE_COLUMNS, rows)}`, RESPONSE_COLUMNS);
    this.insertChange = db.prepare(
      `INSERT INTO changes (crawl_id, t, slot_id, setting, source, old_json, new_json) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertEvent = db.prepare(
      `INSERT INTO events (crawl_id, t, slot_id, kind, code, text, data_json) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertCrawl = db.prepare(
      `INSERT INTO crawls (name, config_json, settings_json, status, created_at) VALUES (?, ?, ?, 'created', ?)`,
    );
    this.upsertSlotStats = db.prepare(
      `INSERT INTO slot_stats (crawl_id, slot_id, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
         latency_sum, latency_n, last_latency, last_latency_t, last_delay, last_t, bytes, last_cause, last_backoff,
         retries, robots, depth_max)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (crawl_id, slot_id) DO UPDATE SET
         requests = requests + excluded.requests, responses = responses + excluded.responses,
         s2xx = s2xx + excluded.s2xx, s3xx = s3xx + excluded.s3xx, s4xx = s4xx + excluded.s4xx,
         s5xx = s5xx + excluded.s5xx, s429 = s429 + excluded.s429, failures = failures + excluded.failures,
         latency_sum = latency_sum + excluded.latency_sum, latency_n = latency_n + excluded.latency_n,
         last_latency = CASE WHEN excluded.last_latency_t IS NOT NULL
             AND (last_latency_t IS NULL OR excluded.last_latency_t >= last_latency_t)
           THEN excluded.last_latency ELSE last_latency END,
         last_latency_t = CASE WHEN excluded.last_latency_t IS NOT NULL
             AND (last_latency_t IS NULL OR excluded.last_latency_t >= last_latency_t)
           THEN excluded.last_latency_t ELSE last_latency_t END,
         last_delay = CASE WHEN excluded.last_t >= last_t THEN excluded.last_delay ELSE last_delay END,
         last_cause = CASE WHEN excluded.last_t >= last_t THEN excluded.last_cause ELSE last_cause END,
         last_backoff = CASE WHEN excluded.last_t >= last_t THEN excluded.last_backoff ELSE last_backoff END,
         last_t = max(last_t, excluded.last_t),
         bytes = bytes + excluded.bytes,
         retries = retries + excluded.retries, robots = robots + excluded.robots, depth_max = max(depth_max, excluded.depth_max)`,
    );
    this.upsertStatus = db.prepare(
      `INSERT INTO status_counts (crawl_id, status, n) VALUES (?, ?, ?)
       ON CONFLICT (crawl_id, status) DO UPDATE SET n = n + excluded.n`,
    );
    this.series = new SeriesAggregator(db);
    // Room for the hot index and bucket pages of a busy crawl (the default is 2 MB).
    db.pragma('cache_size = -65536');
    this.writeOpsTx = db.transaction((ops: readonly WriteOp[]) => {
      for (const op of ops) this.writeOp(op);
    });
  }

  createCrawl(name: string, configJson: string, settingsJson: string, createdAt: number): number {
    return Number(this.insertCrawl.run(name, configJson, settingsJson, createdAt).lastInsertRowid);
  }

  /** Deletes a crawl; its slots, responses, changes, events and aggregates go with it (ON DELETE CASCADE). */
  deleteCrawl(crawlId: number): number {
    this.caughtUp();
    const n = this.db.transaction(() => {
      this.series.write();
      const deleted = Number(this.db.prepare('DELETE FROM crawls WHERE id = ?').run(crawlId).changes);
      this.series.clampCovered();
      return deleted;
    })();
    this.series.reset();
    this.slotIds.delete(crawlId);
    return n;
  }

  /** Writes the buckets still in memory (flush, close): readers then see every committed row in them. */
  writeAggregates(): void {
    this.caughtUp();
    if (!this.series.pending) return;
    try {
      this.db.transaction(() => this.series.write()).immediate();
    } catch (e) {
      this.rolledBack();
      throw e;
    }
  }

  updateCrawl(crawlId: number, patch: CrawlPatchWire): void {
    const cols: [keyof CrawlPatchWire, string][] = [
      ['status', 'status'],
      ['startedAt', 'started_at'],
      ['finishedAt', 'finished_at'],
      ['summaryJson', 'summary_json'],
      ['settingsJson', 'settings_json'],
      ['derivedFrom', 'derived_from'],
      ['derivedJson', 'derived_json'],
      ['sharedJson', 'shared_json'],
    ];
    const present = cols.filter(([k]) => patch[k] !== undefined);
    if (present.length === 0) return;
    const key = present.map(([k]) => k).join(',');
    let stmt = this.updateStatements.get(key);
    if (!stmt) {
      stmt = this.db.prepare(`UPDATE crawls SET ${present.map(([, c]) => `${c} = ?`).join(', ')} WHERE id = ?`);
      this.updateStatements.set(key, stmt);
    }
    const info = stmt.run(...present.map(([k]) => patch[k]), crawlId);
    if (info.changes === 0) throw new Error(`updateCrawl: no crawl with id ${crawlId}`);
  }

  /**
   * Commits queued writes (batches and crawl updates), in order, in one transaction: bigger
   * transactions rewrite each hot index page once instead of once per batch, which is what lets a
   * busy worker catch up. A failure the store is to blame for (disk full, lock, read-only, I/O:
   * store-faults.ts) keeps everything from the failed write on for a retry (`settled` writes were
   * committed, `fault` is the error). A write refused for its data (a constraint, a bug) is
   * found by writing each alone, and only that one is left out, with its error in `errors`.
   */
  writeOps(ops: readonly WriteOp[]): { settled: number; errors: (string | undefined)[]; fault?: unknown } {
    try {
      this.caughtUp();
    } catch (e) {
      this.series.reset();
      return { settled: 0, errors: [], fault: e };
    }
    try {
      timed(opsLabel(ops), () => this.writeOpsTx.immediate(ops), SLOW_BATCH_MS);
      return { settled: ops.length, errors: ops.map(() => undefined) };
    } catch (e) {
      this.rolledBack();
      if (isStoreFault(e)) return { settled: 0, errors: [], fault: e };
      if (ops.length === 1) return { settled: 1, errors: [errorText(e)] };
    }
    const errors: (string | undefined)[] = [];
    for (let i = 0; i < ops.length; i++) {
      try {
        this.caughtUp();
      } catch (e) {
        this.series.reset();
        return { settled: i, errors, fault: e };
      }
      try {
        timed(opsLabel([ops[i]]), () => this.writeOpsTx.immediate([ops[i]]), SLOW_BATCH_MS);
        errors.push(undefined);
      } catch (e) {
        this.rolledBack();
        if (isStoreFault(e)) return { settled: i, errors, fault: e };
        errors.push(errorText(e));
      }
    }
    return { settled: ops.length, errors };
  }

  /**
   * After a rollback: the slot cache and the buckets in memory may hold rolled-back rows. They are
   * forgotten, and rebuilt from the committed rows before the next write (not now: a store that
   * just refused a write, e.g. under another program's lock, would make this wait as long again).
   */
  private rolledBack(): void {
    this.slotIds.clear();
    this.series.reset();
    this.seriesStale = true;
  }

  /** Rebuilds the buckets in memory from the committed rows after a rollback (throws what the store throws). */
  private caughtUp(): void {
    if (!this.seriesStale) return;
    this.series.catchUp();
    this.seriesStale = false;
  }

  private writeOp(op: WriteOp): void {
    if (op.type === 'batch') this.writeBatchRows(op);
    else this.updateCrawl(op.crawlId, op.patch);
  }

  /**
   * Writes the buckets, checkpoints and closes. The buckets are derived from the raw rows and
   * rebuilt at the next open, and the WAL keeps every commit: if the store refuses either now (a
   * full disk), that is said in the log, not an error; the connection is closed regardless. With
   * `storeFailing` (writes were just refused) neither is tried.
   */
  checkpointAndClose(file: string, storeFailing = false): void {
    try {
      // A store that just refused the writes would make each of these wait (a lock) or fail again.
      if (storeFailing) return;
      try {
        this.writeAggregates();
      } catch (e) {
        console.warn(`[slotscope:history] ${file}: aggregates not written at close (rebuilt from the rows at the next open): ${errorText(e)}`);
      }
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } catch (e) {
        console.warn(`[slotscope:history] ${file}: no checkpoint at close (the WAL file keeps every commit): ${errorText(e)}`);
      }
    } finally {
      this.db.close();
    }
  }

  private slotId(crawlId: number, key: string): number {
    let byKey = this.slotIds.get(crawlId);
    if (byKey === undefined) {
      byKey = new Map();
      this.slotIds.set(crawlId, byKey);
    }
    let id = byKey.get(key);
    if (id === undefined) {
      const made = this.insertSlot.run(crawlId, key);
      if (made.changes > 0) {
        // A new slot row: no bucket of it can be stored yet (the aggregator need not look).
        id = Number(made.lastInsertRowid);
        this.series.noneStored(id);
      } else id = this.selectSlot.get(crawlId, key) as number;
      byKey.set(key, id);
    }
    return id;
  }

  private writeBatchRows(m: BatchMessage): void {
    const { nums, urls, dict, n } = m;
    // A batch refused midway (a data error) may have left rows waiting: they were rolled back.
    this.responseRows.reset();
    const str = (i: number): string | null => (i < 0 ? null : dict[i]);
    const batchSlots: number[] = [];
    const batchCrawls: number[] = [];
    // Keyed by slot id alone: slot ids are unique across crawls.
    const stats = new Map<number, Acc>();
    // Keyed by crawl id and status as one number (a string key would be built per response).
    const statuses = new Map<number | string, [number, number, number]>();
    const acc = (map: Map<number, Acc>, crawlId: number, slotId: number): Acc => {
      let a = map.get(slotId);
      if (a === undefined) {
        a = new Acc(crawlId, slotId);
        map.set(slotId, a);
      }
      return a;
    };

    for (let i = 0; i < n; i++) {
      const o = i * RESPONSE_STRIDE;
      const crawlId = nums[o + R_CRAWL];
      // Rows name their slot by dictionary index: look each one up once per batch and crawl.
      const slotIndex = nums[o + R_SLOT];
      let slotId = batchSlots[slotIndex];
      if (slotId === undefined || batchCrawls[slotIndex] !== crawlId) {
        slotId = batchSlots[slotIndex] = this.slotId(crawlId, dict[slotIndex]);
        batchCrawls[slotIndex] = crawlId;
      }
      const t = nums[o + R_T];
      const status = nul(nums[o + R_STATUS]);
      const latency = nul(nums[o + R_LATENCY]);
      const bytes = nums[o + R_BYTES];
      const delayAfter = nums[o + R_DELAY_AFTER];
      const errorKind = str(nums[o + R_ERROR_KIND]);
      const rows = this.responseRows;
      const r = rows.args;
      const c = rows.at();
      r[c] = crawlId;
      r[c + 1] = slotId;
      r[c + 2] = t;
      r[c + 3] = nums[o + R_STARTED_AT];
      r[c + 4] = nums[o + R_WAIT_MS];
      r[c + 5] = urls[i];
      r[c + 6] = dict[nums[o + R_METHOD]];
      r[c + 7] = status;
      r[c + 8] = latency;
      r[c + 9] = nul(nums[o + R_DOWNLOAD_TIME]);
      r[c + 10] = bytes;
      r[c + 11] = nums[o + R_IN_FLIGHT];
      r[c + 12] = nums[o + R_DELAY_BEFORE];
      r[c + 13] = delayAfter;
      r[c + 14] = dict[nums[o + R_DELAY_CAUSE]];
      r[c + 15] = nums[o + R_BACKOFF_LEVEL];
      r[c + 16] = nul(nums[o + R_REUSED]);
      r[c + 17] = errorKind;
      r[c + 18] = str(nums[o + R_ERROR_MESSAGE]);
      r[c + 19] = nums[o + R_DEPTH];
      r[c + 20] = str(nums[o + R_CONTENT_TYPE]);
      r[c + 21] = nums[o + R_ATTEMPT];
      rows.added();
      const failed = errorKind !== null;
      const a = acc(stats, crawlId, slotId);
      a.add(t, status, latency, failed, delayAfter, bytes);
      if (a.lastT === t) {
        a.lastCause = dict[nums[o + R_DELAY_CAUSE]];
        a.lastBackoff = nums[o + R_BACKOFF_LEVEL];
      }
      if (nums[o + R_ATTEMPT] > 0) a.retries++;
      if (urls[i].endsWith('/robots.txt')) a.robots++;
      else if (nums[o + R_DEPTH] > a.depthMax) a.depthMax = nums[o + R_DEPTH];
      this.series.add(crawlId, slotId, t, status, latency, failed, delayAfter, bytes, nums[o + R_IN_FLIGHT]);
      if (status !== null) {
        const key = status >= 0 && status < 1000 && Number.isInteger(status) ? crawlId * 1000 + status : `${crawlId}|${status}`;
        const s = statuses.get(key);
        if (s === undefined) statuses.set(key, [crawlId, status, 1]);
        else s[2]++;
      }
    }

    this.responseRows.finish();
    // A multi-row INSERT gives its rows consecutive ids: the last one inserted is the batch's highest.
    if (n > 0) this.series.coverUpTo(this.responseRows.lastId);

    for (const a of stats.values()) {
      this.upsertSlotStats.run(
        a.crawlId, a.slotId, a.requests, a.responses, a.s2xx, a.s3xx, a.s4xx, a.s5xx, a.s429, a.failures,
        a.latencySum, a.latencyN, a.lastLatency, a.lastLatencyT, a.lastDelay, a.lastT, a.bytes, a.lastCause, a.lastBackoff,
        a.retries, a.robots, a.depthMax,
      );
    }
    this.series.maybeWrite();
    for (const [crawlId, status, count] of statuses.values()) this.upsertStatus.run(crawlId, status, count);

    for (const [crawlId, t, slot, setting, source, oldJson, newJson] of m.changes) {
      const slotId = slot === null ? null : this.slotId(crawlId, slot);
      this.insertChange.run(crawlId, t, slotId, setting, source, oldJson, newJson);
    }
    for (const [crawlId, t, slot, kind, code, text, dataJson] of m.events) {
      const slotId = slot === null ? null : this.slotId(crawlId, slot);
      this.insertEvent.run(crawlId, t, slotId, kind, code, text, dataJson);
    }
    // Frontier marks last: a URL's done mark commits with its response row, in this transaction.
    if (m.frontier) this.frontier.apply(m.frontier);
  }
}

/** Parameters of a response row. */
const RESPONSE_COLUMNS = 22;

function run(port: NonNullable<typeof parentPort>, init: WorkerInit): void {
  let store: HistoryStore;
  let db: Database;
  let lock: HistoryLock | null = null;
  let interrupted: number[];
  nameThisThread('slotscope-hist');
  try {
    // One writer per file: a second Slotscope is refused before anything is read or written.
    lock = lockHistoryFile(init.file);
    db = openDatabase(init.file);
    store = new HistoryStore(db);
    // Rows a crash kept out of the buckets (or every row, after migration 3) are aggregated now.
    store.series.rebuildIfLevelsMissing();
    store.series.catchUp();
    // With the lock held, a crawl still marked running belongs to a process that died.
    interrupted = markInterrupted(db);
  } catch (e) {
    lock?.release();
    post(port, { type: 'fatal', message: errorText(e) });
    port.close();
    return;
  }
  post(port, { type: 'ready', schemaVersion: readSchemaVersion(db), interrupted, tid: currentThreadId() });

  /** The first data error since the last flush (a write left out), reported with the flush's reply. */
  let unreported: string | undefined;
  let closed = false;

  // Writes (batches and crawl updates) wait here, in order, until committed. Batches are written
  // once the messages that arrived together are read (setImmediate), so batches that queued up
  // while the worker was busy share one transaction; any other message first commits the writes
  // before it, keeping the order. When the store cannot write (store-faults.ts), the queue is kept
  // and retried: nothing is dropped, and the main thread is told (`stalled`) so the crawl pauses.
  const queue: WriteOp[] = [];
  let queuedRecords = 0;
  /** Writes ever queued, and ever settled (committed, or left out for their data). */
  let enqueued = 0;
  let settled = 0;
  let stall: { since: number; attempts: number; text: string } | null = null;
  let retryTimer: NodeJS.Timeout | undefined;
  let drainScheduled = false;
  /** flush({ wait }) requests answered once the writes queued before them are settled. */
  const waiting: { id: number; upTo: number; rows: boolean }[] = [];

  const enqueue = (op: WriteOp): void => {
    queue.push(op);
    queuedRecords += opRecords(op);
    enqueued++;
  };

  const pruner = startPruning(db, store, () => !closed && stall === null);

  /** Writes the buckets in memory; a data error is kept for the next flush's reply. */
  const writeAggregates = (): void => {
    try {
      store.writeAggregates();
    } catch (e) {
      // The buckets stay in memory and go out with the next write; a data error is worth saying.
      if (!isStoreFault(e)) unreported ??= `history aggregates not saved: ${errorText(e)}`;
    }
  };

  /** Answers a flush: the buckets written (unless it asked for the rows only), then the first data error since the last one. */
  const answerFlush = (id: number, rows = false): void => {
    if (!rows) writeAggregates();
    post(port, { type: 'reply', id, error: unreported });
    unreported = undefined;
  };

  /** One attempt at the whole queue. Returns true when it is empty afterwards. */
  const attempt = (): boolean => {
    if (queue.length === 0) return true;
    const ops = queue.slice();
    const r = store.writeOps(ops);
    for (let i = 0; i < r.settled; i++) {
      const op = ops[i];
      const e = r.errors[i];
      queuedRecords -= opRecords(op);
      if (op.type === 'batch') {
        const records = opRecords(op);
        if (e === undefined) post(port, { type: 'batchDone', seq: op.seq, records });
        else {
          const error = `history batch of ${records} records not saved: ${e}`;
          unreported ??= error;
          post(port, { type: 'batchDone', seq: op.seq, records, error });
        }
      } else if (e !== undefined) {
        const message = `updateCrawl(${op.crawlId}) failed: ${e}`;
        unreported ??= message;
        post(port, { type: 'error', message });
      }
    }
    queue.splice(0, r.settled);
    settled += r.settled;
    if (r.fault !== undefined) {
      const kind = storeFaultKind(r.fault) ?? 'other';
      const text = storeFaultText(init.file, kind, errorText(r.fault));
      if (stall === null) stall = { since: Date.now(), attempts: 0, text };
      stall.attempts++;
      stall.text = text;
      post(port, { type: 'stalled', kind, text, records: queuedRecords, ops: queue.length, since: stall.since, attempts: stall.attempts });
      scheduleRetry();
    } else if (stall !== null) {
      post(port, { type: 'recovered', ms: Date.now() - stall.since, attempts: stall.attempts });
      stall = null;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      retryTimer = undefined;
    }
    while (waiting.length > 0 && waiting[0].upTo <= settled) {
      const w = waiting.shift()!;
      answerFlush(w.id, w.rows);
    }
    return queue.length === 0;
  };

  /** Retries a stalled queue after 250 ms, doubling up to 2 s (a lock adds its 5 s busy wait). */
  const scheduleRetry = (): void => {
    if (retryTimer !== undefined || closed) return;
    const ms = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(10, stall!.attempts - 1));
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (!closed) attempt();
    }, ms);
  };

  /** Writes what is queued unless a stall waits for its retry. Returns true when the queue is empty. */
  const drain = (): boolean => {
    drainScheduled = false;
    if (closed) return queue.length === 0;
    if (stall !== null) return false;
    return attempt();
  };

  const drainSoon = (): void => {
    if (!drainScheduled && stall === null) {
      drainScheduled = true;
      setImmediate(drain);
    }
  };

  /** The refusal of a request that needs the store while it cannot write. */
  const stalledError = (what: string): string =>
    `${what}: ${stall!.text}; ${queuedRecords} records wait to be written (retried every ${RETRY_MAX_MS / 1000} s)`;

  port.on('message', (m: ToWorker) => {
    if (closed) {
      if (m.type === 'flush' || m.type === 'close') post(port, { type: 'reply', id: m.id });
      return;
    }
    if (m.type === 'batch' || m.type === 'updateCrawl') {
      enqueue(m);
      drainSoon();
      return;
    }
    if (m.type === 'retry') {
      if (stall !== null) {
        if (retryTimer !== undefined) clearTimeout(retryTimer);
        retryTimer = undefined;
        attempt();
      }
      return;
    }
    const empty = drain();
    if (m.type === 'aggregates') {
      if (empty) writeAggregates();
      return;
    }
    if (m.type === 'flush') {
      if (empty) answerFlush(m.id, m.rows === true);
      else if (m.wait) waiting.push({ id: m.id, upTo: enqueued, rows: m.rows === true });
      else post(port, { type: 'reply', id: m.id, error: stalledError('history not flushed') });
      return;
    }
    if (!empty && m.type !== 'close' && m.type !== 'setRetention') {
      post(port, { type: 'reply', id: m.id, error: stalledError(`${m.type} refused`) });
      return;
    }
    switch (m.type) {
      case 'createCrawl':
        try {
          post(port, { type: 'reply', id: m.id, value: store.createCrawl(m.name, m.configJson, m.settingsJson, m.createdAt) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `createCrawl failed: ${faultText(e)}` });
        }
        return;
      case 'deleteCrawl':
        try {
          post(port, { type: 'reply', id: m.id, value: store.deleteCrawl(m.crawlId) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `deleteCrawl(${m.crawlId}) failed: ${faultText(e)}` });
        }
        return;
      case 'resumeFrontier':
        try {
          post(port, { type: 'reply', id: m.id, value: store.frontier.prepareResume(m.crawlId) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `resumeFrontier(${m.crawlId}) failed: ${faultText(e)}` });
        }
        return;
      case 'setRetention':
        if (!empty) {
          post(port, { type: 'reply', id: m.id, error: stalledError('saving the retention settings refused') });
          return;
        }
        retentionMessage(port, db, pruner, m);
        return;
      case 'prune':
        retentionMessage(port, db, pruner, m);
        return;
      case 'close': {
        // One last attempt at whatever a stall kept; what still cannot be written is said, never dropped silently.
        if (!empty) attempt();
        closed = true;
        clearInterval(pruner.timer);
        if (retryTimer !== undefined) clearTimeout(retryTimer);
        let error = unreported;
        if (queue.length > 0) {
          const crawls = [...new Set(queue.flatMap(opCrawls))].sort((a, b) => a - b);
          error = `${queuedRecords} history records (and ${queue.length} writes in all) could not be written before closing: ${stall?.text ?? 'the store cannot write'}. ` +
            `Nothing after the last commit is in the file: ${crawls.length > 0 ? `crawl ${crawls.join(', ')} stays resumable and fetches those pages again` : 'resume the crawl to fetch those pages again'}`;
        }
        for (const w of waiting.splice(0)) post(port, { type: 'reply', id: w.id, error: error ?? 'the history was closed' });
        try {
          store.checkpointAndClose(init.file, queue.length > 0);
        } catch (e) {
          error ??= `closing the history database ${init.file} failed: ${errorText(e)}`;
        }
        // Released before the reply, so whoever waits on close() can open the file again at once.
        lock?.release();
        post(port, { type: 'reply', id: m.id, error });
        port.close();
        return;
      }
      default:
        post(port, { type: 'error', message: `history worker: unknown message ${JSON.stringify((m as { type?: unknown }).type)}` });
    }
  });

  /** An error's text, or for a store fault the sentence that names the file and what to do. */
  function faultText(e: unknown): string {
    const kind = storeFaultKind(e);
    return kind === null ? errorText(e) : storeFaultText(init.file, kind, errorText(e));
  }
}

/** The retention pruner of this worker: a pass now, then every PRUNE_INTERVAL_MS. */
function startPruning(db: Database, store: HistoryStore, isOpen: () => boolean): { pruner: RetentionPruner; timer: NodeJS.Timeout } {
  const pruner = new RetentionPruner(db, {
    // Buckets in memory are written first so the covered id stays right when the newest rows go.
    beforeDelete: () => store.series.write(),
    afterDelete: () => store.series.clampCovered(),
    isOpen,
  });
  const pass = (): void => {
    pruner.prune().catch((e: unknown) => console.warn(`[slotscope:history] pruning failed: ${errorText(e)}`));
  };
  pass();
  const timer = setInterval(pass, PRUNE_INTERVAL_MS);
  timer.unref();
  return { pruner, timer };
}

/** setRetention: validate whole, save, prune, reply with the settings; prune: a pass now, reply with what it deleted. */
function retentionMessage(
  port: NonNullable<typeof parentPort>, db: Database, p: { pruner: RetentionPruner },
  m: Extract<ToWorker, { type: 'setRetention' | 'prune' }>,
): void {
  if (m.type === 'setRetention') {
    let saved;
    try {
      const r = mergeRetention(m.patch, readRetention(db));
      if (!r.ok) {
        post(port, { type: 'reply', id: m.id, error: r.errors.map((e) => e.message).join('\n') });
        return;
      }
      writeRetention(db, r.settings);
      saved = r.settings;
    } catch (e) {
      post(port, { type: 'reply', id: m.id, error: `saving the retention settings failed: ${errorText(e)}` });
      return;
    }
    post(port, { type: 'reply', id: m.id, value: saved });
    p.pruner.prune().catch((e: unknown) => console.warn(`[slotscope:history] pruning failed: ${errorText(e)}`));
    return;
  }
  p.pruner.prune(m.now).then(
    (value) => post(port, { type: 'reply', id: m.id, value }),
    (e: unknown) => post(port, { type: 'reply', id: m.id, error: `pruning failed: ${errorText(e)}` }),
  );
}

if (parentPort === null) throw new Error('history-worker must run in a worker_threads Worker');
run(parentPort, workerData as WorkerInit);
