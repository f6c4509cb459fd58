// The live slot table of one open crawl: rows kept in a Map keyed by slot key, replaced by the
// 'slots.snapshot' answer and patched by 'slots.update' tuples (only changed rows travel).
// Beside it, the table's view (sort, filters, rows pinned to the top), computed outside React.

import { SLOT_COLUMNS, SLOT_STATES, type SlotState, type SlotTuple } from '../../../shared/contract';
import type { DelayCause } from '../../../shared/types';
import { afterFrame, FrameStore, type ReadableStore, type Scheduler } from './frame-store';
import { sameItems } from './use-store';

export type SlotColumn = (typeof SLOT_COLUMNS)[number];

/** The position of `V` in the tuple `T`, as a literal type. */
type IndexOf<T extends readonly unknown[], V, Seen extends unknown[] = []> = T extends readonly [infer H, ...infer R]
  ? H extends V
    ? Seen['length']
    : IndexOf<R, V, [...Seen, H]>
  : never;

/** Index of each column in a slot tuple, typed so that `row[col.delay]` is a number. */
export const col = Object.fromEntries(SLOT_COLUMNS.map((name, i) => [name, i])) as unknown as {
  readonly [K in SlotColumn]: IndexOf<typeof SLOT_COLUMNS, K>;
};

/** A value of a row by column name, typed. */
export function cell<K extends SlotColumn>(row: SlotTuple, name: K): SlotTuple[IndexOf<typeof SLOT_COLUMNS, K>] {
  return row[col[name]];
}

export type SortDirection = 'asc' | 'desc';

export interface SlotSort {
  readonly column: SlotColumn;
  readonly direction: SortDirection;
}

/** States in the order "needs a look first" when sorting by state. */
const STATE_RANK: Readonly<Record<SlotState, number>> = { blocked: 0, backoff: 1, paused: 2, active: 3, waiting: 4, idle: 5 };

/** Causes in the order "slowest reason first" when sorting by what sets the delay. */
const CAUSE_RANK: Readonly<Record<DelayCause, number>> = {
  'retry-after': 0, backoff: 1, pin: 2, 'crawl-delay': 3, ratelimit: 4, rampup: 5, autothrottle: 6, floor: 7, none: 8,
};

/** "host-2" before "host-10": lower case, digit runs padded. */
function naturalKey(s: string): string {
  return s.toLowerCase().replace(/\d+/g, (d) => d.padStart(12, '0'));
}

export class SlotTableStore extends FrameStore {
  private readonly rows = new Map<string, SlotTuple>();
  private synced = false;
  /** Moves when a slot is added or removed (the key order then needs recomputing). */
  private keySet = 0;
  private keyOrder: { readonly keySet: number; readonly rank: ReadonlyMap<string, number> } | null = null;
  private readonly lower = new Map<string, string>();
  private viewValue: SlotTableView | null = null;
  /** Rows the user keeps on top of the table, remembered per crawl in localStorage. */
  readonly pins: PinnedRows;
  /** The host's clock, which the rows' times (nextStartAt) are on. */
  readonly clock = new HostClock();

  constructor(readonly crawlId: number, schedule?: Scheduler, storage: Storage | null = defaultStorage()) {
    super(schedule);
    this.pins = new PinnedRows(crawlId, storage);
  }

  /** The row of a slot (the tuple as received: a new reference whenever the row changed). */
  row(key: string): SlotTuple | undefined {
    return this.rows.get(key);
  }

  size(): number {
    return this.rows.size;
  }

  /** Every row, in arrival order. */
  allRows(): IterableIterator<SlotTuple> {
    return this.rows.values();
  }

  /** True once a snapshot or an update arrived. */
  hasData(): boolean {
    return this.synced;
  }

  /** Moves when slots come or go (not when their figures change). */
  keySetVersion(): number {
    return this.keySet;
  }

  /** The table's sort, filters and ordered keys (one per table, kept while the crawl stays open). */
  view(): SlotTableView {
    return (this.viewValue ??= new SlotTableView(this));
  }

  /** The key in lower case (cached: keys never change). */
  lowerKey(key: string): string {
    let l = this.lower.get(key);
    if (l === undefined) this.lower.set(key, (l = key.toLowerCase()));
    return l;
  }

  /** Each key's place in natural key order, recomputed only when slots came or went. */
  keyRank(): ReadonlyMap<string, number> {
    if (this.keyOrder && this.keyOrder.keySet === this.keySet) return this.keyOrder.rank;
    const keys = [...this.rows.keys()].map((k) => [naturalKey(k), k] as const);
    keys.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const rank = new Map<string, number>();
    keys.forEach(([, k], i) => rank.set(k, i));
    this.keyOrder = { keySet: this.keySet, rank };
    return rank;
  }

  /** A full snapshot: the rows it has, and no others; `hostNow`: the host's clock when it was taken. */
  replaceAll(rows: readonly SlotTuple[], hostNow?: number): void {
    if (hostNow !== undefined) this.clock.sync(hostNow);
    this.rows.clear();
    for (const r of rows) this.rows.set(r[col.key], r);
    this.keySet++;
    this.synced = true;
    this.changed();
  }

  /** Changed rows (an update, with the host's clock when it was computed, or a slot command's answer). */
  apply(rows: readonly SlotTuple[], hostNow?: number): void {
    if (hostNow !== undefined) this.clock.sync(hostNow);
    const before = this.rows.size;
    for (const r of rows) this.rows.set(r[col.key], r);
    if (this.rows.size !== before) this.keySet++;
    this.synced = true;
    this.changed();
  }
}

function defaultStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled by the browser
  }
}

/** A store whose listeners run at once (it changes on user input, or inside a frame store's frame). */
class SyncStore implements ReadableStore {
  private version = 0;
  private readonly listeners = new Set<() => void>();

  readonly subscribe = (listener: () => void): (() => void) => {
    const first = this.listeners.size === 0;
    this.listeners.add(listener);
    if (first) this.firstSubscribed();
    return () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.lastUnsubscribed();
    };
  };

  readonly getVersion = (): number => this.version;

  protected firstSubscribed(): void {}
  protected lastUnsubscribed(): void {}

  protected notify(): void {
    this.version++;
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (e) {
        console.error('slotscope: a store subscriber threw', e);
      }
    }
  }
}

/** How often a shown countdown moves (ms). */
export const CLOCK_TICK_MS = 100;

const localNow = (): number => performance.timeOrigin + performance.now();

/**
 * The host's clock as this window sees it: the last host time received, carried forward by the
 * local clock (a host on another machine may be set differently). While anything subscribes, it
 * moves every CLOCK_TICK_MS, so countdowns against it re-render without any new row arriving.
 */
export class HostClock extends SyncStore {
  /** Host time minus local time, ms (0 until the host said its time). */
  private skew = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly local: () => number = localNow) {
    super();
  }

  /** The host's time now, epoch ms. */
  now(): number {
    return this.local() + this.skew;
  }

  /** The host said its time (rows computed at `hostNow` just arrived). */
  sync(hostNow: number): void {
    if (Number.isFinite(hostNow)) this.skew = hostNow - this.local();
  }

  protected override firstSubscribed(): void {
    this.timer = setInterval(() => this.notify(), CLOCK_TICK_MS);
  }

  protected override lastUnsubscribed(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

const PINS_PREFIX = 'slotscope.pinned-rows.';

/** Slot keys pinned to the top of one crawl's table, persisted in localStorage under the crawl's id. */
export class PinnedRows extends SyncStore {
  private keys: ReadonlySet<string>;

  constructor(readonly crawlId: number, private readonly storage: Storage | null) {
    super();
    this.keys = new Set(readPins(storage, crawlId));
  }

  current(): ReadonlySet<string> {
    return this.keys;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  toggle(key: string): void {
    const next = new Set(this.keys);
    if (!next.delete(key)) next.add(key);
    this.keys = next;
    try {
      if (next.size === 0) this.storage?.removeItem(PINS_PREFIX + this.crawlId);
      else this.storage?.setItem(PINS_PREFIX + this.crawlId, JSON.stringify([...next]));
    } catch {
      /* storage full or disabled: the pin holds for this window only */
    }
    this.notify();
  }
}

function readPins(storage: Storage | null, crawlId: number): string[] {
  try {
    const raw = storage?.getItem(PINS_PREFIX + crawlId);
    const v: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Forgets the pinned rows of a crawl (it was deleted). */
export function forgetPinnedRows(crawlId: number, storage: Storage | null = defaultStorage()): void {
  try {
    storage?.removeItem(PINS_PREFIX + crawlId);
  } catch {
    /* nothing to forget */
  }
}

/** What the table shows: the sort, a key substring, and the states let through (empty: all). */
export interface SlotQuery {
  readonly sort: SlotSort;
  readonly text: string;
  readonly states: ReadonlySet<SlotState>;
}

export interface SlotViewResult {
  /** Keys to show, in order: pinned rows first, each part in sort order. */
  readonly keys: readonly string[];
  /** Slots in the table. */
  readonly total: number;
  /** Pinned rows shown on top (the first `pinnedShown` keys). */
  readonly pinnedShown: number;
  /** Pinned rows the filters hide. */
  readonly pinnedHidden: number;
  /** Rows per state among those matching the text filter (what each state button would show). */
  readonly stateCounts: Readonly<Record<SlotState, number>>;
}

export const DEFAULT_SORT: SlotSort = { column: 'key', direction: 'asc' };

const NO_STATES: ReadonlySet<SlotState> = new Set();
const EMPTY: SlotViewResult = {
  keys: [], total: 0, pinnedShown: 0, pinnedHidden: 0,
  stateCounts: { active: 0, waiting: 0, backoff: 0, paused: 0, blocked: 0, idle: 0 },
};

/** The number a row sorts by in `column` (NaN when it has none: such rows go last). */
function sortNumber(row: SlotTuple, column: SlotColumn): number {
  switch (column) {
    case 'state':
      return STATE_RANK[row[col.state]] ?? 9;
    case 'cause':
      return CAUSE_RANK[row[col.cause]] ?? 9;
    default: {
      const v = row[col[column]];
      return typeof v === 'number' ? v : NaN;
    }
  }
}

/**
 * The ordered keys of a table under a query. Filters first, then a numeric sort over typed arrays
 * (text columns through ranks), ties broken by key order, so equal rows never swap places.
 */
export function orderSlots(table: SlotTableStore, query: SlotQuery, pins: ReadonlySet<string>): SlotViewResult {
  const rank = table.keyRank();
  const text = query.text.trim().toLowerCase();
  const states = query.states;
  const counts: Record<SlotState, number> = { active: 0, waiting: 0, backoff: 0, paused: 0, blocked: 0, idle: 0 };
  const picked: SlotTuple[] = [];
  let pinnedHidden = 0;
  for (const row of table.allRows()) {
    const key = row[col.key];
    if (text !== '' && !table.lowerKey(key).includes(text)) {
      if (pins.has(key)) pinnedHidden++;
      continue;
    }
    const state = row[col.state];
    counts[state]++;
    if (states.size > 0 && !states.has(state)) {
      if (pins.has(key)) pinnedHidden++;
      continue;
    }
    picked.push(row);
  }
  const n = picked.length;
  const ranks = new Int32Array(n);
  const values = new Float64Array(n);
  const byKey = query.sort.column === 'key';
  for (let i = 0; i < n; i++) {
    const r = picked[i];
    ranks[i] = rank.get(r[col.key]) ?? 0;
    values[i] = byKey ? ranks[i] : sortNumber(r, query.sort.column);
  }
  const dir = query.sort.direction === 'asc' ? 1 : -1;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((i, j) => {
    const a = values[i];
    const b = values[j];
    if (a !== b) {
      const an = a !== a;
      const bn = b !== b;
      if (an || bn) {
        if (!(an && bn)) return an ? 1 : -1;
      } else {
        return dir * (a - b);
      }
    }
    return ranks[i] - ranks[j];
  });
  const top: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = picked[order[i]][col.key];
    (pins.has(key) ? top : rest).push(key);
  }
  const pinnedShown = top.length;
  for (const k of rest) top.push(k);
  return { keys: top, total: table.size(), pinnedShown, pinnedHidden, stateCounts: counts };
}

function sameCounts(a: Readonly<Record<SlotState, number>>, b: Readonly<Record<SlotState, number>>): boolean {
  return SLOT_STATES.every((s) => a[s] === b[s]);
}

/** Live data re-orders the rows at most this often (ms); a new sort, filter or pin does at once. */
export const RESORT_MS = 250;

/** Rows per state among the rows whose key contains `text` (lower case). */
function countStates(table: SlotTableStore, text: string): Record<SlotState, number> {
  const counts: Record<SlotState, number> = { active: 0, waiting: 0, backoff: 0, paused: 0, blocked: 0, idle: 0 };
  for (const row of table.allRows()) {
    if (text === '' || table.lowerKey(row[col.key]).includes(text)) counts[row[col.state]]++;
  }
  return counts;
}

/**
 * The table as shown: the query and the keys it orders, recomputed when the rows change (inside
 * the table store's frame) or the query does (inside the input handler), never during a render.
 * The result keeps its identity while nothing in it changed, so the grid re-renders only when needed.
 * Live figures move rows at most every RESORT_MS (their cells still update every frame), and not
 * at all when the order cannot change (sorted by key, no state filter, the same slots).
 */
export class SlotTableView extends SyncStore {
  private query: SlotQuery = { sort: DEFAULT_SORT, text: '', states: NO_STATES };
  private resultValue: SlotViewResult = EMPTY;
  /** Versions the result was computed at (-1: never). */
  private at = { table: -1, pins: -1, keySet: -1, query: null as SlotQuery | null };
  private lastFull = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** A re-sort waits for the end of a frame (afterFrame). */
  private queued = false;
  private offs: (() => void)[] = [];

  constructor(
    private readonly table: SlotTableStore,
    private readonly now: () => number = () => performance.now(),
    private readonly afterPaint: Scheduler = afterFrame,
  ) {
    super();
  }

  current(): SlotQuery {
    return this.query;
  }

  /** The ordered keys and counts; brought up to date first if nobody was listening. */
  result(): SlotViewResult {
    if (this.offs.length === 0) this.refresh();
    return this.resultValue;
  }

  setSort(sort: SlotSort): void {
    this.setQuery({ ...this.query, sort });
  }

  setText(text: string): void {
    if (text !== this.query.text) this.setQuery({ ...this.query, text });
  }

  setStates(states: ReadonlySet<SlotState>): void {
    this.setQuery({ ...this.query, states });
  }

  /** The query is part of what the view shows (the sort arrow, the filter box): always a change. */
  private setQuery(q: SlotQuery): void {
    this.query = q;
    this.refresh();
    this.notify();
  }

  protected override firstSubscribed(): void {
    const now = () => {
      if (this.refresh()) this.notify();
    };
    this.offs = [this.table.subscribe(this.onData), this.table.pins.subscribe(now)];
    now();
  }

  protected override lastUnsubscribed(): void {
    for (const off of this.offs) off();
    this.offs = [];
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** New figures: counts at once; the order when it can change, at most every RESORT_MS. */
  private readonly onData = (): void => {
    const q = this.query;
    if (this.at.query === q && this.at.pins === this.table.pins.getVersion() && this.at.keySet === this.table.keySetVersion() &&
      q.sort.column === 'key' && q.states.size === 0) {
      if (this.refreshCounts()) this.notify();
      return;
    }
    if (this.queued || this.timer !== null) return;
    // The re-sort of 10,000 rows runs right after a frame, in the frame's idle end, not inside it.
    const resort = () => {
      this.queued = true;
      this.afterPaint(() => {
        this.queued = false;
        if (this.offs.length > 0 && this.refresh()) this.notify();
      });
    };
    const wait = this.lastFull + RESORT_MS - this.now();
    if (wait <= 0) resort();
    else {
      this.timer = setTimeout(() => {
        this.timer = null;
        resort();
      }, Math.ceil(wait));
    }
  };

  /** Only the state counts (the order holds); true when they changed. */
  private refreshCounts(): boolean {
    this.at = { ...this.at, table: this.table.getVersion() };
    const counts = countStates(this.table, this.query.text.trim().toLowerCase());
    if (sameCounts(counts, this.resultValue.stateCounts)) return false;
    this.resultValue = { ...this.resultValue, stateCounts: counts };
    return true;
  }

  /** Recomputes when anything it depends on moved; true when the result changed. */
  private refresh(): boolean {
    const tv = this.table.getVersion();
    const pv = this.table.pins.getVersion();
    if (this.at.table === tv && this.at.pins === pv && this.at.query === this.query) return false;
    this.at = { table: tv, pins: pv, keySet: this.table.keySetVersion(), query: this.query };
    this.lastFull = this.now();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const next = orderSlots(this.table, this.query, this.table.pins.current());
    const prev = this.resultValue;
    const keys = sameItems(prev.keys, next.keys) ? prev.keys : next.keys;
    const stateCounts = sameCounts(prev.stateCounts, next.stateCounts) ? prev.stateCounts : next.stateCounts;
    if (keys === prev.keys && stateCounts === prev.stateCounts && next.total === prev.total &&
      next.pinnedShown === prev.pinnedShown && next.pinnedHidden === prev.pinnedHidden) return false;
    this.resultValue = { ...next, keys, stateCounts };
    return true;
  }
}

/** The slot tables of the crawls opened so far, by crawl id. */
export class SlotTables {
  private readonly tables = new Map<number, SlotTableStore>();

  /** The table of a crawl, created empty when it is opened for the first time. */
  open(crawlId: number): { table: SlotTableStore; created: boolean } {
    const existing = this.tables.get(crawlId);
    if (existing) return { table: existing, created: false };
    const table = new SlotTableStore(crawlId);
    this.tables.set(crawlId, table);
    return { table, created: true };
  }

  get(crawlId: number): SlotTableStore | undefined {
    return this.tables.get(crawlId);
  }

  ids(): number[] {
    return [...this.tables.keys()];
  }
}
