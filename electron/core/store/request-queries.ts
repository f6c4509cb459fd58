// The Requests tab's reads (issue 16): a crawl's responses in (t, id) order, paged by keyset and
// filtered through whichever index covers the filter, so a crawl of millions of rows pages in
// milliseconds; filters no index covers read a bounded number of rows per call and say where to go on.

import type { Database, Statement } from 'better-sqlite3';
import type { QueuedRequest, RequestClass, RequestCursor, RequestFilter, RequestOrder, RequestPage, RequestRow } from '../../../shared/contract';
import { timed } from './database';
import { RESPONSE_COLUMNS, toResponse } from './response-row';

/** What 'requests.page' asks of the store, checked by dispatch. */
export interface RequestQuery {
  readonly order: RequestOrder;
  readonly filter: RequestFilter;
  readonly after?: RequestCursor;
  readonly offset?: number;
  readonly until?: RequestCursor;
  readonly limit: number;
  readonly count: boolean;
}

/** Rows an uncovered filter reads per statement, and the time one call may spend reading them. */
const SCAN_BUDGET_ROWS = 25_000;
const SCAN_BUDGET_MS = 60;

/** 0005's partial index condition, word for word (SQLite uses the index only when the query repeats it). */
const ODD = '(status IS NULL OR status >= 300)';

const COLUMNS = `r.id, ${RESPONSE_COLUMNS}, r.attempt`;

type Row = unknown[];

function toRow(r: Row): RequestRow {
  return { id: r[0] as number, ...toResponse(r.slice(1)), attempt: r[21] as number };
}

/** The statuses of a class as a half-open range [lo, hi), or null for `failed` (no status). */
function classRange(c: RequestClass): [number, number] | null {
  switch (c) {
    case '2xx': return [200, 300];
    case '3xx': return [300, 400];
    case '4xx': return [400, 500];
    case '429': return [429, 430];
    case '5xx': return [500, 600];
    case 'failed': return null;
  }
}

/**
 * How a filter is read: the index scanned (its conditions and their values) and what is left to
 * check row by row. `residual` empty means the index answers the filter alone: pages can start at
 * any offset and a count reads the index only.
 */
interface Plan {
  readonly index: 'responses_crawl_t' | 'responses_crawl_slot_t' | 'responses_odd';
  readonly scan: string;
  readonly scanArgs: readonly unknown[];
  readonly residual: string;
  readonly residualArgs: readonly unknown[];
  /** The scan reads an index range that is not in time order (a status range): SQLite sorts it. */
  readonly sorted: boolean;
}

const classCondition = (c: RequestClass, col: string): { sql: string; args: unknown[] } => {
  const r = classRange(c);
  if (r === null) return { sql: `${col} IS NULL`, args: [] };
  if (r[1] - r[0] === 1) return { sql: `${col} = ?`, args: [r[0]] };
  return { sql: `${col} >= ? AND ${col} < ?`, args: r };
};

export interface RequestReader {
  page(crawlId: number, q: RequestQuery): RequestPage;
  /**
   * The pending URLs of a crawl's saved frontier whose host is `slot` (a stopped, paused or
   * interrupted crawl resumes from them): the first `limit` by priority, then acceptance order.
   */
  savedQueue(crawlId: number, slot: string, limit: number): { readonly queued: number; readonly items: readonly QueuedRequest[] };
}

/** Frontier rows read at most per savedQueue call (a saved frontier may hold millions). */
const SAVED_QUEUE_SCAN = 200_000;

/** The lower-cased host of an absolute URL without brackets, as the engine keys slots by default. */
function hostOfUrl(url: string): string | null {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)/.exec(url);
  if (!m) return null;
  const h = m[1].toLowerCase();
  return h.startsWith('[') ? h.slice(1, -1) : h;
}

export function createRequestReader(db: Database): RequestReader {
  const statements = new Map<string, Statement>();
  const prepare = (sql: string, raw = true): Statement => {
    let st = statements.get(sql);
    if (!st) {
      st = raw ? db.prepare(sql).raw() : db.prepare(sql);
      statements.set(sql, st);
    }
    return st;
  };
  const slotIdOf = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();
  const headOf = db.prepare(`SELECT t, id FROM responses INDEXED BY responses_crawl_t WHERE crawl_id = ? ORDER BY t DESC, id DESC LIMIT 1`).raw();
  const slotCounts = db.prepare(`SELECT requests, s2xx, s3xx, s4xx, s5xx, s429, failures FROM slot_stats WHERE crawl_id = ? AND slot_id = ?`).raw();
  const crawlCounts = db.prepare(`SELECT coalesce(sum(requests), 0), coalesce(sum(failures), 0) FROM slot_stats WHERE crawl_id = ?`).raw();
  const statusSum = db.prepare(`SELECT coalesce(sum(n), 0) FROM status_counts WHERE crawl_id = ? AND status >= ? AND status < ?`).pluck();
  const kindCount = db.prepare(
    `SELECT count(*) FROM responses INDEXED BY responses_odd WHERE crawl_id = ? AND ${ODD} AND status IS NULL AND error_kind = ? AND (t, id) <= (?, ?)`,
  ).pluck();

  /** The plan for a filter; null when nothing can match (an unknown slot, an error kind with a status class). */
  function plan(crawlId: number, f: RequestFilter): Plan | null {
    const statusClass: RequestClass | undefined = f.errorKind !== undefined ? (f.statusClass === undefined || f.statusClass === 'failed' ? 'failed' : undefined) : f.statusClass;
    if (f.errorKind !== undefined && statusClass === undefined) return null;
    let slotId: number | undefined;
    if (f.slot !== undefined) {
      slotId = slotIdOf.get(crawlId, f.slot) as number | undefined;
      if (slotId === undefined) return null;
    }
    const residual: string[] = [];
    const residualArgs: unknown[] = [];
    let p: Omit<Plan, 'residual' | 'residualArgs'>;
    const oddClass = statusClass !== undefined && statusClass !== '2xx';
    if (slotId !== undefined) {
      p = { index: 'responses_crawl_slot_t', scan: 'crawl_id = ? AND slot_id = ?', scanArgs: [crawlId, slotId], sorted: false };
      if (statusClass !== undefined) {
        const c = classCondition(statusClass, 'r.status');
        residual.push(c.sql);
        residualArgs.push(...c.args);
      }
    } else if (oddClass) {
      const c = classCondition(statusClass, 'status');
      p = { index: 'responses_odd', scan: `crawl_id = ? AND ${ODD} AND ${c.sql}`, scanArgs: [crawlId, ...c.args], sorted: c.args.length === 2 };
    } else {
      p = { index: 'responses_crawl_t', scan: 'crawl_id = ?', scanArgs: [crawlId], sorted: false };
      if (statusClass === '2xx') {
        residual.push('r.status >= 200 AND r.status < 300');
      }
    }
    if (f.errorKind !== undefined) {
      residual.push('r.error_kind = ?');
      residualArgs.push(f.errorKind);
    }
    if (f.text !== undefined && f.text !== '') {
      residual.push('instr(r.url, ?) > 0');
      residualArgs.push(f.text);
    }
    return { ...p, residual: residual.join(' AND '), residualArgs };
  }

  /** Cursor conditions on the scanned index's t and id: after `after`, not past `until`. */
  function bounds(order: RequestOrder, after: RequestCursor | undefined, until: RequestCursor | undefined, inclusiveAfter = false) {
    const sql: string[] = [];
    const args: unknown[] = [];
    if (after) {
      sql.push(order === 'newest' ? `(t, id) ${inclusiveAfter ? '<=' : '<'} (?, ?)` : `(t, id) ${inclusiveAfter ? '>=' : '>'} (?, ?)`);
      args.push(after[0], after[1]);
    }
    if (until) {
      sql.push('(t, id) <= (?, ?)');
      args.push(until[0], until[1]);
    }
    return { sql: sql.length ? ` AND ${sql.join(' AND ')}` : '', args };
  }

  const dir = (order: RequestOrder) => (order === 'newest' ? 'DESC' : 'ASC');

  /** The cursor of the `n`-th row (0-based) the plan's index scan reads from `after`; null past the end. */
  function nth(p: Plan, order: RequestOrder, after: RequestCursor | undefined, until: RequestCursor | undefined, n: number, inclusiveAfter = false): RequestCursor | null {
    const b = bounds(order, after, until, inclusiveAfter);
    const st = prepare(`SELECT t, id FROM responses INDEXED BY ${p.index} WHERE ${p.scan}${b.sql} ORDER BY t ${dir(order)}, id ${dir(order)} LIMIT 1 OFFSET ?`);
    const r = st.get(...p.scanArgs, ...b.args, n) as [number, number] | undefined;
    return r ? [r[0], r[1]] : null;
  }

  /**
   * The cursor of the `n`-th matching row (0-based) of a plan with a residual condition: every row
   * before it is read, so this is for a jump (a scrollbar dragged), not for paging.
   */
  function nthMatching(p: Plan, order: RequestOrder, until: RequestCursor | undefined, n: number): RequestCursor | null {
    const b = bounds(order, undefined, until);
    const st = prepare(
      `SELECT r.t, r.id FROM (SELECT id AS pick FROM responses INDEXED BY ${p.index} WHERE ${p.scan}${b.sql}
         ORDER BY t ${dir(order)}, id ${dir(order)}) CROSS JOIN responses r ON r.id = pick WHERE ${p.residual}
       ORDER BY r.t ${dir(order)}, r.id ${dir(order)} LIMIT 1 OFFSET ?`,
    );
    const r = st.get(...p.scanArgs, ...b.args, ...p.residualArgs, n) as [number, number] | undefined;
    return r ? [r[0], r[1]] : null;
  }

  /** A page of a plan the index answers alone: `limit` rows from `after` (inclusive with `inclusiveAfter`). */
  function covered(p: Plan, order: RequestOrder, after: RequestCursor | undefined, until: RequestCursor | undefined, limit: number, inclusiveAfter: boolean): RequestRow[] {
    const b = bounds(order, after, until, inclusiveAfter);
    // The index picks and orders the ids (reading nothing else), then each row is read once.
    const st = prepare(
      `SELECT ${COLUMNS} FROM (SELECT id AS pick, t AS pt FROM responses INDEXED BY ${p.index} WHERE ${p.scan}${b.sql}
         ORDER BY t ${dir(order)}, id ${dir(order)} LIMIT ?) CROSS JOIN responses r ON r.id = pick JOIN slots s ON s.id = r.slot_id
       ORDER BY pt ${dir(order)}, pick ${dir(order)}`,
    );
    return (st.all(...p.scanArgs, ...b.args, limit) as Row[]).map(toRow);
  }

  /**
   * Up to `limit` rows of a plan with a residual condition, reading at most SCAN_BUDGET_ROWS index
   * entries per statement and SCAN_BUDGET_MS in all; `next` is where the reading stopped.
   */
  function scanned(
    p: Plan, order: RequestOrder, after: RequestCursor | undefined, until: RequestCursor | undefined, limit: number, inclusiveAfter = false,
  ): { rows: RequestRow[]; next: RequestCursor | null } {
    const rows: RequestRow[] = [];
    const started = performance.now();
    let from = after;
    let inclusive = inclusiveAfter;
    for (;;) {
      const b = bounds(order, from, until, inclusive);
      inclusive = false;
      const st = prepare(
        `SELECT ${COLUMNS} FROM (SELECT id AS pick FROM responses INDEXED BY ${p.index} WHERE ${p.scan}${b.sql}
           ORDER BY t ${dir(order)}, id ${dir(order)} LIMIT ?) CROSS JOIN responses r ON r.id = pick JOIN slots s ON s.id = r.slot_id
         WHERE ${p.residual} LIMIT ?`,
      );
      const got = (st.all(...p.scanArgs, ...b.args, SCAN_BUDGET_ROWS, ...p.residualArgs, limit - rows.length) as Row[]).map(toRow);
      rows.push(...got);
      if (rows.length >= limit) {
        const last = rows[rows.length - 1];
        return { rows, next: [last.t, last.id] };
      }
      // The budget ran out before the page filled: go on after the last row read, or stop at the end.
      const stop = nth(p, order, from, until, SCAN_BUDGET_ROWS - 1, inclusiveAfter && from === after);
      if (stop === null) return { rows, next: null };
      from = stop;
      if (performance.now() - started > SCAN_BUDGET_MS) return { rows, next: from };
    }
  }

  /**
   * Rows matching a filter up to `until` (the newest row, read in the same snapshot): from the running
   * totals (kept in the same transaction as the rows), by an index for an error kind, null for a URL text.
   * Retention may prune raw rows the totals still count: a list then finds its end early.
   */
  function total(crawlId: number, f: RequestFilter, until: RequestCursor | null): number | null {
    if (until === null) return 0;
    if (f.text) return null;
    if (f.errorKind !== undefined) {
      if (f.statusClass !== undefined && f.statusClass !== 'failed') return 0;
      if (f.slot === undefined) return kindCount.get(crawlId, f.errorKind, until[0], until[1]) as number;
      return null;
    }
    if (f.slot !== undefined) {
      const id = slotIdOf.get(crawlId, f.slot) as number | undefined;
      const c = id === undefined ? undefined : (slotCounts.get(crawlId, id) as number[] | undefined);
      if (!c) return 0;
      const [requests, s2, s3, s4, s5, s429, failures] = c;
      switch (f.statusClass) {
        case undefined: return requests;
        case '2xx': return s2;
        case '3xx': return s3;
        case '4xx': return s4;
        case '429': return s429;
        case '5xx': return s5;
        case 'failed': return failures;
      }
    }
    const [requests, failures] = crawlCounts.get(crawlId) as [number, number];
    if (f.statusClass === undefined) return requests;
    if (f.statusClass === 'failed') return failures;
    const r = classRange(f.statusClass)!;
    return statusSum.get(crawlId, r[0], r[1]) as number;
  }

  function page(crawlId: number, q: RequestQuery): RequestPage {
    const p = plan(crawlId, q.filter);
    // Seekable when the number of matching rows is known without reading them (so a list can be sized and jumped in).
    const seekable = p !== null && !q.filter.text && !(q.filter.errorKind !== undefined && q.filter.slot !== undefined);
    const covers = p !== null && p.residual === '';
    // A count re-anchors: page and total are read up to the newest row, in one snapshot.
    const read = (): RequestPage => {
      const head = q.count ? ((headOf.get(crawlId) as [number, number] | undefined) ?? null) : undefined;
      const until = q.count ? head ?? undefined : q.until;
      if (p === null || (q.count && head === null)) return { rows: [], next: null, seekable, ...(q.count ? { total: 0, head: head ?? null } : {}) };
      let rows: RequestRow[];
      let next: RequestCursor | null;
      let from = q.after;
      let inclusive = false;
      if (q.offset !== undefined && q.offset > 0) {
        if (!seekable) throw new Error('offset: this filter cannot be paged by offset (page with `after` instead)');
        from = (covers ? nth(p, q.order, q.after, until, q.offset) : nthMatching(p, q.order, until, q.offset)) ?? undefined;
        inclusive = true;
        if (from === undefined) return { rows: [], next: null, seekable, ...(q.count ? { total: total(crawlId, q.filter, head!), head } : {}) };
      }
      if (covers) {
        rows = covered(p, q.order, from, until, q.limit + 1, inclusive);
        const more = rows.length > q.limit;
        if (more) rows = rows.slice(0, q.limit);
        const last = rows[rows.length - 1];
        next = more && last ? [last.t, last.id] : null;
      } else {
        ({ rows, next } = scanned(p, q.order, from, until, q.limit, inclusive));
      }
      return { rows, next, seekable, ...(q.count ? { total: total(crawlId, q.filter, head!), head } : {}) };
    };
    return timed('requestPage', () => (q.count ? db.transaction(read)() : read()));
  }

  // State 0 queued, 1 in flight when the run ended (queued again on resume).
  const pending = db.prepare(`SELECT url, depth, retries, priority FROM frontier WHERE crawl_id = ? AND state IN (0, 1) ORDER BY seq LIMIT ?`).raw();

  function savedQueue(crawlId: number, slot: string, limit: number) {
    return timed('savedQueue', () => {
      const want = slot.toLowerCase();
      const found: (QueuedRequest & { seq: number })[] = [];
      let seq = 0;
      for (const [url, depth, retries, priority] of pending.iterate(crawlId, SAVED_QUEUE_SCAN) as IterableIterator<[string, number, number, number]>) {
        seq++;
        if (hostOfUrl(url) === want) found.push({ url, depth, retries, priority, queuedAt: null, seq });
      }
      found.sort((a, b) => b.priority - a.priority || a.seq - b.seq);
      return { queued: found.length, items: found.slice(0, limit).map(({ seq: _, ...q }) => q) };
    });
  }

  return { page, savedQueue };
}
