// A request on its way through the crawl, and the per-slot queue that keeps requests FIFO
// within priority (higher priority first), with O(1) push and shift.

export interface CrawlRequest {
  /** Absolute URL as the seed or link gave it (fragment dropped): sent byte for byte; de-duplicated by its canonical key. */
  readonly url: string;
  /** `scheme://host:port` and path+query, precomputed for the HTTP client. */
  readonly origin: string;
  readonly path: string;
  /** Lower-cased hostname without brackets. */
  readonly host: string;
  readonly method: string;
  readonly depth: number;
  readonly priority: number;
  readonly meta: Record<string, unknown>;
  /** Redirects followed to reach this URL. */
  readonly redirects: number;
  /** Times this request was retried after backoff feedback. */
  readonly retries: number;
  /** robots.txt fetch (not a page of the crawl). */
  readonly robots: boolean;
  /** Scopes beyond the slot (SPEC 5.1): meta.throttling_scopes, scope rules, the plug-in. */
  readonly scopeKeys: readonly string[];
  /** Expected quota cost per scope key (1 where absent). */
  readonly costs: Readonly<Record<string, number>> | null;
  /** Quota window (its start, epoch ms) each cost was taken from, for settling the actual cost. */
  quotaWindows: Record<string, number> | null;
  /** When it entered its slot's queue (epoch ms). */
  enqueuedAt: number;
  /** Slot key, set when queued. */
  slotKey: string;
  /** Lane in use while in flight, −1 otherwise. */
  lane: number;
  /** Acceptance number of a page in the crawl's frontier (crash-safe resume); −1 for robots.txt; absent in hand-made requests. */
  readonly seq?: number;
}

/**
 * The meta of a request that has none: one frozen object shared by every such request instead of
 * an empty object each (a queued request is kept until it starts, so each costs memory and GC
 * copying). Meta is read, never written, by the engine and plug-ins (their API gives it read-only);
 * a request with meta gets a copy (redirects add download_slot to a copy).
 */
export const NO_META: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** Growable ring buffer. */
class Deque<T> {
  private buf: (T | undefined)[] = new Array(4);
  private head = 0;
  size = 0;

  push(x: T): void {
    if (this.size === this.buf.length) this.grow();
    this.buf[(this.head + this.size) & (this.buf.length - 1)] = x;
    this.size++;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const x = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & (this.buf.length - 1);
    this.size--;
    return x;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.size; i++) yield this.buf[(this.head + i) & (this.buf.length - 1)] as T;
  }

  at(i: number): T | undefined {
    return i < this.size ? this.buf[(this.head + i) & (this.buf.length - 1)] : undefined;
  }

  /** Removes the i-th item, keeping the order of the rest. */
  removeAt(i: number): T | undefined {
    if (i >= this.size) return undefined;
    const mask = this.buf.length - 1;
    const x = this.buf[(this.head + i) & mask];
    for (let j = i; j > 0; j--) this.buf[(this.head + j) & mask] = this.buf[(this.head + j - 1) & mask];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & mask;
    this.size--;
    return x;
  }

  private grow(): void {
    const next: (T | undefined)[] = new Array(this.buf.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = this.buf[(this.head + i) & (this.buf.length - 1)];
    this.buf = next;
    this.head = 0;
  }
}

export { Deque };

/** FIFO within priority; most slots only ever see priority 0, which stays a single deque. */
export class RequestQueue {
  private levels: { priority: number; items: Deque<CrawlRequest> }[] = [];
  size = 0;

  push(req: CrawlRequest): void {
    let i = 0;
    while (i < this.levels.length && this.levels[i].priority > req.priority) i++;
    if (i === this.levels.length || this.levels[i].priority !== req.priority) {
      this.levels.splice(i, 0, { priority: req.priority, items: new Deque() });
    }
    this.levels[i].items.push(req);
    this.size++;
  }

  shift(): CrawlRequest | undefined {
    for (let i = 0; i < this.levels.length; i++) {
      const level = this.levels[i];
      if (level.items.size > 0) {
        this.size--;
        const req = level.items.shift();
        if (level.items.size === 0 && this.levels.length > 1) this.levels.splice(i, 1);
        return req;
      }
    }
    return undefined;
  }

  *[Symbol.iterator](): IterableIterator<CrawlRequest> {
    for (const level of this.levels) yield* level.items;
  }

  /** The request shift() would return. */
  peek(): CrawlRequest | undefined {
    for (const level of this.levels) if (level.items.size > 0) return level.items.at(0);
    return undefined;
  }

  /**
   * Among the first `scan` requests of the highest priority, the one with the highest score
   * (ties: the earliest); requests scoring -Infinity are skipped. Removes and returns it.
   */
  takeBest(scan: number, score: (r: CrawlRequest) => number): CrawlRequest | undefined {
    const level = this.levels.find((l) => l.items.size > 0);
    if (!level) return undefined;
    let best = -1;
    let bestScore = -Infinity;
    const n = Math.min(scan, level.items.size);
    for (let i = 0; i < n; i++) {
      const sc = score(level.items.at(i)!);
      if (sc > bestScore) {
        best = i;
        bestScore = sc;
      }
    }
    if (best < 0) return undefined;
    this.size--;
    const req = level.items.removeAt(best);
    if (level.items.size === 0 && this.levels.length > 1) this.levels.splice(this.levels.indexOf(level), 1);
    return req;
  }
}
