// Runs one crawl to its end with its history recorded: the engine's sinks wired to the history
// writer, the crawl row kept up to date, and the final summary of `slotscope crawl`.

import type { CrawlSummary, EventRecord } from '../../shared/types';
import { scrapyLogPrefix } from '../../shared/debug-line';
import type { Clock } from './clock';
import type { CrawlConfig } from './engine/crawl-config';
import { Crawler, type CrawlStats } from './engine/crawler';
import { openHistoryWriter, type HistoryWriter } from './store/history-writer';

export interface RunCrawlOptions {
  readonly config: CrawlConfig;
  /** SQLite file of the history. */
  readonly db: string;
  readonly clock?: Clock;
  /** Progress lines (stderr in the CLI). */
  readonly log?: (line: string) => void;
  /** Seconds between progress lines; 0 = none. */
  readonly progressEvery?: number;
  /** Folder relative paths in the settings (THROTTLING_MANAGER) are resolved from; the working folder by default. */
  readonly baseDir?: string;
  /** Called once the crawl is running, e.g. to steer it from a test. */
  readonly onStart?: (crawler: Crawler, crawlId: number) => void;
}

export interface RunCrawlResult {
  readonly summary: CrawlSummary;
  readonly stats: CrawlStats;
}

/** Formats an engine event as a log line, Scrapy style for AutoThrottle debug lines. */
export function formatEventLine(e: EventRecord): string {
  if (e.kind === 'debug' && e.code === 'autothrottle') return scrapyLogPrefix(e.t) + e.text;
  const level = e.kind === 'warning' ? 'WARNING' : e.kind === 'error' ? 'ERROR' : 'INFO';
  return scrapyLogPrefix(e.t, 'slotscope', level) + e.text;
}

export async function runCrawl(o: RunCrawlOptions): Promise<RunCrawlResult> {
  const writer: HistoryWriter = await openHistoryWriter(o.db);
  let writerError: Error | null = null;
  writer.on('error', (err: Error) => {
    writerError = err;
    o.log?.(`history error: ${err.message}`);
  });
  try {
    const { config } = o;
    const crawlConfig = {
      name: config.name,
      seeds: config.seeds,
      follow: { ...config.follow, include: config.follow.include.map((r) => r.source), exclude: config.follow.exclude.map((r) => r.source) },
      resolve: config.resolve,
      scopes: config.scopeRules,
    };
    let crawlId = 0;
    const crawler = new Crawler({
      config,
      clock: o.clock,
      sinks: {
        onResponse: (r) => writer.recordResponse(crawlId, r),
        onChange: (c) => writer.recordChange(crawlId, c),
        onEvent: (e) => {
          writer.recordEvent(crawlId, e);
          if (e.kind !== 'debug' || config.settings.AUTOTHROTTLE_DEBUG) {
            if (e.code !== 'robots-disallowed') o.log?.(formatEventLine(e));
          }
        },
        onStatus: (status) => writer.updateCrawl(crawlId, { status }),
      },
    });
    await crawler.prepare(o.baseDir);
    crawlId = await writer.createCrawl(config.name, crawlConfig, config.settings);
    crawler.start();
    const started = crawler.stats().startedAt ?? Date.now();
    writer.updateCrawl(crawlId, { startedAt: started });
    o.onStart?.(crawler, crawlId);
    let timer: NodeJS.Timeout | null = null;
    if (o.log && (o.progressEvery ?? 5) > 0) {
      timer = setInterval(() => {
        const s = crawler.stats();
        o.log!(`progress: ${s.requests} requests, ${s.responses} responses, ${s.failures} failures, ${s.inFlight} in flight, ${s.queued} queued, ${s.slots} slots`);
      }, (o.progressEvery ?? 5) * 1000);
      timer.unref();
    }
    const stats = await crawler.done;
    if (timer) clearInterval(timer);
    await crawler.close();
    const summary: CrawlSummary = {
      crawl_id: crawlId,
      requests: stats.requests,
      responses: stats.responses,
      by_status: stats.byStatus,
      failures: stats.failures,
      slots: stats.slots,
      seconds: Math.round((((stats.finishedAt ?? Date.now()) - started) / 1000) * 1000) / 1000,
    };
    writer.updateCrawl(crawlId, { status: stats.status, finishedAt: stats.finishedAt ?? Date.now(), summary, settings: crawler.currentSettings });
    await writer.flush();
    if (writerError) throw writerError;
    return { summary, stats };
  } finally {
    await writer.close();
  }
}
