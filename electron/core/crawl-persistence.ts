// Crash-safe resume for one crawl, shared by the core and `slotscope crawl`: the crawler's frontier,
// live settings and slot states wired to the history writer, and a stored crawl made runnable again.

import type { Settings } from '../../shared/settings';
import type { ChangeRecord, CrawlStatus } from '../../shared/types';
import type { Crawler } from './engine/crawler';
import type { CrawlRequest } from './engine/request';
import { slotChanged, snapshotSlot, type FrontierSink, type SavedCrawl, type SlotSnapshot } from './engine/resume';
import type { Slot } from './engine/slot';
import { loadSavedCrawl } from './store/frontier-store';
import { OP_DONE, OP_REQUEUED, OP_STARTED } from './store/history-protocol';
import type { HistoryWriter } from './store/history-writer';

/** How often every slot's learned state is compared with its last snapshot (user changes are saved at once). */
export const SLOT_SNAPSHOT_MS = 1000;

/** Crawl statuses a crawl can be resumed from (SPEC 6: paused, stopped or interrupted). */
export const RESUMABLE: readonly CrawlStatus[] = ['interrupted', 'paused', 'stopped'];

function metaJson(meta: Record<string, unknown>): string | null {
  for (const _ in meta) return JSON.stringify(meta);
  return null;
}

/**
 * What a running crawl persists beyond its history rows. Build it before the Crawler (its
 * `frontier` and `onSettings` go into the sinks), call attach() once the crawler exists and
 * close() before the writer closes.
 */
export class CrawlPersistence {
  private crawler: Crawler | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly saved = new Map<string, SlotSnapshot>();

  constructor(
    private readonly writer: HistoryWriter,
    /** The crawl id; may be set later (runCrawl learns it after building the crawler). */
    public crawlId: number,
  ) {}

  /** The crawler's FrontierSink: every call buffers one op in the writer (hot path). */
  readonly frontier: FrontierSink = {
    queued: (r: CrawlRequest) => this.writer.recordQueued(this.crawlId, r.seq!, r.url, metaJson(r.meta), r.depth, r.priority, r.redirects, r.retries),
    started: (r: CrawlRequest) => this.writer.recordFrontier(this.crawlId, OP_STARTED, r.seq!),
    requeued: (r: CrawlRequest) => this.writer.recordFrontier(this.crawlId, OP_REQUEUED, r.seq!, r.priority, r.retries),
    done: (r: CrawlRequest) => this.writer.recordFrontier(this.crawlId, OP_DONE, r.seq!),
  };

  /** Live settings are kept with the crawl as they change, so a resumed crawl has them. */
  onSettings(s: Settings): void {
    this.writer.updateCrawl(this.crawlId, { settings: s });
  }

  /** A slot change (a pin, a pause, a backoff step, a Crawl-delay) saves that slot's state now. */
  onChange(c: ChangeRecord): void {
    if (c.slot === null || this.crawler === null) return;
    const slot = this.crawler.slot(c.slot);
    if (slot) this.snapshot(slot);
  }

  /** Starts the periodic slot snapshots. */
  attach(crawler: Crawler): void {
    this.crawler = crawler;
    this.timer = setInterval(() => this.snapshotAll(), SLOT_SNAPSHOT_MS);
    this.timer.unref();
  }

  /** Saves every slot whose state changed since its last snapshot. */
  snapshotAll(): void {
    if (this.crawler === null) return;
    for (const slot of this.crawler.slots()) this.snapshot(slot);
  }

  /** A last snapshot; stops the timer. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    try {
      this.snapshotAll();
    } catch {
      /* the writer is gone: nothing more can be saved */
    }
    this.crawler = null;
  }

  private snapshot(slot: Slot): void {
    const last = this.saved.get(slot.key);
    if (last !== undefined && !slotChanged(slot, last)) return;
    const snap = snapshotSlot(slot);
    this.saved.set(slot.key, snap);
    this.writer.recordSlotState(this.crawlId, this.crawler!.now, slot.key, JSON.stringify(snap));
  }
}

/**
 * Loads a stored crawl for resuming: crash accounting on the writer (in-flight URLs of the
 * previous run counted, given up at their second), then its frontier, slot states and totals.
 * Throws a clear Error when the crawl has no saved frontier.
 */
export async function loadForResume(writer: HistoryWriter, crawlId: number): Promise<SavedCrawl> {
  const accounting = await writer.resumeFrontier(crawlId);
  const saved = loadSavedCrawl(writer.file, crawlId, accounting);
  for (const _ of saved.seen) return saved;
  throw new Error(`crawl ${crawlId} has no saved frontier (recorded by a Slotscope without crash-safe resume); duplicate it to crawl again`);
}
