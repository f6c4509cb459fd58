// What an export reads besides the rows themselves: the crawl, whether a slot exists, and how many
// rows to expect; on a read-only connection of its own, so a long export never blocks other readers.
import { openDatabase, type Database } from '../database';

/** The crawl an export is about. Times are epoch ms. */
export interface ExportCrawl {
  readonly id: number;
  readonly name: string;
  readonly createdAt: number;
  readonly startedAt: number | null;
}

export interface ExportSource {
  /** A crawl by id, or the newest one (highest id) when `id` is undefined; undefined when none. */
  crawl(id?: number): ExportCrawl | undefined;
  /** Up to `limit` crawl ids, newest first, for error messages. */
  crawlIds(limit: number): number[];
  /** Whether the crawl has a slot with this key. */
  hasSlot(crawlId: number, key: string): boolean;
  /** Up to `limit` slot keys of the crawl, for error messages, and how many there are. */
  someSlots(crawlId: number, limit: number): { keys: string[]; count: number };
  /** Responses of the crawl (one slot, [from, to)) the export will read. */
  count(crawlId: number, slot: string | undefined, from: number, to: number): number;
  close(): void;
}

/** Opens the database read-only for an export's bookkeeping. Throws a clear Error for a missing, corrupt, foreign or newer file. */
export function openExportSource(file: string): ExportSource {
  const db: Database = openDatabase(file, { readonly: true });
  const byId = db.prepare(`SELECT id, name, created_at, started_at FROM crawls WHERE id = ?`).raw();
  const newest = db.prepare(`SELECT id, name, created_at, started_at FROM crawls ORDER BY id DESC LIMIT 1`).raw();
  const ids = db.prepare(`SELECT id FROM crawls ORDER BY id DESC LIMIT ?`).pluck();
  const slotId = db.prepare(`SELECT id FROM slots WHERE crawl_id = ? AND key = ?`).pluck();
  const slotKeys = db.prepare(`SELECT key FROM slots WHERE crawl_id = ? ORDER BY key LIMIT ?`).pluck();
  const slotCount = db.prepare(`SELECT count(*) FROM slots WHERE crawl_id = ?`).pluck();
  const countAll = db.prepare(`SELECT count(*) FROM responses WHERE crawl_id = ? AND t >= ? AND t < ?`).pluck();
  const countSlot = db.prepare(`SELECT count(*) FROM responses WHERE crawl_id = ? AND slot_id = ? AND t >= ? AND t < ?`).pluck();
  const toCrawl = (r: unknown[] | undefined): ExportCrawl | undefined =>
    r && { id: r[0] as number, name: r[1] as string, createdAt: r[2] as number, startedAt: r[3] as number | null };
  return {
    crawl: (id) => toCrawl((id === undefined ? newest.get() : byId.get(id)) as unknown[] | undefined),
    crawlIds: (limit) => ids.all(limit) as number[],
    hasSlot: (crawlId, key) => slotId.get(crawlId, key) !== undefined,
    someSlots: (crawlId, limit) => ({ keys: slotKeys.all(crawlId, limit) as string[], count: slotCount.get(crawlId) as number }),
    count: (crawlId, slot, from, to) => {
      if (slot === undefined) return countAll.get(crawlId, from, to) as number;
      const id = slotId.get(crawlId, slot) as number | undefined;
      return id === undefined ? 0 : (countSlot.get(crawlId, id, from, to) as number);
    },
    close: () => db.close(),
  };
}
