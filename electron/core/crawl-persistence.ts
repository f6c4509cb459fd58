// Crash-safe resume for one crawl, shared by the core and `slotscope crawl`: the crawler's frontier,
// live settings and slot states wired to the history writer, and a stored crawl made runnable again.

import type { Settings } from '../../shared/settings';
import type { ChangeRecord, CrawlStatus, EventRecord } from '../../shared/types';
import type { Crawler } from './engine/crawler';
import { NO_META, type CrawlRequest } from './engine/request';
import { slotChanged, snapshotSlot, type FrontierSink, type SavedCrawl, type SlotSnapshot } from './engine/resume';
import type { Slot } from './engine/slot';
import { loadSavedCrawl } from './store/frontier-store';
import { openHistoryReader } from './store/queries';
import { OP_DONE, OP_REQUEUED, OP_STARTED } from './store/history-protocol';
import type { HistoryWriter, StoreBlock } from './store/history-writer';

/** How often every slot's learned state is compared with its last snapshot (user changes are saved at once). */
export const SLOT_SNAPSHOT_MS = 1000;

/** Crawl statuses a crawl can be resumed from (SPEC 6: paused, stopped or interrupted). */
export const RESUMABLE: readonly CrawlStatus[] = ['interrupted', 'paused', 'stopped'];

function metaJson(meta: Record<string, unknown>): string | null {
  if (meta === NO_META) return null;
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
  private storePause: StorePause | null = null;

  constructor(
    private readonly writer: HistoryWriter,
    /** The crawl id; may be set later (runCrawl learns it after building the crawler). */
    public crawlId: number,
    /**
     * With it, the crawl pauses while its history cannot be written (StorePause) and each pause
     * and resumption is said here (the core sends it to the app as a 'warning').
     */
    private readonly sayStore?: (e: EventRecord) => void,
  ) {}

  /** The crawler's onStatus, after the status is recorded (a resume while blocked retries the store at once). */
  onStatus(status: CrawlStatus): void {
    this.storePause?.onStatus(status);
  }

  /** The crawl is ending (quitting): never resumed by the store again. */
  ended(): void {
    this.storePause?.ended();
  }

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

  /** Starts the periodic slot snapshots (and the store pause, when the constructor got `sayStore`). */
  attach(crawler: Crawler): void {
    this.crawler = crawler;
    this.timer = setInterval(() => this.snapshotAll(), SLOT_SNAPSHOT_MS);
    this.timer.unref();
    if (this.sayStore) {
      this.storePause = new StorePause(this.writer, crawler, this.sayStore);
      this.storePause.attach();
    }
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
    this.storePause?.detach();
    this.storePause = null;
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

/** What StorePause needs of a crawl (a Crawler). */
export interface PausableCrawl {
  readonly status: CrawlStatus;
  readonly now: number;
  pause(): void;
  resume(): void;
}

/**
 * Pauses a crawl while its history cannot be written (the writer is 'blocked': a full disk, a
 * lock held by another program, a read-only or failing disk, or too many records waiting) and
 * resumes it once it can, so nothing fetched is ever left unrecorded and no new request starts
 * meanwhile. Each pause and resumption is said through `say` as an event (code `store-paused`,
 * kind 'error' for a fault, 'info' for a slow disk; then `store-resumed`): the hosts print it, send
 * it to the app as a 'warning' and record it in the crawl's log (written once the store can write).
 * The user's resume while blocked makes the writer retry at once; if that fails too, it pauses again.
 */
export class StorePause {
  /** True while the crawl is paused because of the store (and so is resumed when it can write). */
  private holding = false;
  private attached = false;
  private over = false;
  private readonly onBlocked = (b: StoreBlock): void => this.blocked(b);
  private readonly onUnblocked = (u: { ms: number }): void => this.unblocked(u.ms);

  constructor(
    private readonly writer: HistoryWriter,
    private readonly crawl: PausableCrawl,
    private readonly say: (e: EventRecord) => void,
  ) {}

  /** Starts watching (after the crawl started); pauses at once if the store is blocked already. */
  attach(): void {
    if (this.attached) return;
    this.attached = true;
    this.writer.on('blocked', this.onBlocked);
    this.writer.on('unblocked', this.onUnblocked);
    const b = this.writer.blocked;
    if (b !== null) this.blocked(b);
  }

  detach(): void {
    if (!this.attached) return;
    this.attached = false;
    this.writer.off('blocked', this.onBlocked);
    this.writer.off('unblocked', this.onUnblocked);
  }

  /**
   * The crawl has ended (finished, stopped, or paused to quit): it is never resumed from here
   * again, and a block is only said (its last records wait to be written).
   */
  ended(): void {
    this.holding = false;
    this.over = true;
  }

  /** Whether the crawl is paused for the store now. */
  get paused(): boolean {
    return this.holding && this.crawl.status === 'paused';
  }

  /** The crawl's onStatus: a resume while the store is blocked is the user's word to retry now. */
  onStatus(status: CrawlStatus): void {
    if (!this.attached || this.over || status !== 'running' || this.writer.blocked === null) return;
    this.holding = false;
    this.writer.retryNow();
  }

  private blocked(b: StoreBlock): void {
    const status = this.crawl.status;
    let what: string;
    if (this.over) {
      what = `crawl ${status}, its last records waiting to be written`;
    } else if (status === 'running') {
      this.crawl.pause();
      this.holding = true;
      what = 'crawl paused (no new request starts; those in flight finish and are kept)';
    } else if (status === 'paused') {
      what = this.holding ? 'crawl still paused' : 'crawl paused already';
    } else {
      what = `crawl ${status}, its last records waiting to be written`;
    }
    const then = this.over
      ? 'Waiting for the history; nothing is marked done before it is written.'
      : b.kind === 'behind'
        ? 'It resumes by itself once the writer has caught up.'
        : 'Nothing is lost: every record waits in memory and the crawl resumes by itself once the history can be written (or when you resume it).';
    this.say({
      t: this.crawl.now, slot: null, kind: b.kind === 'behind' ? 'info' : 'error', code: 'store-paused',
      text: `${what}: ${b.text}. ${then}`,
      data: { kind: b.kind, pending: b.pending, since: b.since },
    });
  }

  private unblocked(ms: number): void {
    const resume = !this.over && this.holding && this.crawl.status === 'paused';
    this.holding = false;
    if (resume) this.crawl.resume();
    const status = this.crawl.status;
    this.say({
      t: this.crawl.now, slot: null, kind: 'info', code: 'store-resumed',
      text: `the history of ${this.writer.file} can be written again after ${(ms / 1000).toFixed(1)} s; ` +
        (resume ? 'crawl resumed' : status === 'paused' ? 'the crawl stays paused (paused by the user)' : status === 'running' ? 'the crawl runs on' : `crawl ${status}`),
      data: { ms },
    });
  }
}

/**
 * Loads a stored crawl for resuming: crash accounting on the writer (in-flight URLs of the
 * previous run counted, given up at their second), then its frontier, slot states and totals.
 * Throws a clear Error when the crawl has no saved frontier.
 */
export async function loadForResume(writer: HistoryWriter, crawlId: number): Promise<SavedCrawl> {
  const reader = openHistoryReader(writer.file);
  const mark = reader.getCrawl(crawlId)?.shared ?? null;
  reader.close();
  // Its frontier is in Redis and workers may still hold it: here it would be a second client beside them.
  if (mark !== null) {
    throw new Error(`crawl ${crawlId} is a shared crawl (its frontier and politeness live in the Redis at ${mark.redis}): resumed in one process it would be a second client beside its workers; continue it with --redis (\`slotscope serve --redis URL\`, or \`slotscope crawl --db FILE --resume ${crawlId} --redis URL\`)`);
  }
  const accounting = await writer.resumeFrontier(crawlId);
  const saved = loadSavedCrawl(writer.file, crawlId, accounting);
  for (const _ of saved.seen) return saved;
  throw new Error(`crawl ${crawlId} has no saved frontier (recorded by a Slotscope without crash-safe resume); duplicate it to crawl again`);
}
