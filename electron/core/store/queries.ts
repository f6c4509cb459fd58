// The read side of the history database: a separate read-only connection and prepared statements
// for crawl lists, summaries, per-slot figures, raw samples, changes, events and chart series.
import type { Statement } from 'better-sqlite3';
import type {
  ChangeName, ChangeRecord, ChangeSource, CrawlStatus, CrawlSummary, DelayCause, EventKind, EventRecord, FailureKind, ResponseRecord,
} from '../../../shared/types';
import { openDatabase, timed } from './database';
import type { HistoryPoint, QueuedRequest, RequestPage, RetentionSettings, ScatterPoint, ScrapyStats } from '../../../shared/contract';
import { createRequestReader, type RequestQuery } from './request-queries';
import { RESPONSE_COLUMNS, toResponse } from './response-row';
import { createScrapyStatsReader } from './scrapy-stats';
import { LEVELS, registerSeriesFunctions } from './aggregates';
import { readRetention } from './retention';

/** One row of the crawl list. Times are epoch milliseconds. */
export interface CrawlInfo {
  readonly id: number;
  readonly name: string;
  readonly status: CrawlStatus;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

/** A crawl with its stored configuration, current settings and final summary (null until set). */
export interface CrawlDetail extends CrawlInfo {
  readonly config: unknown;
  readonly settings: unknown;
  readonly summary: unknown;
  /** The crawl a what-if replay was derived from (null for a recorded crawl). */
  readonly derivedFrom: number | null;
  /** What a what-if replay was run with ({ settings, slot? }); null for a recorded crawl. */
  readonly derived: unknown;
  /** Where a shared crawl (issue 18) lives in Redis; null for a crawl of one process. */
  readonly shared: SharedMark | null;
}

/** A shared crawl's place in Redis, kept in its row from the moment it opens there. */
export interface SharedMark {
  /** Its id in Redis (keys ss:c:{sid}:…). */
  readonly sid: string;
  /** The Redis URL it was opened in, without its password. */
  readonly redis: string;
}

/** Figures of one slot over the whole crawl. s4xx includes 429; s429 counts 429 alone. */
export interface SlotSummary {
  readonly slot: string;
  readonly requests: number;
  /** Rows with an HTTP status. */
  readonly responses: number;
  readonly s2xx: number;
  readonly s3xx: number;
  readonly s4xx: number;
  readonly s5xx: number;
  readonly s429: number;
  /** Rows with an error kind. */
  readonly failures: number;
  /** Seconds; null when no row had a latency. */
  readonly avgLatency: number | null;
  /** Latency of the latest row that had one. */
  readonly lastLatency: number | null;
  /** delay_after of the latest row (seconds). */
  readonly lastDelay: number;
  /** Time of the latest row (epoch ms). */
  readonly lastT: number;
  readonly bytes: number;
  /** What bound the delay, and the backoff level, at the latest row (null in a database that had no row when migrated to schema 4). */
  readonly lastCause: DelayCause | null;
  readonly lastBackoffLevel: number | null;
}

/** One bucket of a chart series (declared once, in the contract). */
export type SeriesPoint = HistoryPoint;

/** Filters of the time-ordered queries: `from` inclusive, `to` exclusive (epoch ms). */
export interface TimeRange {
  readonly from?: number;
  readonly to?: number;
  readonly limit?: number;
}

export interface ResponseQuery extends TimeRange {
  /** Only this slot's rows. */
  readonly slot?: string;
}

export interface ChangeQuery extends TimeRange {
  /** A slot key for that slot's changes, null for setting changes only (no slot). */
  readonly slot?: string | null;
}

export interface EventQuery extends ChangeQuery {
  readonly kind?: EventKind;
  /** With `limit`: the latest `limit` events (still returned oldest first), not the first. */
  readonly latest?: boolean;
}

/** A downsampled history: at most maxPoints points over [from, to) (default: the whole series). */
export interface HistoryQuery {
  /** One slot instead of the whole crawl. */
  readonly slot?: string;
  readonly from?: number;
  readonly to?: number;
  /** At most this many points (default DEFAULT_MAX_POINTS). */
  readonly maxPoints?: number;
  /** The finest bucket wanted (default 'second'). */
  readonly resolution?: 'second' | 'minute';
}

/** A slot's latency scatter over [from, to) (default: all of it), at most maxPoints points. */
export interface ScatterQuery {
  readonly slot: string;
  readonly from?: number;
  readonly to?: number;
  readonly maxPoints?: number;
}

/** A response with its row id, for keyset paging (what-if replay). */
export interface NumberedResponse extends ResponseRecord {
  readonly id: number;
}

/** Default of HistoryQuery/ScatterQuery maxPoints. */
export const DEFAULT_MAX_POINTS = 2000;

export interface SeriesQuery {
  readonly resolution: 'second' | 'minute';
  /** One slot instead of the whole crawl. */
  readonly slot?: string;
  /** Buckets starting in [from, to). */
  readonly from?: number;
  readonly to?: number;
}

export interface HistoryReader {
  /** Every crawl, oldest first. */
  listCrawls(): CrawlInfo[];
  getCrawl(id: number): CrawlDetail | undefined;
  /** The crawl's final figures, computed from the running totals. Throws for an unknown crawl. */
  crawlSummary(id: number): CrawlSummary;
  /** One entry per slot that has responses, ordered by slot key. */
  slotSummaries(crawlId: number): SlotSummary[];
  /** Responses ordered by time. */
  responses(crawlId: number, query?: ResponseQuery): ResponseRecord[];
  /** Like responses() but streaming, for exports; the reader runs no other query until it is done. */
  eachResponse(crawlId: number, query?: ResponseQuery): IterableIterator<ResponseRecord>;
  /** Changes ordered by time; old/new values come back as recorded (undefined stays undefined). */
  changes(crawlId: number, query?: ChangeQuery): ChangeRecord[];
  /** Events ordered by time; `data` is absent when none was recorded. */
  events(crawlId: number, query?: EventQuery): EventRecord[];
  /** A chart series: every stored bucket of one resolution in the range (no downsampling). */
  series(crawlId: number, query: SeriesQuery): SeriesPoint[];
  /**
   * A downsampled chart series: buckets of the finest stored level that keeps the range under
   * maxPoints points, merged in SQL into round spans (2 s, 5 s, 10 s, … 1 min, … 1 h, … days).
   */
  history(crawlId: number, query?: HistoryQuery): SeriesPoint[];
  /**
   * A slot's latency scatter: every response when they fit in maxPoints, else per time bucket the
   * slowest, the fastest and the worst-status response (from raw rows, or from the buckets'
   * exemplars when a bucket spans a second or more). Ordered by time.
   */
  scatter(crawlId: number, query: ScatterQuery): ScatterPoint[];
  /** Responses after (t, id) in (t, id) order, with their row ids (one slot's with `slot`). */
  responsePage(crawlId: number, after: readonly [number, number], limit: number, slot?: string): NumberedResponse[];
  /** The database's retention settings. */
  retention(): RetentionSettings;
  /** A page of the Requests tab (store/request-queries.ts). */
  requestPage(crawlId: number, query: RequestQuery): RequestPage;
  /** The pending URLs of a saved frontier whose host is `slot` (store/request-queries.ts). */
  savedQueue(crawlId: number, slot: string, limit: number): { readonly queued: number; readonly items: readonly QueuedRequest[] };
  /** The crawl's figures under Scrapy's stats names (store/scrapy-stats.ts); `now` ends a crawl still going. */
  scrapyStats(crawlId: number, now: number): ScrapyStats;
  /** Whether the crawl has a response of `url` started at `startedAt` (a shared crawl's recorder, after a kill). */
  hasResponse(crawlId: number, url: string, startedAt: number): boolean;
  close(): void;
}

type Row = unknown[];

const SERIES_COLUMNS = `bucket, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
  CASE WHEN latency_n > 0 THEN latency_sum / latency_n END, latency_max,
  CASE WHEN requests > 0 THEN delay_sum / requests ELSE 0 END, bytes,
  latency_min, latency_p95, delay_last, CASE WHEN requests > 0 THEN in_flight_sum / requests ELSE 0 END, in_flight_max`;

/** The same columns over a group of buckets (GROUP BY the first one). */
const MERGED_COLUMNS = `sum(requests), sum(responses), sum(s2xx), sum(s3xx), sum(s4xx), sum(s5xx), sum(s429), sum(failures),
  CASE WHEN sum(latency_n) > 0 THEN total(latency_sum) / sum(latency_n) END, max(latency_max),
  CASE WHEN sum(requests) > 0 THEN total(delay_sum) / sum(requests) ELSE 0 END, sum(bytes),
  min(latency_min), slotscope_p95(latency_hist, latency_min, latency_max), slotscope_last(delay_last_t, delay_last),
  CASE WHEN sum(requests) > 0 THEN total(in_flight_sum) / sum(requests) ELSE 0 END, max(in_flight_max)`;

/**
 * Round spans a downsampled point may cover (ms); beyond the last, whole days. Each is a small
 * multiple (at most 6, 12 for half a day) of a stored level, so a point merges few buckets.
 */
const SPANS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500,
  1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 1_800_000,
  3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

/** Points [from, to) splits into with buckets of `span` aligned to multiples of it. */
function groupsOf(from: number, to: number, span: number): number {
  return Math.ceil((to - Math.floor(from / span) * span) / span);
}

/** The smallest round span >= minSpan that splits [from, to) into at most maxPoints aligned groups. */
export function chooseSpan(from: number, to: number, maxPoints: number, minSpan: number): number {
  for (const span of SPANS) if (span >= minSpan && groupsOf(from, to, span) <= maxPoints) return span;
  let days = Math.max(1, Math.ceil((to - from) / 86_400_000 / maxPoints));
  while (groupsOf(from, to, days * 86_400_000) > maxPoints) days++;
  return days * 86_400_000;
}

/** The coarsest stored level (1 s, 10 s, 1 min, 10 min, 1 h) that divides `span` (0 when none: under a second). */
function levelFor(span: number): number {
  for (let i = LEVELS.length - 1; i >= 0; i--) if (span % LEVELS[i] === 0) return LEVELS[i];
  return 0;
}


function fromJson(v: unknown): unknown {
  return v === null ? undefined : JSON.parse(v as string);
}

function toChange(r: Row): ChangeRecord {
  return {
    t: r[0] as number,
    slot: r[1] as string | null,
    setting: r[2] as ChangeName, // written only by the engine, the import and the what-if, all typed
    source: r[3] as ChangeSource,
    oldValue: fromJson(r[4]),
    newValue: fromJson(r[5]),
  };
}

function toEvent(r: Row): EventRecord {
  const e = { t: r[0] as number, slot: r[1] as string | null, kind: r[2] as EventKind, code: r[3] as string, text: r[4] as string };
  return r[5] === null ? e : { ...e, data: JSON.parse(r[5] as string) };
}

/** Columns 1–8 of series and slot-summary rows: requests, responses, status classes, failures. */
function counts(r: Row) {
  return {
    requests: r[1] as number,
    responses: r[2] as number,
    s2xx: r[3] as number,
    s3xx: r[4] as number,
    s4xx: r[5] as number,
    s5xx: r[6] as number,
    s429: r[7] as number,
    failures: r[8] as number,
  };
}

function toSeriesPoint(r: Row, span: number): SeriesPoint {
  return {
    t: r[0] as number,
    ...counts(r),
    avgLatency: r[9] as number | null,
    maxLatency: r[10] as number | null,
    avgDelay: r[11] as number,
    bytes: r[12] as number,
    span,
    minLatency: r[13] as number | null,
    p95Latency: r[14] as number | null,
    lastDelay: r[15] as number,
    avgInFlight: r[16] as number,
    maxInFlight: r[17] as number,
  };
}

function toCrawlInfo(r: Row): CrawlInfo {
  return {
    id: r[0] as number,
    name: r[1] as string,
    status: r[2] as CrawlStatus,
    createdAt: r[3] as number,
    startedAt: r[4] as number | null,
    finishedAt: r[5] as number | null,
  };
}

/** Opens a read-only connection to an existing, migrated history database. */
export function openHistoryReader(file: string): HistoryReader {
  const db = openDatabase(file, { readonly: true });
  registerSeriesFunctions(db);
  const raw = (sql: string): Statement => db.prepare(sql).raw();

  const listCrawls = raw(`SELECT id, name, status, created_at, started_at, finished_at FROM crawls ORDER BY id`);
  const getCrawl = raw(
    `SELECT id, name, status, created_at, started_at, finished_at, derived_from, config_json, settings_json, summary_json,
       derived_json, shared_json
     FROM crawls WHERE id = ?`,
  );
  const crawlTimes = raw(`SELECT started_at, finished_at FROM crawls WHERE id = ?`);
  const totals = raw(
    `SELECT count(*), coalesce(sum(requests), 0), coalesce(sum(responses), 0), coalesce(sum(failures), 0), max(last_t)
     FROM slot_stats WHERE crawl_id = ?`,
  );
  const statusCounts = raw(`SELECT status, n FROM status_counts WHERE crawl_id = ? ORDER BY status`);
  const slotSummaries = raw(
    `SELECT s.key, st.requests, st.responses, st.s2xx, st.s3xx, st.s4xx, st.s5xx, st.s429, st.failures,
       CASE WHEN st.latency_n > 0 THEN st.latency_sum / st.latency_n END, st.last_latency, st.last_delay, st.last_t, st.bytes,
       st.last_cause, st.last_backoff
     FROM slot_stats st JOIN slots s ON s.id = st.slot_id WHERE st.crawl_id = ? ORDER BY s.key`,
  );
  const slotId = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();
  const responseAt = db.prepare(`SELECT 1 FROM responses WHERE crawl_id = ? AND t >= ? AND started_at = ? AND url = ? LIMIT 1`).pluck();
  const requests = createRequestReader(db);
  const scrapyStats = createScrapyStatsReader(db);

  // Every time-ordered query binds (crawl, [slot id,] from, to, limit).
  const responsesFrom = `SELECT ${RESPONSE_COLUMNS} FROM responses r JOIN slots s ON s.id = r.slot_id WHERE r.crawl_id = ?`;
  const responseRange = `r.t >= ? AND r.t < ? ORDER BY r.t, r.id LIMIT ?`;
  const responsesAll = raw(`${responsesFrom} AND ${responseRange}`);
  const responsesSlot = raw(`${responsesFrom} AND r.slot_id = ? AND ${responseRange}`);
  const changeColumns = `c.t, s.key, c.setting, c.source, c.old_json, c.new_json`;
  const changesFrom = `FROM changes c LEFT JOIN slots s ON s.id = c.slot_id WHERE c.crawl_id = ?`;
  const changeRange = `c.t >= ? AND c.t < ? ORDER BY c.t, c.id LIMIT ?`;
  const changesAll = raw(`SELECT ${changeColumns} ${changesFrom} AND ${changeRange}`);
  const changesSlot = raw(`SELECT ${changeColumns} ${changesFrom} AND c.slot_id = ? AND ${changeRange}`);
  const changesCrawlWide = raw(`SELECT ${changeColumns} ${changesFrom} AND c.slot_id IS NULL AND ${changeRange}`);
  // Events bind (crawl, [slot id,] kind, kind, from, to, limit); a null kind matches every kind.
  const eventColumns = `e.t, s.key, e.kind, e.code, e.text, e.data_json`;
  const eventsFrom = `FROM events e LEFT JOIN slots s ON s.id = e.slot_id WHERE e.crawl_id = ?`;
  const eventStatements = (order: 'ASC' | 'DESC') => {
    const range = `(? IS NULL OR e.kind = ?) AND e.t >= ? AND e.t < ? ORDER BY e.t ${order}, e.id ${order} LIMIT ?`;
    return {
      all: raw(`SELECT ${eventColumns} ${eventsFrom} AND ${range}`),
      slot: raw(`SELECT ${eventColumns} ${eventsFrom} AND e.slot_id = ? AND ${range}`),
      crawlWide: raw(`SELECT ${eventColumns} ${eventsFrom} AND e.slot_id IS NULL AND ${range}`),
    };
  };
  const eventsFirst = eventStatements('ASC');
  const eventsLatest = eventStatements('DESC');
  // Series bind (crawl, res_ms, slot id, from bucket, to).
  const seriesStored = raw(
    `SELECT ${SERIES_COLUMNS} FROM series
     WHERE crawl_id = ? AND res_ms = ? AND slot_id = ? AND bucket >= ? AND bucket < ? ORDER BY bucket`,
  );
  // Merged buckets (t is positive, so CAST truncation is floor); binds (span, span, crawl, res_ms, slot id, from, to).
  const seriesMerged = raw(
    `SELECT CAST(bucket / ? AS INTEGER) * ? AS g, ${MERGED_COLUMNS} FROM series
     WHERE crawl_id = ? AND res_ms = ? AND slot_id = ? AND bucket >= ? AND bucket < ? GROUP BY g ORDER BY g`,
  );
  // Extent of a stored level: binds (crawl, res_ms, slot id).
  const firstBucket = db.prepare(`SELECT min(bucket) FROM series WHERE crawl_id = ? AND res_ms = ? AND slot_id = ?`).pluck();
  const lastBucket = db.prepare(`SELECT max(bucket) FROM series WHERE crawl_id = ? AND res_ms = ? AND slot_id = ?`).pluck();
  // Scatter from raw rows: every row (binds crawl, slot id, from, to, limit), or per group of `span`
  // ms the row with the largest/smallest latency or the worst status (binds span, crawl, slot id, from, to);
  // SQLite takes bare columns from the row where the one max()/min() is found.
  const firstRaw = db.prepare(`SELECT min(t) FROM responses WHERE crawl_id = ? AND slot_id = ?`).pluck();
  const scatterAll = raw(
    `SELECT t, latency, status, delay_after FROM responses
     WHERE crawl_id = ? AND slot_id = ? AND t >= ? AND t < ? ORDER BY t, id LIMIT ?`,
  );
  const rawGroups = (pick: string, where: string) =>
    raw(
      `SELECT CAST(t / ? AS INTEGER) AS g, ${pick}, t, latency, status, delay_after FROM responses
       WHERE crawl_id = ? AND slot_id = ? AND t >= ? AND t < ? AND ${where} GROUP BY g`,
    );
  const SEVERITY = `CASE WHEN error_kind IS NOT NULL OR status IS NULL THEN 6 WHEN status >= 500 THEN 5 WHEN status = 429 THEN 4
    WHEN status >= 400 THEN 3 WHEN status >= 300 THEN 2 WHEN status < 200 THEN 1 ELSE 0 END`;
  const scatterRaw = [
    rawGroups('max(latency)', 'latency IS NOT NULL'),
    rawGroups('min(latency)', 'latency IS NOT NULL'),
    rawGroups(`max(${SEVERITY}) AS sev`, `${SEVERITY} > 0`),
  ];
  // The same from the buckets' exemplars: binds (span, crawl, res_ms, slot id, from bucket, to).
  const bucketGroups = (pick: string, cols: string, where: string) =>
    raw(
      `SELECT CAST(bucket / ? AS INTEGER) AS g, ${pick}, ${cols} FROM series
       WHERE crawl_id = ? AND res_ms = ? AND slot_id = ? AND bucket >= ? AND bucket < ? AND ${where} GROUP BY g`,
    );
  const scatterBuckets = [
    bucketGroups('max(latency_max)', 'max_t, latency_max, max_status, max_delay', 'latency_n > 0'),
    bucketGroups('min(latency_min)', 'min_t, latency_min, min_status, min_delay', 'latency_n > 0'),
    bucketGroups('max(odd_sev)', 'odd_t, odd_latency, odd_status, odd_delay', 'odd_sev > 0'),
  ];
  // Keyset pages in (t, id) order: binds (crawl, [slot id,] t, id, limit).
  const pageAll = raw(
    `SELECT r.id, ${RESPONSE_COLUMNS} FROM responses r JOIN slots s ON s.id = r.slot_id
     WHERE r.crawl_id = ? AND (r.t, r.id) > (?, ?) ORDER BY r.t, r.id LIMIT ?`,
  );
  const pageSlot = raw(
    `SELECT r.id, ${RESPONSE_COLUMNS} FROM responses r JOIN slots s ON s.id = r.slot_id
     WHERE r.crawl_id = ? AND r.slot_id = ? AND (r.t, r.id) > (?, ?) ORDER BY r.t, r.id LIMIT ?`,
  );

  /** [from, to) of a stored series (from seconds where they were not pruned, else minutes), or null when empty. */
  function extent(crawlId: number, slotId: number): { from: number; to: number; secondsFrom: number | null } | null {
    const sFirst = firstBucket.get(crawlId, 1000, slotId) as number | null;
    const mFirst = firstBucket.get(crawlId, 60_000, slotId) as number | null;
    if (mFirst === null && sFirst === null) return null;
    const sLast = lastBucket.get(crawlId, 1000, slotId) as number | null;
    const mLast = lastBucket.get(crawlId, 60_000, slotId) as number | null;
    const from = sFirst !== null && (mFirst === null || sFirst < mFirst + 60_000) ? sFirst : (mFirst as number);
    const to = sLast !== null ? sLast + 1000 : (mLast as number) + 60_000;
    // Seconds before secondsFrom were pruned (retention): only minutes and hours cover them.
    const pruned = mFirst !== null && (sFirst === null || sFirst >= mFirst + 60_000);
    return { from, to, secondsFrom: pruned ? sFirst ?? Infinity : null };
  }

  function seriesKey(crawlId: number, slot: string | undefined): number | undefined {
    return slot === undefined ? 0 : lookupSlot(crawlId, slot);
  }

  const lookupSlot = (crawlId: number, key: string): number | undefined => slotId.get(crawlId, key) as number | undefined;
  const bounds = (q: TimeRange): [number, number, number] => [q.from ?? -Infinity, q.to ?? Infinity, q.limit ?? -1];

  /** The range a history or scatter query covers (the series' extent where it gives none); null when empty. */
  function window(crawlId: number, id: number, q: { readonly from?: number; readonly to?: number; readonly maxPoints?: number }) {
    const ext = extent(crawlId, id);
    if (ext === null) return null;
    const from = q.from ?? ext.from;
    const to = q.to ?? ext.to;
    return to > from ? { ext, from, to, maxPoints: q.maxPoints ?? DEFAULT_MAX_POINTS } : null;
  }

  function responseRows(crawlId: number, q: ResponseQuery): { stmt: Statement; args: unknown[] } | undefined {
    if (q.slot === undefined) return { stmt: responsesAll, args: [crawlId, ...bounds(q)] };
    const id = lookupSlot(crawlId, q.slot);
    return id === undefined ? undefined : { stmt: responsesSlot, args: [crawlId, id, ...bounds(q)] };
  }

  return {
    listCrawls: () => timed('listCrawls', () => (listCrawls.all() as Row[]).map(toCrawlInfo)),

    getCrawl: (id) =>
      timed('getCrawl', () => {
        const r = getCrawl.get(id) as Row | undefined;
        if (!r) return undefined;
        return {
          ...toCrawlInfo(r),
          derivedFrom: r[6] as number | null,
          config: JSON.parse(r[7] as string),
          settings: JSON.parse(r[8] as string),
          summary: r[9] === null ? null : JSON.parse(r[9] as string),
          derived: r[10] === null ? null : JSON.parse(r[10] as string),
          shared: r[11] === null ? null : (JSON.parse(r[11] as string) as SharedMark),
        };
      }),

    crawlSummary: (id) =>
      timed('crawlSummary', () => {
        const times = crawlTimes.get(id) as [number | null, number | null] | undefined;
        if (!times) throw new Error(`no crawl with id ${id}`);
        const [slots, requests, responses, failures, lastT] = totals.get(id) as [number, number, number, number, number | null];
        const byStatus: Record<string, number> = {};
        for (const [status, n] of statusCounts.all(id) as [number, number][]) byStatus[String(status)] = n;
        const [startedAt, finishedAt] = times;
        const end = finishedAt ?? lastT;
        const seconds = startedAt !== null && end !== null ? Math.max(0, (end - startedAt) / 1000) : 0;
        return { crawl_id: id, requests, responses, by_status: byStatus, failures, slots, seconds };
      }),

    slotSummaries: (crawlId) =>
      timed('slotSummaries', () =>
        (slotSummaries.all(crawlId) as Row[]).map((r) => ({
          slot: r[0] as string,
          ...counts(r),
          avgLatency: r[9] as number | null,
          lastLatency: r[10] as number | null,
          lastDelay: r[11] as number,
          lastT: r[12] as number,
          bytes: r[13] as number,
          lastCause: r[14] as DelayCause | null,
          lastBackoffLevel: r[15] as number | null,
        })),
      ),

    responses: (crawlId, q = {}) =>
      timed('responses', () => {
        const rows = responseRows(crawlId, q);
        return rows ? (rows.stmt.all(...rows.args) as Row[]).map(toResponse) : [];
      }),

    *eachResponse(crawlId, q = {}) {
      const rows = responseRows(crawlId, q);
      if (!rows) return;
      for (const r of rows.stmt.iterate(...rows.args)) yield toResponse(r as Row);
    },

    changes: (crawlId, q = {}) =>
      timed('changes', () => {
        let rows: Row[];
        if (q.slot === undefined) rows = changesAll.all(crawlId, ...bounds(q)) as Row[];
        else if (q.slot === null) rows = changesCrawlWide.all(crawlId, ...bounds(q)) as Row[];
        else {
          const id = lookupSlot(crawlId, q.slot);
          rows = id === undefined ? [] : (changesSlot.all(crawlId, id, ...bounds(q)) as Row[]);
        }
        return rows.map(toChange);
      }),

    events: (crawlId, q = {}) =>
      timed('events', () => {
        const kind = q.kind ?? null;
        const latest = q.latest === true && q.limit !== undefined;
        const st = latest ? eventsLatest : eventsFirst;
        let rows: Row[];
        if (q.slot === undefined) rows = st.all.all(crawlId, kind, kind, ...bounds(q)) as Row[];
        else if (q.slot === null) rows = st.crawlWide.all(crawlId, kind, kind, ...bounds(q)) as Row[];
        else {
          const id = lookupSlot(crawlId, q.slot);
          rows = id === undefined ? [] : (st.slot.all(crawlId, id, kind, kind, ...bounds(q)) as Row[]);
        }
        if (latest) rows.reverse();
        return rows.map(toEvent);
      }),

    series: (crawlId, q) =>
      timed('series', () => {
        const res = q.resolution === 'second' ? 1000 : 60000;
        const from = Math.floor((q.from ?? -Infinity) / res) * res;
        const to = q.to ?? Infinity;
        const id = seriesKey(crawlId, q.slot);
        const rows = id === undefined ? [] : (seriesStored.all(crawlId, res, id, from, to) as Row[]);
        return rows.map((r) => toSeriesPoint(r, res));
      }),

    history: (crawlId, q = {}) =>
      timed('history', () => {
        const id = seriesKey(crawlId, q.slot);
        const w = id === undefined ? null : window(crawlId, id, q);
        if (id === undefined || w === null) return [];
        const { ext, from, to, maxPoints } = w;
        let minSpan = q.resolution === 'minute' ? 60_000 : 1000;
        // Seconds pruned inside the range: read 10-second buckets there instead.
        if (minSpan < 10_000 && ext.secondsFrom !== null && from < ext.secondsFrom) minSpan = 10_000;
        const span = chooseSpan(from, to, maxPoints, minSpan);
        const res = levelFor(span);
        // Whole points: each one holds every bucket of [t, t + span).
        const lo = Math.floor(from / span) * span;
        const hi = Math.ceil(to / span) * span;
        const rows = span === res
          ? (seriesStored.all(crawlId, res, id, lo, hi) as Row[])
          : (seriesMerged.all(span, span, crawlId, res, id, lo, hi) as Row[]);
        return rows.map((r) => toSeriesPoint(r, span));
      }),

    scatter: (crawlId, q) =>
      timed('scatter', () => {
        const id = lookupSlot(crawlId, q.slot);
        const w = id === undefined ? null : window(crawlId, id, q);
        if (id === undefined || w === null) return [];
        const { ext, from, to, maxPoints } = w;
        const point = (r: Row, o: number): ScatterPoint => ({
          t: r[o] as number, latency: r[o + 1] as number | null, status: r[o + 2] as number | null, delay: r[o + 3] as number,
        });
        // Raw rows before the slot's first one were pruned (retention): the buckets' exemplars stand in.
        const rawFirst = firstRaw.get(crawlId, id) as number | null;
        const rawCovers = rawFirst !== null && Math.floor(rawFirst / 1000) * 1000 <= Math.max(from, ext.from);
        if (rawCovers) {
          const all = scatterAll.all(crawlId, id, from, to, maxPoints + 1) as Row[];
          if (all.length <= maxPoints) return all.map((r) => point(r, 0));
        }
        // Three picks per group: the slowest, the fastest and the worst status.
        const secondsPruned = ext.secondsFrom !== null && from < ext.secondsFrom;
        const span = chooseSpan(from, to, Math.max(1, Math.floor(maxPoints / 3)), rawCovers ? 1 : secondsPruned ? 10_000 : 1000);
        const res = levelFor(span);
        const groups: Row[][] = res === 0
          ? scatterRaw.map((st) => st.all(span, crawlId, id, from, to) as Row[])
          : scatterBuckets.map((st) => st.all(span, crawlId, res, id, Math.floor(from / res) * res, to) as Row[]);
        const seen = new Set<string>();
        const out: ScatterPoint[] = [];
        for (const rows of groups) {
          for (const r of rows) {
            const p = point(r, 2);
            if (p.t < from || p.t >= to) continue;
            const key = `${p.t}|${p.latency}|${p.status}`;
            if (seen.has(key)) continue;
            seen.add(key);
            out.push(p);
          }
        }
        return out.sort((a, b) => a.t - b.t);
      }),

    responsePage: (crawlId, after, limit, slot) =>
      timed('responsePage', () => {
        let rows: Row[];
        if (slot === undefined) rows = pageAll.all(crawlId, after[0], after[1], limit) as Row[];
        else {
          const id = lookupSlot(crawlId, slot);
          rows = id === undefined ? [] : (pageSlot.all(crawlId, id, after[0], after[1], limit) as Row[]);
        }
        return rows.map((r) => ({ id: r[0] as number, ...toResponse(r.slice(1)) }));
      }),

    retention: () => readRetention(db),

    requestPage: (crawlId, q) => requests.page(crawlId, q),

    savedQueue: (crawlId, slot, limit) => requests.savedQueue(crawlId, slot, limit),

    scrapyStats: (crawlId, now) => scrapyStats(crawlId, now),

    hasResponse: (crawlId, url, startedAt) => responseAt.get(crawlId, startedAt, startedAt, url) !== undefined,
    close: () => db.close(),
  };
}
