// A crawl's figures under Scrapy's stats names (what Scrapy dumps at the end of a crawl), read from
// the store's running totals and indexes only: a crawl of millions of rows is summed in milliseconds.

import type { Database } from 'better-sqlite3';
import type { ScrapyStats } from '../../../shared/contract';
import type { CrawlStatus } from '../../../shared/types';
import { timed } from './database';

/** Scrapy's finish_reason for a crawl that ended: 'finished', or 'shutdown' for one stopped by the user. */
const FINISH_REASON: Partial<Record<CrawlStatus, string>> = { finished: 'finished', stopped: 'shutdown', failed: 'failed' };

/** Python's repr of an aware datetime in UTC, as Scrapy's stats dump prints start_time and finish_time. */
export function pythonUtcDatetime(epochMs: number): string {
  const d = new Date(epochMs);
  const us = Math.round((epochMs - Math.floor(epochMs / 1000) * 1000) * 1000);
  const parts = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  if (us > 0) parts.push(us);
  return `datetime.datetime(${parts.join(', ')}, tzinfo=datetime.timezone.utc)`;
}

/** Python's logging level of an engine event (a debug line and a note are INFO, as the log writes them). */
const LEVEL: Readonly<Record<string, string>> = { debug: 'INFO', info: 'INFO', warning: 'WARNING', error: 'ERROR' };

export function createScrapyStatsReader(db: Database): (crawlId: number, now: number) => ScrapyStats {
  const crawl = db.prepare(`SELECT status, started_at, finished_at FROM crawls WHERE id = ?`).raw();
  const totals = db.prepare(
    `SELECT coalesce(sum(requests), 0), coalesce(sum(responses), 0), coalesce(sum(failures), 0), coalesce(sum(bytes), 0), count(*),
       coalesce(sum(retries), 0), coalesce(sum(robots), 0), coalesce(max(depth_max), 0)
     FROM slot_stats WHERE crawl_id = ?`,
  ).raw();
  const statuses = db.prepare(`SELECT status, n FROM status_counts WHERE crawl_id = ?`).raw();
  // Failed downloads by kind, through 0005's index of non-2xx rows (its condition repeated word for word).
  const exceptions = db.prepare(
    `SELECT error_kind, count(*) FROM responses INDEXED BY responses_odd
     WHERE crawl_id = ? AND (status IS NULL OR status >= 300) AND status IS NULL GROUP BY error_kind`,
  ).raw();
  const events = db.prepare(`SELECT kind, code, count(*) FROM events WHERE crawl_id = ? GROUP BY kind, code`).raw();
  const userChanges = db.prepare(`SELECT count(*) FROM changes WHERE crawl_id = ? AND source = 'user'`).pluck();
  const frontier = db.prepare(`SELECT count(*) FROM frontier WHERE crawl_id = ?`).pluck();

  return (crawlId, now) => timed('scrapyStats', () => {
    const c = crawl.get(crawlId) as [CrawlStatus, number | null, number | null] | undefined;
    if (!c) throw new Error(`no crawl with id ${crawlId}`);
    const [status, startedAt, finishedAt] = c;
    const out = new Map<string, number | string>();
    const add = (k: string, n: number) => out.set(k, ((out.get(k) as number | undefined) ?? 0) + n);
    const [requests, responses, failures, bytes, slots, retries, robots, depthMax] = totals.get(crawlId) as number[];
    const accepted = frontier.get(crawlId) as number;
    out.set('downloader/request_count', requests);
    out.set('downloader/response_count', responses);
    out.set('response_received_count', responses);
    out.set('downloader/response_bytes', bytes);
    if (failures > 0) out.set('downloader/exception_count', failures);
    for (const [code, n] of statuses.all(crawlId) as [number, number][]) out.set(`downloader/response_status_count/${code}`, n);
    for (const [kind, n] of exceptions.all(crawlId) as [string | null, number][]) add(`downloader/exception_type_count/${kind ?? 'unknown'}`, n);
    // The engine sends GET only; an imported log's rows may not say (their method is empty).
    if (accepted > 0 && requests > 0) out.set('downloader/request_method_count/GET', requests);
    if (robots > 0) out.set('robotstxt/request_count', robots);
    if (requests > 0) out.set('request_depth_max', depthMax);
    out.set('retry/count', retries);
    let maxReached = 0;
    for (const [kind, code, n] of events.all(crawlId) as [string, string, number][]) {
      add(`log_count/${LEVEL[kind] ?? kind.toUpperCase()}`, n);
      if (kind === 'error' && code === 'retries-exhausted') maxReached += n;
      if (code === 'robots-disallowed') add('robotstxt/forbidden', n);
      if (code === 'backoff-step') add('slotscope/backoff/steps', n);
      if (code === 'retry-after') add('slotscope/backoff/retry_after_blocks', n);
      if (kind === 'warning') add('slotscope/warnings', n);
    }
    out.set('retry/max_reached', maxReached);
    if (accepted > 0) {
      // Robots.txt requests go around Scrapy's scheduler; every other attempt went through it.
      out.set('scheduler/enqueued', accepted + retries);
      out.set('scheduler/dequeued', Math.max(0, requests - robots));
    }
    out.set('slotscope/slots', slots);
    out.set('slotscope/changes_by_user', userChanges.get(crawlId) as number);
    if (startedAt !== null) {
      out.set('start_time', pythonUtcDatetime(startedAt));
      const end = finishedAt ?? now;
      out.set('elapsed_time_seconds', Math.round((end - startedAt) * 1000) / 1e6);
    }
    if (finishedAt !== null) out.set('finish_time', pythonUtcDatetime(finishedAt));
    const reason = FINISH_REASON[status];
    if (reason) out.set('finish_reason', reason);
    return [...out].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  });
}
