// The Requests tab's rows, outside React: blocks of 100 rows fetched by 'requests.page' as the list
// scrolls (by keyset after the previous block, or by offset for a jump), anchored at the crawl's
// newest row so the indexes stay put while new rows arrive; the tab re-anchors when told to.

import type { RequestCursor, RequestFilter, RequestOrder, RequestPage, RequestRow } from '../../../../shared/contract';
import { FrameStore } from '../../store/frame-store';
import { toAppError, type Transport } from '../../transport/transport';

/** Rows per block (one 'requests.page' each, or a few when a filter reads a bounded number of rows per call). */
export const BLOCK = 100;
/** Blocks fetched beyond the visible ones, in the direction of travel. */
const AHEAD = 1;
/** Blocks kept around the visible ones; farther ones are dropped (a list of millions never sits in memory). */
const KEEP = 40;

export interface RequestsQuery {
  readonly order: RequestOrder;
  readonly filter: RequestFilter;
}

interface Block {
  rows: RequestRow[];
  /** Where the next block starts: after the last row, or after the last row read when the filter reads a bounded number. */
  end: RequestCursor | null;
  /** The data ended inside this block. */
  last: boolean;
  loading: boolean;
}

export interface RequestsStatus {
  readonly anchored: boolean;
  readonly loading: boolean;
  readonly error: string | null;
  /** Rows matching the filter up to the anchor; null when not known (a URL text) until the end is reached. */
  readonly total: number | null;
  /** Rows recorded since the anchor (newest first, not following). */
  readonly newer: number;
  /** Rows found so far when the total is not known; `complete` once the end was reached. */
  readonly found: number;
  readonly complete: boolean;
  /** Milliseconds the anchoring request took (host round trip included). */
  readonly anchorMs: number | null;
}

const sameFilter = (a: RequestFilter, b: RequestFilter) =>
  a.statusClass === b.statusClass && a.slot === b.slot && a.errorKind === b.errorKind && (a.text ?? '') === (b.text ?? '');

export class RequestsStore extends FrameStore {
  private q: RequestsQuery = { order: 'newest', filter: {} };
  private gen = 0;
  private head: RequestCursor | null = null;
  private totalValue: number | null = null;
  private seekable = false;
  private blocks = new Map<number, Block>();
  /** Index past the last row, once a page said the data ended. */
  private endIndex: number | null = null;
  private anchored = false;
  private anchoring = false;
  private error: string | null = null;
  private newerRows = 0;
  private anchorMs: number | null = null;
  private wanted: [number, number] = [0, 0];
  private following = true;
  private refreshing = false;
  /** A refresh asked for while one was on its way: run once more after it (the crawl's last rows). */
  private refreshAgain = false;
  private disposed = false;
  /** Bumped whenever rows or the list's length change (views select on it). */
  private rowsVersion = 0;
  /** Bumped at every new anchor (a new filter, the newest rows taken): the list goes back to its top. */
  private anchorCount = 0;

  constructor(private readonly transport: Transport, readonly crawlId: number) {
    super();
  }

  query(): RequestsQuery {
    return this.q;
  }

  /** A new order or filter: the list starts again from the newest (or oldest) row. */
  setQuery(q: RequestsQuery): void {
    if (q.order === this.q.order && sameFilter(q.filter, this.q.filter) && (this.anchored || this.anchoring)) return;
    this.q = q;
    void this.anchor();
  }

  status(): RequestsStatus {
    return {
      anchored: this.anchored, loading: this.anchoring || [...this.blocks.values()].some((b) => b.loading), error: this.error,
      total: this.totalValue, newer: this.newerRows, anchorMs: this.anchorMs,
      found: this.endIndex ?? this.loadedRows(), complete: this.endIndex !== null,
    };
  }

  /** Rows in the blocks read in a row from the first. */
  private loadedRows(): number {
    let n = 0;
    for (let b = 0; ; b++) {
      const block = this.blocks.get(b);
      if (!block) return n;
      n += block.rows.length;
      if (block.rows.length < BLOCK) return n;
    }
  }

  rowsChanged(): number {
    return this.rowsVersion;
  }

  anchors(): number {
    return this.anchorCount;
  }

  /** Rows in the list as shown: the total when known, else what is loaded plus a block still to come. */
  length(): number {
    if (!this.anchored) return 0;
    if (this.totalValue !== null) return this.endIndex !== null ? Math.min(this.totalValue, this.endIndex) : this.totalValue;
    if (this.endIndex !== null) return this.endIndex;
    let n = 0;
    for (let b = 0; ; b++) {
      const block = this.blocks.get(b);
      if (!block || block.rows.length < BLOCK) return n + (block?.rows.length ?? 0) + BLOCK;
      n += BLOCK;
    }
  }

  /** The row at `index`, or null while it is not loaded. */
  row(index: number): RequestRow | null {
    return this.blocks.get(Math.floor(index / BLOCK))?.rows[index % BLOCK] ?? null;
  }

  /** The list shows rows [first, last]: fetch what is missing there (and a block ahead). */
  want(first: number, last: number): void {
    this.wanted = [first, last];
    this.fill();
  }

  /** Whether the view is at the top of a newest-first list (new rows then take the top at once). */
  setFollowing(on: boolean): void {
    if (this.following === on) return;
    this.following = on;
    if (on && this.newerRows > 0 && this.q.order === 'newest') void this.anchor();
  }

  /** Shows the rows recorded since the anchor (the list starts again at the newest). */
  jumpToNewest(): void {
    void this.anchor();
  }

  /**
   * The crawl recorded more rows (a 'crawl.status' while it runs): a newest-first list at its top
   * takes them at once, one scrolled down counts them; a list by time grows at its end.
   */
  async refresh(): Promise<void> {
    if (this.refreshing) {
      // Not dropped: the refresh on its way may have read before the rows this one is for (the
      // crawl's end, whose rows come after its last status event).
      this.refreshAgain = true;
      return;
    }
    if (!this.anchored || this.anchoring || this.disposed) return;
    const gen = this.gen;
    const takeTop = this.q.order === 'newest' && this.following;
    this.refreshing = true;
    try {
      const p = await this.page({ count: true, limit: takeTop ? BLOCK : 1 });
      if (gen !== this.gen || this.disposed) return;
      const newHead = p.head ?? null;
      if (newHead === null || (this.head && newHead[0] === this.head[0] && newHead[1] === this.head[1])) return;
      if (this.q.order === 'newest') {
        if (takeTop) {
          this.reset(p);
        } else {
          this.newerRows = p.total !== null && p.total !== undefined && this.totalValue !== null ? Math.max(0, p.total - this.totalValue) : this.newerRows + 1;
        }
      } else {
        // By time: rows before the old anchor keep their places; the last, partial block is read again.
        this.head = newHead;
        this.totalValue = p.total ?? null;
        this.endIndex = null;
        for (const [i, block] of [...this.blocks]) if (!block.loading && (block.last || block.rows.length < BLOCK)) this.blocks.delete(i);
        this.fill();
      }
      this.bump();
    } catch {
      // The next status event tries again; what is shown stays.
    } finally {
      this.refreshing = false;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        void this.refresh();
      }
    }
  }

  /** The view stopped showing the store: answers still on their way are dropped. */
  dispose(): void {
    this.disposed = true;
    this.gen++;
    this.anchoring = false;
  }

  /** The view shows the store (again): a store disposed in between reads its list afresh. */
  attach(): void {
    if (!this.disposed) return;
    this.disposed = false;
    this.anchored = false;
    void this.anchor();
  }

  // -------------------------------------------------------------------------------------------

  private bump(): void {
    this.rowsVersion++;
    this.changed();
  }

  private page(extra: { readonly after?: RequestCursor; readonly offset?: number; readonly limit: number; readonly count?: boolean }): Promise<RequestPage> {
    const f = this.q.filter;
    const filter: RequestFilter = {
      ...(f.statusClass ? { statusClass: f.statusClass } : {}), ...(f.slot ? { slot: f.slot } : {}),
      ...(f.errorKind ? { errorKind: f.errorKind } : {}), ...(f.text ? { text: f.text } : {}),
    };
    return this.transport.invoke('requests.page', {
      crawlId: this.crawlId, order: this.q.order, filter,
      ...(extra.count ? { count: true } : this.head ? { until: this.head } : {}),
      ...(extra.after ? { after: extra.after } : {}), ...(extra.offset ? { offset: extra.offset } : {}), limit: extra.limit,
    });
  }

  /** Reads the first block with the total and the newest row, in one snapshot: the list's new anchor. */
  private async anchor(): Promise<void> {
    const gen = ++this.gen;
    this.anchoring = true;
    this.error = null;
    this.changed();
    const started = performance.now();
    try {
      const p = await this.page({ count: true, limit: BLOCK });
      if (gen !== this.gen || this.disposed) return;
      this.anchorMs = performance.now() - started;
      this.reset(p);
      this.fill();
    } catch (e) {
      if (gen !== this.gen || this.disposed) return;
      this.error = toAppError(e).message;
      this.anchoring = false;
      this.bump();
    }
  }

  private reset(p: RequestPage): void {
    this.gen++;
    this.head = p.head ?? null;
    this.totalValue = p.total ?? null;
    this.seekable = p.seekable;
    this.blocks = new Map();
    this.endIndex = null;
    this.newerRows = 0;
    this.anchored = true;
    this.anchoring = false;
    this.anchorCount++;
    this.take(0, { rows: [], end: null, last: false, loading: false }, p);
    this.bump();
  }

  /** Adds a page's rows to a block; notes where the data ended. */
  private take(b: number, block: Block, p: RequestPage): void {
    block.rows = block.rows.length === 0 ? [...p.rows] : block.rows.concat(p.rows);
    block.end = p.next;
    if (p.next === null) {
      block.last = true;
      this.endIndex = b * BLOCK + block.rows.length;
      // Rows the totals counted but the store no longer holds (pruned by retention): the list ends here.
      if (this.totalValue !== null && this.endIndex < this.totalValue) this.totalValue = this.endIndex;
    }
    this.blocks.set(b, block);
  }

  /** Fetches the wanted blocks that are missing or short, and drops those far away. */
  private fill(): void {
    if (!this.anchored || this.disposed) return;
    const [first, last] = this.wanted;
    const len = this.length();
    const fromB = Math.floor(first / BLOCK);
    const toB = Math.min(Math.floor(Math.max(first, last) / BLOCK) + AHEAD, Math.max(0, Math.ceil(len / BLOCK) - 1));
    for (let b = fromB; b <= toB; b++) this.load(b);
    if (this.blocks.size > 2 * KEEP) {
      for (const b of [...this.blocks.keys()]) if (b < fromB - KEEP || b > toB + KEEP) this.blocks.delete(b);
    }
  }

  private load(b: number): void {
    const have = this.blocks.get(b);
    if (have && (have.loading || have.last || have.rows.length >= BLOCK)) return;
    if (this.endIndex !== null && b * BLOCK >= this.endIndex) return;
    let after: RequestCursor | undefined;
    let offset: number | undefined;
    if (have && have.rows.length > 0) {
      after = have.end ?? undefined;
      if (!after) return;
    } else if (b === 0) {
      after = undefined;
    } else {
      const prev = this.blocks.get(b - 1);
      if (prev && !prev.loading && prev.rows.length >= BLOCK && prev.end) after = prev.end;
      else if (this.seekable) offset = b * BLOCK;
      else {
        // Only by keyset: the block before comes first.
        this.load(b - 1);
        return;
      }
    }
    const block: Block = have ?? { rows: [], end: null, last: false, loading: false };
    block.loading = true;
    this.blocks.set(b, block);
    const gen = this.gen;
    this.page({ after, offset, limit: BLOCK - block.rows.length }).then(
      (p) => {
        if (gen !== this.gen || this.disposed) return;
        block.loading = false;
        this.take(b, block, p);
        this.bump();
        this.fill();
      },
      (e) => {
        if (gen !== this.gen || this.disposed) return;
        block.loading = false;
        if (block.rows.length === 0) this.blocks.delete(b);
        this.error = toAppError(e).message;
        this.bump();
      },
    );
  }
}
