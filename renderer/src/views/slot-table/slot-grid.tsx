// The virtualised slot grid: fixed-height rows, only the visible ones (plus an overscan) in the
// DOM under a sticky header, so 10,000 slots scroll like 40; each row reads its own tuple. Columns
// give way by priority when the grid is narrow, so the row actions always stay in view.

import { Fragment, memo, useCallback, useLayoutEffect, useMemo, useRef, useState, type CSSProperties, type ReactNode, type UIEvent } from 'react';
import type { SlotTuple } from '../../../../shared/contract';
import { Badge } from '../../components/badge';
import { CommandButton } from '../../components/command-button';
import { cell, type HostClock, type SlotSort, type SlotTableStore, type SlotTableView, type SlotViewResult } from '../../store/slot-table-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { DASH, formatCount, formatDelayCell, formatLatencyMs, formatSeconds, formatStartIn } from '../format';
import { SLOT_STATE_TONE } from '../tones';
import { causeSentence, causeWords, columnsWidth, fitColumns, formatBytes, GRID_COLUMNS, gridTemplate, type GridColumn } from './columns';

/** Height of every row, px (the CSS says the same: .slot-row). */
export const ROW_HEIGHT = 30;
/** Height of the sticky header row, px. */
const HEAD_HEIGHT = 36;
/** Rows rendered above and below the visible ones. */
const OVERSCAN = 6;

const resultOf = (v: SlotTableView): SlotViewResult => v.result();
const sortOf = (v: SlotTableView): SlotSort => v.current().sort;
const queryOf = (v: SlotTableView) => v.current();

export interface SlotGridProps {
  readonly table: SlotTableStore;
  readonly crawlId: number;
  readonly live: boolean;
  /** The whole crawl is paused: every row says paused, and slot pause/resume waits for the crawl. */
  readonly crawlPaused?: boolean;
  /** The slot whose actions menu is open, if any. */
  readonly menuKey: string | null;
  readonly onMenu: (slotKey: string, anchor: HTMLElement) => void;
  /** The grid scrolled (an open menu closes). */
  readonly onScrolled: () => void;
}

interface VisibleRange {
  readonly first: number;
  readonly rows: number;
}

export function SlotGrid({ table, crawlId, live, crawlPaused = false, menuKey, onMenu, onScrolled }: SlotGridProps) {
  const view = table.view();
  const result = useStore(view, resultOf);
  const sort = useStore(view, sortOf);
  const keys = result.keys;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [win, setWin] = useState<VisibleRange>({ first: 0, rows: 24 });

  // The window follows the scroll position; the viewport height comes from a ResizeObserver, so
  // a scroll reads nothing but scrollTop, and a new sort or filter never forces a layout to look.
  const viewport = useRef({ height: 600, top: 0 });
  // The columns that fit the grid's width (a new array only when the set changes).
  const [width, setWidth] = useState(1200);
  const shownIds = fitColumns(width).map((c) => c.id).join();
  const columns = useMemo(() => GRID_COLUMNS.filter((c) => shownIds.split(',').includes(c.id)), [shownIds]);
  const measure = useCallback(() => {
    const { height, top } = viewport.current;
    const rows = Math.max(1, Math.ceil((height - HEAD_HEIGHT) / ROW_HEIGHT));
    const first = Math.floor(top / ROW_HEIGHT);
    setWin((w) => (w.first === first && w.rows === rows ? w : { first, rows }));
  }, []);

  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    viewport.current = { height: el.clientHeight, top: el.scrollTop };
    setWidth(el.clientWidth);
    measure();
    const ro = new ResizeObserver((entries) => {
      for (const e of entries) {
        viewport.current = { ...viewport.current, height: e.contentRect.height };
        setWidth(Math.floor(e.contentRect.width));
      }
      measure();
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [measure]);

  // A new sort or filter starts at the top (live updates keep the scroll where it is).
  const query = useStore(view, queryOf);
  const firstQuery = useRef(query);
  useLayoutEffect(() => {
    if (query === firstQuery.current) return;
    const el = scrollRef.current;
    if (el && viewport.current.top !== 0) el.scrollTop = 0;
  }, [query]);

  const onScroll = (e: UIEvent<HTMLDivElement>) => {
    viewport.current = { ...viewport.current, top: e.currentTarget.scrollTop };
    measure();
    onScrolled();
  };

  const onSort = (c: GridColumn) => {
    const column = c.sort;
    if (!column) return;
    view.setSort(sort.column === column ? { column, direction: sort.direction === 'asc' ? 'desc' : 'asc' } : { column, direction: c.first ?? 'desc' });
  };

  const start = Math.max(0, win.first - OVERSCAN);
  const end = Math.min(keys.length, win.first + win.rows + OVERSCAN);
  // Rows are keyed by their place in a ring as large as the window: scrolling moves one row from
  // one end to the other, and a new sort or filter changes the rows' text instead of rebuilding them.
  const ring = win.rows + 2 * OVERSCAN + 1;
  const rows = [];
  for (let i = start; i < end; i++) {
    const k = keys[i];
    rows.push(
      <SlotRow key={i % ring} table={table} slotKey={k} index={i} crawlId={crawlId} live={live} crawlPaused={crawlPaused} columns={columns} pinned={i < result.pinnedShown}
        lastPinned={i === result.pinnedShown - 1 && i < keys.length - 1} menuOpen={menuKey === k} onMenu={onMenu} />,
    );
  }
  const gridStyle = { '--slot-cols': gridTemplate(columns), minWidth: columnsWidth(columns) } as CSSProperties;

  return (
    <div className="slot-grid-scroll" ref={scrollRef} onScroll={onScroll} role="grid" aria-label="Slots" aria-rowcount={keys.length + 1}
      aria-colcount={columns.length} data-testid="slot-table" data-rows={keys.length} data-columns={columns.length}>
      <div className="slot-grid-inner" style={gridStyle}>
        <div role="rowgroup" className="slot-grid-head">
          <div role="row" aria-rowindex={1} className="slot-row slot-head-row">
            {columns.map((c, i) => {
              const active = c.sort !== undefined && c.sort === sort.column;
              return (
                <div key={c.id} role="columnheader" aria-colindex={i + 1} className={`slot-cell ${c.align} col-${c.id}`} title={c.title}
                  aria-sort={active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}>
                  {c.sort ? (
                    <button type="button" className={`sort${active ? ' active' : ''}`} onClick={() => onSort(c)} data-sort={c.id}>
                      {c.label}
                      {active && (
                        <span className="sort-arrow" aria-hidden="true">
                          {sort.direction === 'asc' ? '▲' : '▼'}
                        </span>
                      )}
                    </button>
                  ) : (
                    <span className="head-label">{c.label}</span>
                  )}
                </div>
              );
            })}
          </div>
        </div>
        <div role="rowgroup" className="slot-grid-body" style={{ height: keys.length * ROW_HEIGHT }}>
          <div className="slot-grid-window" style={{ transform: `translateY(${start * ROW_HEIGHT}px)` }}>
            {rows}
          </div>
        </div>
        {keys.length === 0 && result.total > 0 && (
          <div className="empty slot-none" data-testid="slot-none">
            No slot matches the filter ({formatCount(result.total)} in the table).
          </div>
        )}
      </div>
    </div>
  );
}

interface RowProps {
  readonly table: SlotTableStore;
  readonly slotKey: string;
  readonly index: number;
  readonly crawlId: number;
  readonly live: boolean;
  readonly crawlPaused: boolean;
  /** The columns shown, in order. */
  readonly columns: readonly GridColumn[];
  readonly pinned: boolean;
  readonly lastPinned: boolean;
  readonly menuOpen: boolean;
  readonly onMenu: (slotKey: string, anchor: HTMLElement) => void;
}

/**
 * Time until a slot's next start, counted down against the host's clock: rows carry the time, not
 * the countdown, so a waiting slot sends nothing new while only this cell moves (when its words do).
 */
const StartIn = memo(function StartIn({ clock, at }: { readonly clock: HostClock; readonly at: number }) {
  const words = useStore(clock, useCallback((c: HostClock) => formatStartIn(at - c.now()), [at]));
  return <>{words}</>;
});

const SlotRow = memo(function SlotRow(p: RowProps) {
  const row = useStore(p.table, useCallback((t: SlotTableStore) => t.row(p.slotKey), [p.slotKey]));
  if (!row) return null;
  return <SlotCells {...p} row={row} />;
});

function SlotCells({ row, table, index, crawlId, live, crawlPaused, columns, pinned, lastPinned, menuOpen, onMenu }: RowProps & { readonly row: SlotTuple }) {
  const { commands } = useApp();
  const key = cell(row, 'key');
  const state = cell(row, 'state');
  const cause = cell(row, 'cause');
  const delay = cell(row, 'delay');
  const pinDelay = cell(row, 'pinDelay');
  const pinConcurrency = cell(row, 'pinConcurrency');
  const paused = state === 'paused';
  const s429 = cell(row, 's429');
  const s5xx = cell(row, 's5xx');
  const backoff = cell(row, 'backoffLevel');
  const target = cell(row, 'target');
  const nextAt = cell(row, 'nextStartAt');
  const pins = [pinDelay !== null ? `delay pinned at ${formatSeconds(pinDelay)}` : null, pinConcurrency !== null ? `concurrency pinned at ${pinConcurrency}` : null]
    .filter((x) => x !== null).join(' · ');
  const cls = `slot-row${pinned ? ' pinned-row' : ''}${lastPinned ? ' last-pinned' : ''}${paused ? ' paused-row' : ''}${menuOpen ? ' menu-row' : ''}`;
  const cells: Readonly<Record<string, ReactNode>> = {
    pin: (
      <div role="gridcell" className="slot-cell center" data-col="pin">
        <button type="button" className={`row-pin${pinned ? ' on' : ''}`} aria-pressed={pinned}
          aria-label={pinned ? `Unpin slot ${key} from the top` : `Pin slot ${key} to the top`}
          title={pinned ? 'Pinned to the top: click to unpin' : 'Pin to the top'} onClick={() => table.pins.toggle(key)}>
          {pinned ? '★' : '☆'}
        </button>
      </div>
    ),
    key: (
      <div role="gridcell" className="slot-cell left slot-key" data-col="key" title={pins ? `${key} (${pins})` : key}>
        <span className="slot-key-text">{key}</span>
        {pins && <span className="pin">pinned</span>}
      </div>
    ),
    state: (
      <div role="gridcell" className="slot-cell left" data-col="state">
        <Badge tone={SLOT_STATE_TONE[state]} title={state === 'blocked' ? 'blocked by Retry-After' : paused && crawlPaused ? 'the whole crawl is paused' : undefined}>{state}</Badge>
      </div>
    ),
    inflight: (
      <div role="gridcell" className="slot-cell num" data-col="inflight">
        {cell(row, 'inFlight')} / {cell(row, 'concurrency')}
      </div>
    ),
    target: (
      <div role="gridcell" className="slot-cell num muted-num" data-col="target">
        {target === null ? DASH : target}
      </div>
    ),
    delay: (
      <div role="gridcell" className={`slot-cell num cause-${cause}`} data-col="delay" title={delay < 60 ? `${delay.toFixed(3)} s` : `${formatSeconds(delay)} (${delay} s)`}>
        {formatDelayCell(delay)}
      </div>
    ),
    cause: (
      <div role="gridcell" className={`slot-cell left cause-${cause}`} data-col="cause" title={causeSentence(row)}>
        {causeWords(row)}
      </div>
    ),
    next: (
      <div role="gridcell" className="slot-cell num" data-col="next" title={paused ? 'Nothing starts while paused' : undefined}>
        {paused || nextAt === null ? DASH : <StartIn clock={table.clock} at={nextAt} />}
      </div>
    ),
    latency: (
      <div role="gridcell" className="slot-cell num" data-col="latency">
        {formatLatencyMs(cell(row, 'lastLatency'))} <span className="muted">/ {formatLatencyMs(cell(row, 'avgLatency'))}</span>
      </div>
    ),
    requests: (
      <div role="gridcell" className="slot-cell num strong" data-col="requests">
        {formatCount(cell(row, 'requests'))}
      </div>
    ),
    s2xx: (
      <div role="gridcell" className="slot-cell num" data-col="s2xx">
        {formatCount(cell(row, 's2xx'))}
      </div>
    ),
    s3xx: (
      <div role="gridcell" className="slot-cell num" data-col="s3xx">
        {formatCount(cell(row, 's3xx'))}
      </div>
    ),
    s4xx: (
      <div role="gridcell" className="slot-cell num" data-col="s4xx">
        {formatCount(cell(row, 's4xx'))}
      </div>
    ),
    s5xx: (
      <div role="gridcell" className={`slot-cell num${s5xx > 0 ? ' bad-text' : ''}`} data-col="s5xx">
        {formatCount(s5xx)}
      </div>
    ),
    s429: (
      <div role="gridcell" className={`slot-cell num${s429 > 0 ? ' warn-text' : ''}`} data-col="s429">
        {formatCount(s429)}
      </div>
    ),
    backoff: (
      <div role="gridcell" className={`slot-cell num${backoff > 0 ? ' warn-text' : ''}`} data-col="backoff">
        {backoff}
      </div>
    ),
    queued: (
      <div role="gridcell" className="slot-cell num" data-col="queued">
        {formatCount(cell(row, 'queued'))}
      </div>
    ),
    bytes: (
      <div role="gridcell" className="slot-cell num" data-col="bytes" title={`${formatCount(cell(row, 'bytes'))} bytes`}>
        {formatBytes(cell(row, 'bytes'))}
      </div>
    ),
    action: (
      <div role="gridcell" className="slot-cell left action" data-col="action">
        {/* While the whole crawl is paused its rows say paused: a slot's own pause waits for the crawl's Resume. */}
        <CommandButton key={key} variant="small" disabled={!live || crawlPaused} label={`${paused && !crawlPaused ? 'Resume' : 'Pause'} slot ${key}`}
          title={crawlPaused ? 'The whole crawl is paused: resume it from the header' : undefined}
          onRun={() => commands.slot(paused ? 'resume' : 'pause', crawlId, key)}>
          {paused && !crawlPaused ? 'Resume' : 'Pause'}
        </CommandButton>
        <button type="button" className="btn btn-small row-more" aria-label={`More actions for slot ${key}`} aria-haspopup="menu"
          aria-expanded={menuOpen} title="Pin delay or concurrency, clear pins, reset backoff, open history"
          onClick={(e) => onMenu(key, e.currentTarget)}>
          ⋯
        </button>
      </div>
    ),
  };
  return (
    <div role="row" aria-rowindex={index + 2} className={cls} data-slot={key} data-state={state} data-pinned={pinned ? 'true' : undefined}>
      {columns.map((c) => <Fragment key={c.id}>{cells[c.id]}</Fragment>)}
    </div>
  );
}
