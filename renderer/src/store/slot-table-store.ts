// The live slot table of one open crawl: rows kept in a Map keyed by slot key, replaced by the
// 'slots.snapshot' answer and patched by 'slots.update' tuples (only changed rows travel).

import { SLOT_COLUMNS, type SlotTuple } from '../../../shared/contract';
import { FrameStore, type Scheduler } from './frame-store';

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
const STATE_RANK: Readonly<Record<string, number>> = { blocked: 0, backoff: 1, paused: 2, active: 3, waiting: 4, idle: 5 };

function sortValue(row: SlotTuple, column: SlotColumn): number | string | null {
  if (column === 'state') return STATE_RANK[row[col.state]] ?? 9;
  const v = row[col[column]];
  return typeof v === 'number' || typeof v === 'string' ? v : null;
}

function compare(a: SlotTuple, b: SlotTuple, sort: SlotSort): number {
  const x = sortValue(a, sort.column);
  const y = sortValue(b, sort.column);
  // Empty values go last whichever the direction; ties fall back to the key, always ascending.
  if (x === null || y === null) {
    if (x !== y) return x === null ? 1 : -1;
  } else if (x !== y) {
    const d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return sort.direction === 'asc' ? d : -d;
  }
  return a[col.key].localeCompare(b[col.key]);
}

export class SlotTableStore extends FrameStore {
  private readonly rows = new Map<string, SlotTuple>();
  private sorted: { version: number; sort: SlotSort; keys: readonly string[] } | null = null;
  private synced = false;

  constructor(readonly crawlId: number, schedule?: Scheduler) {
    super(schedule);
  }

  /** The row of a slot (the tuple as received: a new reference whenever the row changed). */
  row(key: string): SlotTuple | undefined {
    return this.rows.get(key);
  }

  size(): number {
    return this.rows.size;
  }

  /** True once a snapshot or an update arrived. */
  hasData(): boolean {
    return this.synced;
  }

  /** Slot keys in `sort` order; computed once per notified version and sort. */
  sortedKeys(sort: SlotSort): readonly string[] {
    const version = this.getVersion();
    const s = this.sorted;
    if (s && s.version === version && s.sort.column === sort.column && s.sort.direction === sort.direction) return s.keys;
    const keys = [...this.rows.values()].sort((a, b) => compare(a, b, sort)).map((r) => r[col.key]);
    this.sorted = { version, sort, keys };
    return keys;
  }

  /** A full snapshot: the rows it has, and no others. */
  replaceAll(rows: readonly SlotTuple[]): void {
    this.rows.clear();
    for (const r of rows) this.rows.set(r[col.key], r);
    this.synced = true;
    this.changed();
  }

  /** Changed rows (an update, or a slot command's answer). */
  apply(rows: readonly SlotTuple[]): void {
    for (const r of rows) this.rows.set(r[col.key], r);
    this.synced = true;
    this.changed();
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
