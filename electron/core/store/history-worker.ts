// The history worker thread: owns the only write connection and commits each batch from
// HistoryWriter in one transaction, keeping the per-slot, per-status and per-second/minute aggregates.
import { parentPort, workerData } from 'node:worker_threads';
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { lockHistoryFile, openDatabase, timed, type HistoryLock } from './database';
import { FrontierWriter, markInterrupted } from './frontier-store';
import { readSchemaVersion } from './migrate';
import { countStatus, SeriesAggregator } from './aggregates';
import { currentThreadId } from './thread-priority';
import { RetentionPruner, PRUNE_INTERVAL_MS, mergeRetention, readRetention, writeRetention } from './retention';
import {
  R_BACKOFF_LEVEL, R_BYTES, R_CONTENT_TYPE, R_CRAWL, R_DELAY_AFTER, R_DELAY_BEFORE, R_DELAY_CAUSE, R_DEPTH,
  R_DOWNLOAD_TIME, R_ERROR_KIND, R_ERROR_MESSAGE, R_IN_FLIGHT, R_LATENCY, R_METHOD, R_REUSED, R_SLOT,
  R_STARTED_AT, R_STATUS, R_T, R_WAIT_MS, RESPONSE_STRIDE,
} from './history-protocol';
import type { BatchMessage, CrawlPatchWire, FromWorker, ToWorker, WorkerInit } from './history-protocol';

/** A batch slower than one flush interval means the writer is falling behind: worth a warning. */
const SLOW_BATCH_MS = 250;

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

/** The write side: prepared statements, the slot cache and the batch transaction. */
class HistoryStore {
  /** crawl id → slot key → slot id. Cleared when a transaction rolls back (it may hold rolled-back ids). */
  private readonly slotIds = new Map<number, Map<string, number>>();
  private readonly insertSlot: Statement;
  private readonly selectSlot: Statement;
  private readonly insertResponse: Statement;
  private readonly insertChange: Statement;
  private readonly insertEvent: Statement;
  private readonly insertCrawl: Statement;
  private readonly upsertSlotStats: Statement;
  private readonly upsertStatus: Statement;
  private readonly updateStatements = new Map<string, Statement>();
  private readonly writeBatchTx: Transaction<(m: BatchMessage) => void>;
  private readonly writeGroupTx: Transaction<(ms: readonly BatchMessage[]) => void>;
  /** Frontier ops and slot states (crash-safe resume). */
  readonly frontier: FrontierWriter;
  /** The 1 s … 1 h buckets of every slot and crawl (store/aggregates.ts). */
  readonly series: SeriesAggregator;

  constructor(private readonly db: Database) {
    this.frontier = new FrontierWriter(db, (crawlId, key) => this.slotId(crawlId, key));
    this.insertSlot = db.prepare(`INSERT OR IGNORE INTO slots (crawl_id, key) VALUES (?, ?)`);
    this.selectSlot = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();
    this.insertResponse = db.prepare(
      `INSERT INTO responses (crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time,
         bytes, in_flight, delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message,
         depth, content_type)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
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
         latency_sum, latency_n, last_latency, last_latency_t, last_delay, last_t, bytes, last_cause, last_backoff)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
         bytes = bytes + excluded.bytes`,
    );
    this.upsertStatus = db.prepare(
      `INSERT INTO status_counts (crawl_id, status, n) VALUES (?, ?, ?)
       ON CONFLICT (crawl_id, status) DO UPDATE SET n = n + excluded.n`,
    );
    this.series = new SeriesAggregator(db);
    // Room for the hot index and bucket pages of a busy crawl (the default is 2 MB).
    db.pragma('cache_size = -65536');
    this.writeBatchTx = db.transaction((m: BatchMessage) => this.writeBatchRows(m));
    this.writeGroupTx = db.transaction((ms: readonly BatchMessage[]) => {
      for (const m of ms) this.writeBatchRows(m);
    });
  }

  createCrawl(name: string, configJson: string, settingsJson: string, createdAt: number): number {
    return Number(this.insertCrawl.run(name, configJson, settingsJson, createdAt).lastInsertRowid);
  }

  /** Deletes a crawl; its slots, responses, changes, events and aggregates go with it (ON DELETE CASCADE). */
  deleteCrawl(crawlId: number): number {
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
    if (this.series.pending) this.db.transaction(() => this.series.write()).immediate();
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

  /** Commits one batch in one transaction; on failure nothing of it is kept. */
  writeBatch(m: BatchMessage): void {
    try {
      timed(`batch of ${m.n + m.changes.length + m.events.length} records`, () => this.writeBatchTx.immediate(m), SLOW_BATCH_MS);
    } catch (e) {
      this.slotIds.clear();
      // Buckets in memory may hold rolled-back rows: rebuild them from what was committed.
      try {
        this.series.catchUp();
      } catch {
        this.series.reset();
      }
      throw e;
    }
  }

  /**
   * Commits batches that queued up while the worker was busy in one transaction: bigger
   * transactions rewrite each hot index page once instead of once per batch, which is what lets a
   * busy worker catch up. If the group fails, each batch is retried alone so only the bad one is
   * lost. Returns each batch's error, if any.
   */
  writeBatches(ms: readonly BatchMessage[]): (string | undefined)[] {
    if (ms.length > 1) {
      try {
        const records = ms.reduce((k, m) => k + m.n + m.changes.length + m.events.length, 0);
        timed(`${ms.length} batches of ${records} records`, () => this.writeGroupTx.immediate(ms), SLOW_BATCH_MS);
        return ms.map(() => undefined);
      } catch {
        this.slotIds.clear();
        // Buckets in memory may hold rolled-back rows: rebuild them from what was committed.
        try {
          this.series.catchUp();
        } catch {
          this.series.reset();
        }
      }
    }
    return ms.map((m) => {
      try {
        this.writeBatch(m);
        return undefined;
      } catch (e) {
        return errorText(e);
      }
    });
  }

  checkpointAndClose(): void {
    this.writeAggregates();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
  }

  private slotId(crawlId: number, key: string): number {
    let byKey = this.slotIds.get(crawlId);
    if (byKey === undefined) {
      byKey = new Map();
      this.slotIds.set(crawlId, byKey);
    }
    let id = byKey.get(key);
    if (id === undefined) {
      this.insertSlot.run(crawlId, key);
      id = this.selectSlot.get(crawlId, key) as number;
      byKey.set(key, id);
    }
    return id;
  }

  private writeBatchRows(m: BatchMessage): void {
    const { nums, urls, dict, n } = m;
    const str = (i: number): string | null => (i < 0 ? null : dict[i]);
    const batchSlots: number[] = [];
    const batchCrawls: number[] = [];
    // Keyed by slot id alone: slot ids are unique across crawls.
    const stats = new Map<number, Acc>();
    const statuses = new Map<string, [number, number, number]>();
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
      const responseId = this.insertResponse.run(
        crawlId, slotId, t, nums[o + R_STARTED_AT], nums[o + R_WAIT_MS], urls[i], dict[nums[o + R_METHOD]],
        status, latency, nul(nums[o + R_DOWNLOAD_TIME]), bytes, nums[o + R_IN_FLIGHT],
        nums[o + R_DELAY_BEFORE], delayAfter, dict[nums[o + R_DELAY_CAUSE]], nums[o + R_BACKOFF_LEVEL],
        nul(nums[o + R_REUSED]), errorKind, str(nums[o + R_ERROR_MESSAGE]), nums[o + R_DEPTH],
        str(nums[o + R_CONTENT_TYPE]),
      ).lastInsertRowid as number;
      const failed = errorKind !== null;
      const a = acc(stats, crawlId, slotId);
      a.add(t, status, latency, failed, delayAfter, bytes);
      if (a.lastT === t) {
        a.lastCause = dict[nums[o + R_DELAY_CAUSE]];
        a.lastBackoff = nums[o + R_BACKOFF_LEVEL];
      }
      this.series.add(responseId, crawlId, slotId, t, status, latency, failed, delayAfter, bytes, nums[o + R_IN_FLIGHT]);
      if (status !== null) {
        const key = `${crawlId}|${status}`;
        const s = statuses.get(key);
        if (s === undefined) statuses.set(key, [crawlId, status, 1]);
        else s[2]++;
      }
    }

    for (const a of stats.values()) {
      this.upsertSlotStats.run(
        a.crawlId, a.slotId, a.requests, a.responses, a.s2xx, a.s3xx, a.s4xx, a.s5xx, a.s429, a.failures,
        a.latencySum, a.latencyN, a.lastLatency, a.lastLatencyT, a.lastDelay, a.lastT, a.bytes, a.lastCause, a.lastBackoff,
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

function run(port: NonNullable<typeof parentPort>, init: WorkerInit): void {
  let store: HistoryStore;
  let db: Database;
  let lock: HistoryLock | null = null;
  let interrupted: number[];
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

  /** The first write error since the last flush, reported with the flush's reply. */
  let unreported: string | undefined;
  let closed = false;
  const pruner = startPruning(db, store, () => !closed);

  // Batches are written once the messages that arrived together are read (setImmediate), so
  // batches that queued up while the worker was busy share one transaction; any other message
  // first commits the batches before it, keeping the order.
  const queued: BatchMessage[] = [];
  let drainScheduled = false;
  const drain = (): void => {
    drainScheduled = false;
    if (queued.length === 0 || closed) return;
    const group = queued.splice(0);
    const errors = store.writeBatches(group);
    group.forEach((b, i) => {
      const records = b.n + b.changes.length + b.events.length;
      const e = errors[i];
      if (e === undefined) post(port, { type: 'batchDone', seq: b.seq, records });
      else {
        const error = `history batch of ${records} records not saved: ${e}`;
        unreported ??= error;
        post(port, { type: 'batchDone', seq: b.seq, records, error });
      }
    });
  };

  port.on('message', (m: ToWorker) => {
    if (closed) {
      if (m.type === 'flush' || m.type === 'close') post(port, { type: 'reply', id: m.id });
      return;
    }
    if (m.type === 'batch') {
      queued.push(m);
      if (!drainScheduled) {
        drainScheduled = true;
        setImmediate(drain);
      }
      return;
    }
    drain();
    switch (m.type) {
      case 'createCrawl':
        try {
          post(port, { type: 'reply', id: m.id, value: store.createCrawl(m.name, m.configJson, m.settingsJson, m.createdAt) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `createCrawl failed: ${errorText(e)}` });
        }
        return;
      case 'deleteCrawl':
        try {
          post(port, { type: 'reply', id: m.id, value: store.deleteCrawl(m.crawlId) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `deleteCrawl(${m.crawlId}) failed: ${errorText(e)}` });
        }
        return;
      case 'updateCrawl':
        try {
          store.updateCrawl(m.crawlId, m.patch);
        } catch (e) {
          const message = `updateCrawl(${m.crawlId}) failed: ${errorText(e)}`;
          unreported ??= message;
          post(port, { type: 'error', message });
        }
        return;
      case 'resumeFrontier':
        try {
          post(port, { type: 'reply', id: m.id, value: store.frontier.prepareResume(m.crawlId) });
        } catch (e) {
          post(port, { type: 'reply', id: m.id, error: `resumeFrontier(${m.crawlId}) failed: ${errorText(e)}` });
        }
        return;
      case 'flush':
        try {
          store.writeAggregates();
        } catch (e) {
          unreported ??= `history aggregates not saved: ${errorText(e)}`;
        }
        post(port, { type: 'reply', id: m.id, error: unreported });
        unreported = undefined;
        return;
      case 'setRetention':
      case 'prune':
        retentionMessage(port, db, pruner, m);
        return;
      case 'close':
        closed = true;
        clearInterval(pruner.timer);
        let error = unreported;
        try {
          store.checkpointAndClose();
        } catch (e) {
          error = `closing the history database failed: ${errorText(e)}`;
        }
        // Released before the reply, so whoever waits on close() can open the file again at once.
        lock?.release();
        post(port, { type: 'reply', id: m.id, error });
        port.close();
        return;
      default:
        post(port, { type: 'error', message: `history worker: unknown message ${JSON.stringify((m as { type?: unknown }).type)}` });
    }
  });
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
