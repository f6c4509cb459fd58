// The live slot table of one crawl: per slot what it does, why it waits, how it answers; sorted by
// any column, filtered by key and state, rows pinned on top, and a menu of slot controls per row.

import { useCallback, useEffect, useState } from 'react';
import { SLOT_STATES, type SlotState } from '../../../shared/contract';
import type { CrawlStatus } from '../../../shared/types';
import { SHORTCUTS, SLOT_FILTER_ID } from '../keyboard';
import type { CrawlsStore } from '../store/crawls-store';
import { type SlotQuery, type SlotTableStore, type SlotTableView, type SlotViewResult } from '../store/slot-table-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { formatCount } from './format';
import { RowActionsMenu } from './slot-table/row-actions-menu';
import { SlotGrid } from './slot-table/slot-grid';

const LIVE: ReadonlySet<CrawlStatus> = new Set(['running', 'paused']);

export interface SlotTableProps {
  readonly table: SlotTableStore;
  readonly crawlId: number;
  /** Opens a slot's history; without it, "Open history" says the view comes in a later version. */
  readonly onOpenHistory?: (slotKey: string) => void;
  /** Opens the Requests tab on a slot: its requests done, or its queue. */
  readonly onOpenRequests?: (slotKey: string, mode: 'requests' | 'queue') => void;
}

/** Rows to show: a snapshot came and it has slots (a crawl that has none yet says why instead). */
const hasRows = (t: SlotTableStore) => t.hasData() && t.size() > 0;

export function SlotTable({ table, crawlId, onOpenHistory, onOpenRequests }: SlotTableProps) {
  const { stores } = useApp();
  const hasData = useStore(table, hasRows);
  const status = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.crawl(crawlId)?.status, [crawlId]));
  const live = status !== undefined && LIVE.has(status);
  const [menu, setMenu] = useState<{ readonly key: string; readonly anchor: HTMLElement } | null>(null);
  const [note, setNote] = useState<string | null>(null);

  const onMenu = useCallback((key: string, anchor: HTMLElement) => setMenu((m) => (m?.key === key ? null : { key, anchor })), []);
  const closeMenu = useCallback(() => setMenu(null), []);
  const onScrolled = useCallback(() => setMenu((m) => (m === null ? m : null)), []);

  // A note goes away by itself after a while.
  useEffect(() => {
    if (note === null) return;
    const t = setTimeout(() => setNote(null), 12_000);
    return () => clearTimeout(t);
  }, [note]);

  if (!hasData) {
    return (
      <div className="empty slot-empty" data-testid="slot-empty">
        {status === 'created'
          ? 'Not started yet: press Start, and each host gets a row here as soon as the crawl reaches it.'
          : live
            ? 'Waiting for the first slot rows…'
            : `This crawl is ${status ?? 'unknown'} and reached no host: it has no slot rows.`}
      </div>
    );
  }

  return (
    <div className="slot-table-wrap">
      <SlotToolbar view={table.view()} live={live} status={status} />
      {note && (
        <div className="slot-note" role="status" data-testid="slot-note">
          <span>{note}</span>
          <button type="button" className="btn btn-small" onClick={() => setNote(null)}>
            OK
          </button>
        </div>
      )}
      <SlotGrid table={table} crawlId={crawlId} live={live} crawlPaused={status === 'paused'} menuKey={menu?.key ?? null} onMenu={onMenu} onScrolled={onScrolled} />
      {menu && (
        <RowActionsMenu key={menu.key} table={table} crawlId={crawlId} slotKey={menu.key} anchor={menu.anchor} live={live}
          onClose={closeMenu} onOpenHistory={onOpenHistory} onOpenRequests={onOpenRequests} onNote={setNote} />
      )}
    </div>
  );
}

const resultOf = (v: SlotTableView): SlotViewResult => v.result();
const queryOf = (v: SlotTableView): SlotQuery => v.current();

const STATE_TITLES: Readonly<Record<SlotState, string>> = {
  active: 'Requests in flight',
  waiting: 'Requests queued, waiting for the delay',
  backoff: 'Slowed down after errors',
  paused: 'Paused by hand, or with the whole crawl',
  blocked: 'Blocked by Retry-After',
  idle: 'Nothing queued',
};

/** What the figures of a crawl that is not running are. */
function recordedNote(status: CrawlStatus | undefined): string {
  if (status === 'finished' || status === 'failed') return ' · final figures';
  if (status === 'stopped' || status === 'interrupted') return ` · as recorded when it ${status === 'stopped' ? 'stopped' : 'was interrupted'}`;
  return '';
}

function SlotToolbar({ view, live, status }: { view: SlotTableView; live: boolean; status: CrawlStatus | undefined }) {
  const result = useStore(view, resultOf);
  const query = useStore(view, queryOf);
  const shown = result.keys.length;
  const filtered = query.text.trim() !== '' || query.states.size > 0;

  const toggleState = (s: SlotState) => {
    const next = new Set(query.states);
    if (!next.delete(s)) next.add(s);
    view.setStates(next);
  };

  return (
    <div className="slot-toolbar">
      <h3>Slots</h3>
      <span className="muted slot-count" data-testid="slot-count">
        {filtered ? `${formatCount(shown)} of ${formatCount(result.total)}` : formatCount(result.total)} {result.total === 1 ? 'slot' : 'slots'}
        {result.pinnedShown > 0 && ` · ${result.pinnedShown} pinned`}
        {result.pinnedHidden > 0 && ` · ${result.pinnedHidden} pinned hidden by the filter`}
        {live ? '' : recordedNote(status)}
      </span>
      <div className="slot-filter">
        <input id={SLOT_FILTER_ID} type="search" className="input" placeholder="Filter by slot key" aria-label="Filter slots by key"
          aria-keyshortcuts={SHORTCUTS.focusFilter.aria} title="Filter slots by key (press / to get here)" spellCheck={false} autoComplete="off"
          value={query.text} onChange={(e) => view.setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              view.setText('');
              e.currentTarget.blur();
            }
          }} />
        <kbd className="kbd-hint" aria-hidden="true">/</kbd>
      </div>
      <div className="state-filter" role="group" aria-label="Show slots in these states">
        {SLOT_STATES.map((s) => {
          const on = query.states.has(s);
          return (
            <button key={s} type="button" className={`chip chip-${s}${on ? ' on' : ''}`} aria-pressed={on} data-state-filter={s}
              title={`${STATE_TITLES[s]}: ${on ? 'click to stop filtering on it' : 'click to show only these (with any others chosen)'}`}
              onClick={() => toggleState(s)}>
              {s === 'blocked' ? 'blocked' : s} <span className="chip-count">{formatCount(result.stateCounts[s])}</span>
            </button>
          );
        })}
        {filtered && (
          <button type="button" className="btn btn-small" onClick={() => {
            view.setText('');
            view.setStates(new Set());
          }}>
            Clear filters
          </button>
        )}
      </div>
    </div>
  );
}
