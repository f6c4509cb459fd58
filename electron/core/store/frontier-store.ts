// The SQL of crash-safe resume: the history worker writes frontier ops and slot states in each
// batch's transaction; a resumed crawl reads its frontier, slot states and totals back from here.

import type { Database, Statement } from 'better-sqlite3';
import type { SavedCrawl, SavedRequest, SavedSlot, SlotSnapshot, SlotTotals } from '../saved-crawl';
import { openDatabase } from './database';
import { MultiRow, valuesList } from './multi-row';
import {
  F_CRAWL, F_DEPTH, F_OP, F_PRIORITY, F_REDIRECTS, F_RETRIES, F_SEQ, FRONTIER_STRIDE, OP_DONE, OP_QUEUED, OP_REQUEUED,
  OP_STARTED, type FrontierBatch, type ResumeFrontierResult,
} from './history-protocol';

/** Frontier row states (migration 0002). */
export const STATE_QUEUED = 0;
export const STATE_IN_FLIGHT = 1;
export const STATE_DONE = 2;
export const STATE_GIVEN_UP = 3;

/** An URL in flight at this many interrupted runs is given up instead of fetched again. */
export const MAX_CRASHES = 2;

/** Parameters of a frontier row. */
const INSERT_COLUMNS = 9;

/** Worker side: applies a batch's frontier ops and slot states inside the batch transaction. */
export class FrontierWriter {
  /** State UPDATEs of a batch, as runs (emptied by each write). */
  private readonly states = new StateUpdates();
  /** Each row's last state op in the batch being applied. */
  private readonly last = new LastOps();
  /** Queued rows, many to an INSERT (a seed list's rows cost about a third less than one by one). */
  private readonly inserts: MultiRow;
  private readonly setState: Statement;
  private readonly setStateRange: Statement;
  private readonly requeue: Statement;
  private readonly slotState: Statement;

  constructor(
    private readonly db: Database,
    /** The worker's slot-id lookup (creates the slot row when new). */
    private readonly slotId: (crawlId: number, key: string) => number,
  ) {
    // Never fails on a known seq (a failing statement would roll back the responses of its batch):
    // a seq queued again (a resumed crawl) takes the new state, priority and retries.
    this.inserts = new MultiRow(db, (rows) =>
      `INSERT INTO frontier (crawl_id, seq, url, state, depth, priority, redirects, retries, meta_json)
       VALUES ${valuesList(INSERT_COLUMNS, rows)}
       ON CONFLICT (crawl_id, seq) DO UPDATE SET state = excluded.state, priority = excluded.priority, retries = excluded.retries`, INSERT_COLUMNS);
    this.setState = db.prepare(`UPDATE frontier SET state = ? WHERE crawl_id = ? AND seq = ?`);
    this.setStateRange = db.prepare(`UPDATE frontier SET state = ? WHERE crawl_id = ? AND seq BETWEEN ? AND ?`);
    this.requeue = db.prepare(`UPDATE frontier SET state = 0, priority = ?, retries = ? WHERE crawl_id = ? AND seq = ?`);
    this.slotState = db.prepare(`UPDATE slots SET state_json = ?, state_t = ? WHERE id = ?`);
  }

  /**
   * Applies the ops in order, folded per row: only the last state op of a row in this batch is
   * written, and a row queued in this batch is inserted with that state at once (the common
   * queued → started → done of a fast page is one INSERT; started → done is one UPDATE). The
   * state UPDATEs never touch a row inserted by the same batch (its state went into the INSERT):
   * they go out after the INSERTs, as one UPDATE per run of consecutive seqs given the same state (the
   * pages of a batch finish in about their acceptance order, so a batch's thousands of rows are a
   * few runs: one statement each instead of one per row).
   */
  apply(b: FrontierBatch): void {
    // A batch refused midway (a data error) may have left rows and updates waiting: they were rolled back.
    this.inserts.reset();
    const { n } = b;
    this.states.clear();
    const last = this.last;
    const stateOps = last.index(b);
    // Three parts, each its own function: a seed list's batches hold queued ops only, and the JIT
    // then compiles insertQueued alone, instead of compiling one function that holds all three and
    // throwing it away (a deoptimisation) at the first batch that brings the others.
    if (stateOps < n) this.insertQueued(b, last);
    if (stateOps > 0) this.applyStates(b, last);
    if (b.slotStates.length > 0) this.writeSlotStates(b.slotStates);
  }

  /** The batch's queued ops as rows, each with the state of its last op in the batch (taken out of `last`). */
  private insertQueued(b: FrontierBatch, last: LastOps): void {
    const { nums, strs, n } = b;
    const rows = this.inserts;
    let s = 0;
    for (let i = 0; i < n; i++) {
      const o = i * FRONTIER_STRIDE;
      if (nums[o + F_OP] !== OP_QUEUED) continue;
      const crawlId = nums[o + F_CRAWL];
      const seq = nums[o + F_SEQ];
      let state = STATE_QUEUED;
      let p = o;
      if (last.ops > 0) {
        const j = last.get(crawlId, seq);
        if (j > i) {
          last.forget(crawlId, seq); // folded into this INSERT
          const jo = j * FRONTIER_STRIDE;
          const jop = nums[jo + F_OP];
          state = jop === OP_DONE ? STATE_DONE : jop === OP_STARTED ? STATE_IN_FLIGHT : STATE_QUEUED;
          if (jop === OP_REQUEUED) p = jo;
        }
      }
      const r = rows.args;
      const c = rows.at();
      r[c] = crawlId;
      r[c + 1] = seq;
      r[c + 2] = strs[s];
      r[c + 3] = state;
      r[c + 4] = nums[o + F_DEPTH];
      r[c + 5] = nums[p + F_PRIORITY];
      r[c + 6] = nums[o + F_REDIRECTS];
      r[c + 7] = nums[p + F_RETRIES];
      r[c + 8] = strs[s + 1];
      rows.added();
      s += 2;
    }
    rows.finish();
  }

  /** The state ops of rows not queued in this batch: each row's last one, UPDATEs as runs of consecutive seqs. */
  private applyStates(b: FrontierBatch, last: LastOps): void {
    const { nums, n } = b;
    const states = this.states;
    for (let i = 0; i < n; i++) {
      const o = i * FRONTIER_STRIDE;
      const op = nums[o + F_OP];
      if (op === OP_QUEUED) continue;
      const crawlId = nums[o + F_CRAWL];
      const seq = nums[o + F_SEQ];
      if (last.get(crawlId, seq) !== i) continue; // a later op of this batch decides the row's state, or its INSERT took it
      if (op === OP_REQUEUED) this.requeue.run(nums[o + F_PRIORITY], nums[o + F_RETRIES], crawlId, seq);
      else states.add(crawlId, seq, op === OP_DONE ? STATE_DONE : STATE_IN_FLIGHT);
    }
    states.write(this.setState, this.setStateRange);
  }

  private writeSlotStates(slotStates: FrontierBatch['slotStates']): void {
    for (const [crawlId, t, slot, json] of slotStates) this.slotState.run(json, t, this.slotId(crawlId, slot));
  }

  /** Crash accounting before a resume (one transaction): see the `resumeFrontier` message. */
  prepareResume(crawlId: number): ResumeFrontierResult {
    return this.db.transaction((): ResumeFrontierResult => {
      this.db.prepare(`UPDATE frontier SET crashes = crashes + 1 WHERE crawl_id = ? AND state = ${STATE_IN_FLIGHT}`).run(crawlId);
      const givenUp = this.db
        .prepare(`SELECT url FROM frontier WHERE crawl_id = ? AND state = ${STATE_IN_FLIGHT} AND crashes >= ${MAX_CRASHES} ORDER BY seq`)
        .pluck()
        .all(crawlId) as string[];
      this.db.prepare(`UPDATE frontier SET state = ${STATE_GIVEN_UP} WHERE crawl_id = ? AND state = ${STATE_IN_FLIGHT} AND crashes >= ${MAX_CRASHES}`).run(crawlId);
      const requeued = this.db.prepare(`UPDATE frontier SET state = ${STATE_QUEUED} WHERE crawl_id = ? AND state = ${STATE_IN_FLIGHT}`).run(crawlId).changes;
      return { requeued, givenUp };
    }).immediate();
  }
}

/**
 * State UPDATEs of distinct rows, kept to be written as runs of consecutive seqs (see
 * FrontierWriter.apply). In typed arrays: the crawl ids and seqs come from a Float64Array, and in
 * plain arrays the first of them changed the arrays' elements kind (their map), which deoptimized
 * the worker's apply() mid-crawl (--trace-deopt: 'wrong map').
 */
class StateUpdates {
  private crawls = new Float64Array(256);
  private seqs = new Float64Array(256);
  private states = new Float64Array(256);
  private n = 0;
  /** The seqs of one group, gathered by write. */
  private scratch = new Float64Array(256);

  add(crawlId: number, seq: number, state: number): void {
    if (this.n === this.seqs.length) this.grow();
    this.crawls[this.n] = crawlId;
    this.seqs[this.n] = seq;
    this.states[this.n] = state;
    this.n++;
  }

  /** Forgets what was added (a batch refused midway: its transaction rolled back). */
  clear(): void {
    this.n = 0;
  }

  /**
   * Writes what was added and empties it: per crawl and state, the seqs in ascending order, one
   * statement per run of consecutive ones (each row is in it once, so the order of the statements
   * does not matter). A batch holds a few such groups (started and done, of each crawl recording):
   * each group's seqs are gathered and, only when they are out of order, sorted by the typed
   * array's own numeric sort.
   */
  write(one: Statement, range: Statement): void {
    const { crawls, states, n } = this;
    if (n === 0) return;
    // [crawl, state, crawl, state, …] in the order first met.
    const groups: number[] = [];
    for (let i = 0; i < n; i++) {
      let g = 0;
      while (g < groups.length && (groups[g] !== crawls[i] || groups[g + 1] !== states[i])) g += 2;
      if (g === groups.length) groups.push(crawls[i], states[i]);
    }
    for (let g = 0; g < groups.length; g += 2) this.writeGroup(one, range, groups[g], groups[g + 1]);
    this.n = 0;
  }

  /** One crawl's rows given one state, as runs of consecutive seqs. */
  private writeGroup(one: Statement, range: Statement, crawlId: number, state: number): void {
    const { crawls, seqs, states, n } = this;
    if (this.scratch.length < n) this.scratch = new Float64Array(this.seqs.length);
    const scratch = this.scratch;
    let m = 0;
    let ordered = true;
    for (let i = 0; i < n; i++) {
      if (crawls[i] !== crawlId || states[i] !== state) continue;
      if (m > 0 && seqs[i] < scratch[m - 1]) ordered = false;
      scratch[m++] = seqs[i];
    }
    const sorted = ordered ? scratch : scratch.subarray(0, m).sort();
    for (let r = 0; r < m;) {
      let end = r + 1;
      while (end < m && sorted[end] === sorted[end - 1] + 1) end++;
      if (end - r === 1) one.run(state, crawlId, sorted[r]);
      else range.run(state, crawlId, sorted[r], sorted[end - 1]);
      r = end;
    }
  }

  private grow(): void {
    const size = this.seqs.length * 2;
    const more = (a: Float64Array): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.crawls = more(this.crawls);
    this.seqs = more(this.seqs);
    this.states = more(this.states);
  }
}

/** A (crawl, seq) pair as one number (seq < 2^32 per crawl). */
function key(crawlId: number, seq: number): number {
  return crawlId * 4294967296 + seq;
}

/**
 * The index in a batch of each row's last state op (started, requeued, done), by crawl and seq. A
 * batch's ops are of one crawl and of seqs close together (the pages in flight in one flush): they
 * are then indexed in an array by seq, reused from batch to batch, with no hashing and no number
 * boxed per op; other batches (several crawls, seqs far apart) use a Map.
 */
class LastOps {
  /** State ops in the batch. */
  ops = 0;
  private crawl = NaN;
  private base = 0;
  private span = 0;
  private byOffset = new Int32Array(1024);
  private map: Map<number, number> | null = null;

  /** Indexes a batch's state ops (a later op of a row replaces an earlier one) and returns how many there are. */
  index(b: FrontierBatch): number {
    const { nums, n } = b;
    let ops = 0;
    let crawl = NaN;
    let oneCrawl = true;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      const o = i * FRONTIER_STRIDE;
      if (nums[o + F_OP] === OP_QUEUED) continue;
      const seq = nums[o + F_SEQ];
      if (ops++ === 0) crawl = nums[o + F_CRAWL];
      else if (nums[o + F_CRAWL] !== crawl) oneCrawl = false;
      if (!Number.isInteger(seq)) oneCrawl = false;
      if (seq < lo) lo = seq;
      if (seq > hi) hi = seq;
    }
    this.ops = ops;
    this.map = null;
    this.span = 0;
    this.crawl = crawl;
    if (ops === 0) return 0;
    const span = hi - lo + 1;
    if (oneCrawl && span <= Math.max(4096, 8 * ops)) {
      if (this.byOffset.length < span) this.byOffset = new Int32Array(2 ** Math.ceil(Math.log2(span)));
      const at = this.byOffset;
      at.fill(-1, 0, span);
      this.base = lo;
      this.span = span;
      for (let i = 0; i < n; i++) {
        const o = i * FRONTIER_STRIDE;
        if (nums[o + F_OP] !== OP_QUEUED) at[nums[o + F_SEQ] - lo] = i;
      }
    } else {
      const map = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const o = i * FRONTIER_STRIDE;
        if (nums[o + F_OP] !== OP_QUEUED) map.set(key(nums[o + F_CRAWL], nums[o + F_SEQ]), i);
      }
      this.map = map;
    }
    return ops;
  }

  /** The index of the row's last state op in the batch, or -1. */
  get(crawlId: number, seq: number): number {
    if (this.map !== null) return this.map.get(key(crawlId, seq)) ?? -1;
    const j = this.offset(crawlId, seq);
    return j < 0 ? -1 : this.byOffset[j];
  }

  /** The row's state went into its INSERT: no UPDATE for it. */
  forget(crawlId: number, seq: number): void {
    if (this.map !== null) this.map.delete(key(crawlId, seq));
    else {
      const j = this.offset(crawlId, seq);
      if (j >= 0) this.byOffset[j] = -1;
    }
  }

  /** The row's place in byOffset, or -1 when this batch indexed no op of it. */
  private offset(crawlId: number, seq: number): number {
    const j = seq - this.base;
    return crawlId === this.crawl && j >= 0 && j < this.span ? j : -1;
  }
}

/** Marks every crawl left 'running' as 'interrupted'; returns their ids. Call with the writer lock held. */
export function markInterrupted(db: Database): number[] {
  return db.transaction(() => {
    const ids = db.prepare(`SELECT id FROM crawls WHERE status = 'running' ORDER BY id`).pluck().all() as number[];
    db.prepare(`UPDATE crawls SET status = 'interrupted' WHERE status = 'running'`).run();
    return ids;
  }).immediate();
}

/** Whether the crawl has a saved frontier (crawls recorded before migration 0002 have none). */
export function hasFrontier(db: Database, crawlId: number): boolean {
  return db.prepare(`SELECT 1 FROM frontier WHERE crawl_id = ? LIMIT 1`).get(crawlId) !== undefined;
}

/**
 * Reads what a resumed crawl needs from `file` (read-only; run `resumeFrontier` on the writer
 * first). `givenUp` and `wasInFlight` come from that reply.
 */
export function loadSavedCrawl(file: string, crawlId: number, accounting: ResumeFrontierResult): SavedCrawl {
  const db = openDatabase(file, { readonly: true });
  try {
    const crawl = db.prepare(`SELECT started_at FROM crawls WHERE id = ?`).get(crawlId) as { started_at: number | null } | undefined;
    if (!crawl) throw new Error(`crawl ${crawlId} does not exist in ${file}`);
    const seen: string[] = [];
    const pending: SavedRequest[] = [];
    let accepted = 0;
    let nextSeq = 0;
    const rows = db
      .prepare(`SELECT seq, url, state, depth, priority, redirects, retries, meta_json FROM frontier WHERE crawl_id = ? ORDER BY seq`)
      .raw()
      .iterate(crawlId) as IterableIterator<[number, string, number, number, number, number, number, string | null]>;
    for (const [seq, url, state, depth, priority, redirects, retries, metaJson] of rows) {
      seen.push(url);
      if (redirects === 0) accepted++;
      if (seq >= nextSeq) nextSeq = seq + 1;
      if (state === STATE_QUEUED) {
        pending.push({ seq, url, depth, priority, redirects, retries, meta: metaJson === null ? {} : (JSON.parse(metaJson) as Record<string, unknown>) });
      }
    }

    const slots: SavedSlot[] = [];
    const slotRows = db
      .prepare(
        `SELECT s.key, s.state_json, st.requests, st.responses, st.failures, st.bytes, st.s2xx, st.s3xx, st.s4xx, st.s5xx, st.s429,
           st.latency_sum, st.latency_n, st.last_latency
         FROM slots s LEFT JOIN slot_stats st ON st.crawl_id = s.crawl_id AND st.slot_id = s.id
         WHERE s.crawl_id = ? ORDER BY s.key`,
      )
      .raw()
      .all(crawlId) as unknown[][];
    for (const r of slotRows) {
      let state: SlotSnapshot | null = null;
      if (typeof r[1] === 'string') {
        try {
          state = JSON.parse(r[1]) as SlotSnapshot;
        } catch {
          state = null; // a damaged snapshot: the slot restarts from the settings
        }
      }
      const totals: SlotTotals | null = r[2] === null ? null : {
        requests: r[2] as number, responses: r[3] as number, failures: r[4] as number, bytes: r[5] as number,
        s2xx: r[6] as number, s3xx: r[7] as number, s4xx: r[8] as number, s5xx: r[9] as number, s429: r[10] as number,
        latencySum: r[11] as number, latencyN: r[12] as number, lastLatency: r[13] as number | null,
      };
      if (state || totals) slots.push({ key: r[0] as string, state, totals });
    }

    const t = db
      .prepare(`SELECT coalesce(sum(requests), 0), coalesce(sum(responses), 0), coalesce(sum(failures), 0), coalesce(sum(bytes), 0)
                FROM slot_stats WHERE crawl_id = ?`)
      .raw()
      .get(crawlId) as [number, number, number, number];
    const byStatus: Record<string, number> = {};
    for (const [status, n] of db.prepare(`SELECT status, n FROM status_counts WHERE crawl_id = ?`).raw().all(crawlId) as [number, number][]) {
      byStatus[String(status)] = n;
    }
    return {
      seen,
      pending,
      givenUp: accounting.givenUp,
      wasInFlight: accounting.requeued + accounting.givenUp.length,
      accepted,
      nextSeq,
      slots,
      totals: { requests: t[0], responses: t[1], failures: t[2], bytes: t[3], byStatus },
      startedAt: crawl.started_at,
    };
  } finally {
    db.close();
  }
}
