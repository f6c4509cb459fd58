// A request on its way through the crawl, and the per-slot queue that keeps requests FIFO
// within priority (higher priority first), with O(1) push and shift.

export interface CrawlRequest {
  /** Canonical absolute URL. */
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
  /** When it entered its slot's queue (epoch ms). */
  enqueuedAt: number;
  /** Slot key, set when queued. */
  slotKey: string;
  /** Lane in use while in flight, −1 otherwise. */
  lane: number;
}

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
}
