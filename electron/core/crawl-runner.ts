// Runs one crawl to its end with its history recorded: the engine's sinks wired to the history
// writer, the crawl row kept up to date, and the final summary of `slotscope crawl`.

import type { CrawlSummary, EventRecord } from '../../shared/types';
import { eventLogLine } from '../../shared/debug-line';
import type { Clock } from './clock';
import { crawlConfigInput, parseCrawlConfig, type CrawlConfig } from './engine/crawl-config';
import { Crawler, type CrawlStats } from './engine/crawler';
import type { SavedCrawl } from './engine/resume';
import { CrawlPersistence, loadForResume, RESUMABLE, StorePause } from './crawl-persistence';
import { openHistoryWriter, type HistoryWriter } from './store/history-writer';
import { openHistoryReader } from './store/queries';

/** A crawl that cannot be resumed: unknown, never started, finished, or without a saved frontier. */
export class ResumeError extends Error {}

/**
 * The history could not be written before the crawl had to end (a full disk, a lock, a read-only
 * disk that did not recover before the user quit): the message names the file, the fault, what
 * was not written and how to resume. The crawl is not marked finished: it stays resumable.
 */
export class StoreFaultError extends Error {
  override readonly name = 'StoreFaultError';
}

/** How long a pause (Ctrl-C) waits for a blocked store before giving up on it. */
const PAUSE_STORE_WAIT_MS = 3000;

export interface RunCrawlOptions {
  /** The crawl to run (omit it with `resume`). */
  readonly config?: CrawlConfig;
  /**
   * Instead of a new crawl: resume this stored one (interrupted, paused or stopped) from its saved
   * frontier with its live settings; in-flight URLs of the previous run are fetched once more.
   */
  readonly resume?: number;
  /** Aborting pauses the crawl: in-flight requests finish (5 s at most), it is saved 'paused' and runCrawl returns. */
  readonly signal?: AbortSignal;
  /** SQLite file of the history. */
  readonly db: string;
  readonly clock?: Clock;
  /** Progress lines (stderr in the CLI). */
  readonly log?: (line: string) => void;
  /**
   * Lines that must be seen even when `log` is off (--quiet): the crawl paused because its
   * history cannot be written, and resumed. Default: `log`, else standard error.
   */
  readonly alert?: (line: string) => void;
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
  /** When (engine clock, epoch ms) every record of the crawl was committed, before the database closed. */
  readonly committedAt: number;
}

/** Formats an engine event as a log line, Scrapy style for AutoThrottle debug lines. */
export const formatEventLine: (e: EventRecord) => string = eventLogLine;

/** A stored crawl's config and live settings, checked resumable; throws ResumeError otherwise. */
function storedConfig(db: string, id: number): CrawlConfig {
  const reader = openHistoryReader(db);
  try {
    const c = reader.getCrawl(id);
    if (!c) throw new ResumeError(`crawl ${id} does not exist in ${db}`);
    if (!RESUMABLE.includes(c.status)) {
      throw new ResumeError(`crawl ${id} is ${c.status}; only an ${RESUMABLE.join(', ')} crawl can be resumed`);
    }
    const parsed = parseCrawlConfig({ ...(c.config as object), settings: c.settings });
    if (!parsed.ok) throw new ResumeError(`crawl ${id} has a stored config that no longer validates: ${parsed.errors.map((e) => e.message).join('; ')}`);
    return parsed.config;
  } finally {
    reader.close();
  }
}

export async function runCrawl(o: RunCrawlOptions): Promise<RunCrawlResult> {
  const writer: HistoryWriter = await openHistoryWriter(o.db);
  const alert = o.alert ?? o.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let writerError: Error | null = null;
  writer.on('error', (err: Error) => {
    writerError = err;
    o.log?.(`history error: ${err.message}`);
  });
  let persist: CrawlPersistence | null = null;
  let guard: StorePause | null = null;
  let failing: unknown = null;
  let crawlId = o.resume ?? 0;
  try {
    if (o.config === undefined && o.resume === undefined) throw new Error('runCrawl needs a config or a crawl to resume');
    const config = o.resume !== undefined ? storedConfig(o.db, o.resume) : o.config!;
    let saved: SavedCrawl | null = null;
    if (o.resume !== undefined) {
      try {
        saved = await loadForResume(writer, o.resume);
      } catch (e) {
        throw new ResumeError((e as Error).message);
      }
    }
    const p = (persist = new CrawlPersistence(writer, crawlId));
    const crawler = new Crawler({
      config,
      clock: o.clock,
      sinks: {
        onResponse: (r) => writer.recordResponse(crawlId, r),
        onChange: (c) => {
          writer.recordChange(crawlId, c);
          p.onChange(c);
        },
        onSettings: (s) => p.onSettings(s),
        onFrontier: p.frontier,
        onEvent: (e) => {
          writer.recordEvent(crawlId, e);
          if (e.kind !== 'debug' || config.settings.AUTOTHROTTLE_DEBUG) {
            if (e.code !== 'robots-disallowed') o.log?.(formatEventLine(e));
          }
        },
        onStatus: (status) => {
          writer.updateCrawl(crawlId, { status });
          guard?.onStatus(status);
        },
      },
    });
    // A history that cannot be written pauses the crawl and says so, even with --quiet.
    guard = new StorePause(writer, crawler, (e) => {
      writer.recordEvent(crawlId, e);
      alert(`crawl ${crawlId}: ${e.text}`);
    });
    await crawler.prepare(o.baseDir);
    if (saved) {
      crawler.startFrom(saved);
    } else {
      crawlId = await writer.createCrawl(config.name, crawlConfigInput(config), config.settings);
      p.crawlId = crawlId;
      crawler.start();
    }
    const started = crawler.stats().startedAt ?? Date.now();
    if (!saved) writer.updateCrawl(crawlId, { startedAt: started });
    p.attach(crawler);
    guard.attach();
    o.onStart?.(crawler, crawlId);
    let timer: NodeJS.Timeout | null = null;
    if (o.log && (o.progressEvery ?? 5) > 0) {
      timer = setInterval(() => {
        const s = crawler.stats();
        const held = guard!.paused ? ', paused: the history cannot be written' : '';
        o.log!(`progress: ${s.requests} requests, ${s.responses} responses, ${s.failures} failures, ${s.inFlight} in flight, ${s.queued} queued, ${s.slots} slots${held}`);
      }, (o.progressEvery ?? 5) * 1000);
      timer.unref();
    }
    // Aborting (Ctrl-C in the CLI) pauses: in-flight requests finish, the crawl is saved paused.
    const paused = new Promise<CrawlStats>((resolve) => {
      const onAbort = async (): Promise<void> => {
        crawler.pause();
        const deadline = Date.now() + 5000;
        while (crawler.stats().inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        resolve(crawler.stats());
      };
      if (o.signal?.aborted) void onAbort();
      else o.signal?.addEventListener('abort', () => void onAbort(), { once: true });
    });
    const stats = await Promise.race([crawler.done, paused]);
    if (timer) clearInterval(timer);
    if (stats.status === 'paused') {
      guard.ended();
      await crawler.close({ stop: false });
      p.close();
      // Quitting: a blocked store gets one more chance, briefly.
      await committed(writer, crawlId, o.db, 'paused', PAUSE_STORE_WAIT_MS);
      guard.detach();
      if (writerError) throw writerError;
      const committedAt = crawler.now;
      const s = crawler.stats();
      const summary: CrawlSummary = {
        crawl_id: crawlId, requests: s.requests, responses: s.responses, by_status: s.byStatus, failures: s.failures, slots: s.slots,
        seconds: Math.round(((Date.now() - started) / 1000) * 1000) / 1000,
      };
      return { summary, stats: s, committedAt };
    }
    guard.ended();
    // The worker writes the crawl's buckets while the crawler closes its connections (both ~100 ms
    // over 1,000 hosts, one after the other before), on the other core.
    writer.writeAggregatesNow();
    await crawler.close();
    p.close();
    const summary: CrawlSummary = {
      crawl_id: crawlId,
      requests: stats.requests,
      responses: stats.responses,
      by_status: stats.byStatus,
      failures: stats.failures,
      slots: stats.slots,
      seconds: Math.round((((stats.finishedAt ?? Date.now()) - started) / 1000) * 1000) / 1000,
    };
    // Written after every record of the crawl, in order: it is 'finished' only once they all are.
    writer.updateCrawl(crawlId, { status: stats.status, finishedAt: stats.finishedAt ?? Date.now(), summary, settings: crawler.currentSettings });
    // A blocked store is waited for, however long (the guard says why); Ctrl-C gives up, resumable.
    await committed(writer, crawlId, o.db, stats.status, Infinity, o.signal);
    guard.detach();
    if (writerError) throw writerError;
    return { summary, stats, committedAt: crawler.now };
  } catch (e) {
    failing = e;
    throw e;
  } finally {
    persist?.close();
    guard?.detach();
    try {
      await writer.close();
    } catch (e) {
      // What could not be written is said, naming the file and how to resume; an earlier error stays the one thrown.
      if (failing === null) throw storeFault(e, crawlId, o.db);
    }
  }
}

/** A writer's refusal to close (records it could not write) as the error `slotscope crawl` prints. */
function storeFault(e: unknown, crawlId: number, db: string): Error {
  if (e instanceof StoreFaultError) return e;
  const resume = crawlId > 0 ? ` Resume it with: slotscope crawl --db ${db} --resume ${crawlId}` : '';
  return new StoreFaultError(`${(e as Error)?.message ?? String(e)}.${resume}`, { cause: e });
}

/**
 * Waits until everything recorded is committed, however long the store stays blocked, unless
 * `signal` aborts or `limitMs` passes first: then throws a StoreFaultError that says what was
 * not written and that the crawl stays resumable (it is not marked `status`).
 */
async function committed(writer: HistoryWriter, crawlId: number, db: string, status: string, limitMs: number, signal?: AbortSignal): Promise<void> {
  // Urgent: the crawl has ended (or paused) and waits for nothing else; its worker need not idle behind other programs.
  const flushed = writer.flush({ wait: true, urgent: true });
  let giveUp: () => void = () => undefined;
  const stop = new Promise<'stop'>((resolve) => {
    giveUp = () => resolve('stop');
    const timer = Number.isFinite(limitMs) ? setTimeout(giveUp, limitMs) : null;
    signal?.addEventListener('abort', giveUp, { once: true });
    flushed.finally(() => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', giveUp);
    }).catch(() => undefined);
  });
  const r = await Promise.race([flushed.then(() => 'ok' as const), stop]);
  if (r === 'ok') return;
  flushed.catch(() => undefined);
  const b = writer.blocked;
  throw new StoreFaultError(
    `crawl ${crawlId} could not be saved as ${status}: ${b ? `${b.pending} records are not written (${b.text})` : 'the history is not written'}. ` +
      `Nothing is marked ${status}: the crawl stays resumable and fetches the unrecorded pages again. ` +
      `Resume it with: slotscope crawl --db ${db} --resume ${crawlId}`,
  );
}
