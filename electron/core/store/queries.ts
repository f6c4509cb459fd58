// The read side of the history database: a separate read-only connection and prepared statements
// for crawl lists, summaries, per-slot figures, raw samples, changes, events and chart series.
import type { Statement } from 'better-sqlite3';
import type {
  ChangeRecord, ChangeSource, CrawlStatus, CrawlSummary, DelayCause, EventKind, EventRecord, FailureKind, ResponseRecord,
} from '../../../shared/types';
import { openDatabase, timed } from './database';
import type { HistoryPoint } from '../../../shared/contract';

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
}

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
  /** A chart series. The crawl-wide series and per-slot minutes are pre-aggregated; per-slot seconds come from raw rows. */
  series(crawlId: number, query: SeriesQuery): SeriesPoint[];
  close(): void;
}

type Row = unknown[];

const RESPONSE_COLUMNS = `r.t, r.started_at, r.wait_ms, s.key, r.url, r.method, r.status, r.latency, r.download_time,
  r.bytes, r.in_flight, r.delay_before, r.delay_after, r.delay_cause, r.backoff_level, r.reused, r.error_kind,
  r.error_message, r.depth, r.content_type`;

const SERIES_COLUMNS = `bucket, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
  CASE WHEN latency_n > 0 THEN latency_sum / latency_n END, latency_max,
  CASE WHEN requests > 0 THEN delay_sum / requests ELSE 0 END, bytes`;

function toResponse(r: Row): ResponseRecord {
  return {
    t: r[0] as number,
    startedAt: r[1] as number,
    waitMs: r[2] as number,
    slot: r[3] as string,
    url: r[4] as string,
    method: r[5] as string,
    status: r[6] as number | null,
    latency: r[7] as number | null,
    downloadTime: r[8] as number | null,
    bytes: r[9] as number,
    inFlight: r[10] as number,
    delayBefore: r[11] as number,
    delayAfter: r[12] as number,
    delayCause: r[13] as DelayCause,
    backoffLevel: r[14] as number,
    reused: r[15] === null ? null : r[15] === 1,
    errorKind: r[16] as FailureKind | null,
    errorMessage: r[17] as string | null,
    depth: r[18] as number,
    contentType: r[19] as string | null,
  };
}

function fromJson(v: unknown): unknown {
  return v === null ? undefined : JSON.parse(v as string);
}

function toChange(r: Row): ChangeRecord {
  return {
    t: r[0] as number,
    slot: r[1] as string | null,
    setting: r[2] as string,
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

function toSeriesPoint(r: Row): SeriesPoint {
  return {
    t: r[0] as number,
    ...counts(r),
    avgLatency: r[9] as number | null,
    maxLatency: r[10] as number | null,
    avgDelay: r[11] as number,
    bytes: r[12] as number,
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
  const raw = (sql: string): Statement => db.prepare(sql).raw();

  const listCrawls = raw(`SELECT id, name, status, created_at, started_at, finished_at FROM crawls ORDER BY id`);
  const getCrawl = raw(
    `SELECT id, name, status, created_at, started_at, finished_at, config_json, settings_json, summary_json
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
       CASE WHEN st.latency_n > 0 THEN st.latency_sum / st.latency_n END, st.last_latency, st.last_delay, st.last_t, st.bytes
     FROM slot_stats st JOIN slots s ON s.id = st.slot_id WHERE st.crawl_id = ? ORDER BY s.key`,
  );
  const slotId = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();

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
  const eventRange = `(? IS NULL OR e.kind = ?) AND e.t >= ? AND e.t < ? ORDER BY e.t, e.id LIMIT ?`;
  const eventsAll = raw(`SELECT ${eventColumns} ${eventsFrom} AND ${eventRange}`);
  const eventsSlot = raw(`SELECT ${eventColumns} ${eventsFrom} AND e.slot_id = ? AND ${eventRange}`);
  const eventsCrawlWide = raw(`SELECT ${eventColumns} ${eventsFrom} AND e.slot_id IS NULL AND ${eventRange}`);
  // Series bind (crawl, res_ms, slot id, from bucket, to).
  const seriesStored = raw(
    `SELECT ${SERIES_COLUMNS} FROM series
     WHERE crawl_id = ? AND res_ms = ? AND slot_id = ? AND bucket >= ? AND bucket < ? ORDER BY bucket`,
  );
  // Per-slot seconds from raw rows (t is positive, so CAST truncation is floor); binds (res, res, crawl, slot id, from, to).
  const seriesRaw = raw(
    `SELECT ${SERIES_COLUMNS} FROM (
       SELECT CAST(t / ? AS INTEGER) * ? AS bucket, count(*) AS requests, count(status) AS responses,
         total(status BETWEEN 200 AND 299) AS s2xx, total(status BETWEEN 300 AND 399) AS s3xx,
         total(status BETWEEN 400 AND 499) AS s4xx, total(status BETWEEN 500 AND 599) AS s5xx,
         total(status = 429) AS s429, count(error_kind) AS failures,
         total(latency) AS latency_sum, count(latency) AS latency_n, max(latency) AS latency_max,
         total(delay_after) AS delay_sum, total(bytes) AS bytes
       FROM responses WHERE crawl_id = ? AND slot_id = ? AND t >= ? AND t < ?
       GROUP BY 1
     ) ORDER BY bucket`,
  );

  const lookupSlot = (crawlId: number, key: string): number | undefined => slotId.get(crawlId, key) as number | undefined;
  const bounds = (q: TimeRange): [number, number, number] => [q.from ?? -Infinity, q.to ?? Infinity, q.limit ?? -1];

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
          config: JSON.parse(r[6] as string),
          settings: JSON.parse(r[7] as string),
          summary: r[8] === null ? null : JSON.parse(r[8] as string),
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
        let rows: Row[];
        if (q.slot === undefined) rows = eventsAll.all(crawlId, kind, kind, ...bounds(q)) as Row[];
        else if (q.slot === null) rows = eventsCrawlWide.all(crawlId, kind, kind, ...bounds(q)) as Row[];
        else {
          const id = lookupSlot(crawlId, q.slot);
          rows = id === undefined ? [] : (eventsSlot.all(crawlId, id, kind, kind, ...bounds(q)) as Row[]);
        }
        return rows.map(toEvent);
      }),

    series: (crawlId, q) =>
      timed('series', () => {
        const res = q.resolution === 'second' ? 1000 : 60000;
        const from = Math.floor((q.from ?? -Infinity) / res) * res;
        const to = q.to ?? Infinity;
        let rows: Row[];
        if (q.slot === undefined) rows = seriesStored.all(crawlId, res, 0, from, to) as Row[];
        else {
          const id = lookupSlot(crawlId, q.slot);
          if (id === undefined) rows = [];
          else if (res === 60000) rows = seriesStored.all(crawlId, res, id, from, to) as Row[];
          else rows = seriesRaw.all(res, res, crawlId, id, from, Math.ceil(to / res) * res) as Row[];
        }
        return rows.map(toSeriesPoint);
      }),

    close: () => db.close(),
  };
}
