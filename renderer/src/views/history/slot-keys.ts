// The slots a history view can offer to pick, busiest first: the slot table's rows when it has any,
// else the slots named in the crawl's recorded changes and warnings (a finished or imported crawl).

import { useCallback } from 'react';
import type { SlotTuple } from '../../../../shared/contract';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { col, type SlotTableStore } from '../../store/slot-table-store';
import { sameItems, useStore } from '../../store/use-store';
import { useApp } from '../app-context';

/** Slot rows by requests, most first (ties by key). */
export function rowsByRequests(table: SlotTableStore): SlotTuple[] {
  return [...table.allRows()].sort((a, b) => b[col.requests] - a[col.requests] || a[col.key].localeCompare(b[col.key]));
}

const keysOfLog = (log: CrawlLogStore): string[] => {
  const seen = new Set<string>();
  for (const c of log.changes()) if (c.slot !== null) seen.add(c.slot);
  for (const w of log.allWarnings()) if (w.slot !== null) seen.add(w.slot);
  return [...seen].sort();
};

/** Slot keys of a crawl, busiest first. */
export function useSlotKeys(crawlId: number): readonly string[] {
  const { stores } = useApp();
  const table = stores.slotTables.open(crawlId).table;
  const fromTable = useStore(table, useCallback((t: SlotTableStore) => rowsByRequests(t).map((r) => r[col.key]), []), sameItems);
  const fromLog = useStore(stores.crawlLogs.get(crawlId), keysOfLog, sameItems);
  if (fromTable.length > 0) return fromTable;
  return fromLog;
}
