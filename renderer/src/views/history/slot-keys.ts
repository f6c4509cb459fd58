// The slots a history view can offer to pick: the slot table's rows when it has any (every key in
// natural order, and the busiest few found in one pass), else the slots named in the crawl's recorded
// changes and warnings (a finished or imported crawl whose rows the window never saw).

import { useCallback } from 'react';
import type { SlotTuple } from '../../../../shared/contract';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { col, type SlotTableStore } from '../../store/slot-table-store';
import { sameItems, useStore } from '../../store/use-store';
import { useApp } from '../app-context';

const busier = (a: SlotTuple, b: SlotTuple) => b[col.requests] - a[col.requests] || (a[col.key] < b[col.key] ? -1 : a[col.key] > b[col.key] ? 1 : 0);

/** The `n` rows with the most requests, most first (ties by key), in one pass: no sort of every row. */
export function topRows(table: SlotTableStore, n: number): SlotTuple[] {
  const top: SlotTuple[] = [];
  for (const r of table.allRows()) {
    if (top.length === n && busier(r, top[n - 1]) >= 0) continue;
    let i = top.length === n ? n - 1 : top.length;
    if (top.length < n) top.push(r);
    while (i > 0 && busier(r, top[i - 1]) < 0) {
      top[i] = top[i - 1];
      i--;
    }
    top[i] = r;
  }
  return top;
}

const keysOfLog = (log: CrawlLogStore): string[] => {
  const seen = new Set<string>();
  for (const c of log.changes()) if (c.slot !== null) seen.add(c.slot);
  for (const w of log.allWarnings()) if (w.slot !== null) seen.add(w.slot);
  return [...seen].sort();
};

/** Every key of the table in natural order, recomputed only when slots came or went. */
const orderedKeys = new WeakMap<ReadonlyMap<string, number>, string[]>();
function keysInOrder(t: SlotTableStore): string[] {
  const rank = t.keyRank();
  let keys = orderedKeys.get(rank);
  if (!keys) {
    keys = [...rank.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k);
    orderedKeys.set(rank, keys);
  }
  return keys;
}

/** Every slot key of a crawl, in natural order. */
export function useSlotKeys(crawlId: number): readonly string[] {
  const { stores } = useApp();
  const table = stores.slotTables.open(crawlId).table;
  const fromTable = useStore(table, keysInOrder);
  const fromLog = useStore(stores.crawlLogs.get(crawlId), keysOfLog, sameItems);
  return fromTable.length > 0 ? fromTable : fromLog;
}

/** The `n` busiest slot keys of a crawl (by requests), or the first `n` slots its log names. */
export function useBusiest(crawlId: number, n: number): readonly string[] {
  const { stores } = useApp();
  const table = stores.slotTables.open(crawlId).table;
  const fromTable = useStore(table, useCallback((t: SlotTableStore) => topRows(t, n).map((r) => r[col.key]), [n]), sameItems);
  const fromLog = useStore(stores.crawlLogs.get(crawlId), keysOfLog, sameItems);
  return fromTable.length > 0 ? fromTable : fromLog.slice(0, n);
}
