// The Requests grid: fixed-height rows of a list that may hold millions, only the visible ones (and
// a few around) in the DOM; the columns that fit the panel's width; a waterfall bar per row on a
// round scale shared by the rows in view. Rows come from the RequestsStore by index.

import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import type { RequestRow } from '../../../../shared/contract';
import { useStore } from '../../store/use-store';
import { CAUSE_WORDS } from '../format';
import {
  clockMs, columnsFor, delayWords, msCell, niceScale, phasesOf, scaleWords, sizeWords, statusTone, statusWords, templateOf, typeWords,
  type RequestColumn,
} from './request-columns';
import type { RequestsStore } from './requests-store';

/** Height of every row, px (the CSS says the same: .req-row). */
export const REQ_ROW = 24;
const HEAD = 30;
const OVERSCAN = 8;
/** Past this height the list maps scroll positions to rows proportionally (a browser's element height is bounded). */
const MAX_PX = 30_000_000;

const versionOf = (s: RequestsStore) => s.rowsChanged();
const anchorsOf = (s: RequestsStore) => s.anchors();

export interface RequestGridProps {
  readonly store: RequestsStore;
  readonly selectedId: number | null;
  readonly onSelect: (row: RequestRow, index: number) => void;
  /** A request to scroll a row into view (an arrow key, a jump). */
  readonly scrollTo: { readonly index: number; readonly seq: number } | null;
}

export function RequestGrid({ store, selectedId, onSelect, scrollTo }: RequestGridProps) {
  useStore(store, versionOf);
  const length = store.length();
  const ref = useRef<HTMLDivElement>(null);
  const viewport = useRef({ height: 400, width: 900, top: 0 });
  const [win, setWin] = useState({ first: 0, rows: 20, width: 900, top: 0 });

  const exact = length * REQ_ROW <= MAX_PX;
  const contentHeight = exact ? length * REQ_ROW : MAX_PX;

  const measure = useCallback(() => {
    const { height, width, top } = viewport.current;
    const rows = Math.max(1, Math.ceil((height - HEAD) / REQ_ROW) + 1);
    const len = store.length();
    const ex = len * REQ_ROW <= MAX_PX;
    const first = ex ? Math.floor(top / REQ_ROW) : Math.floor((top / Math.max(1, MAX_PX - height)) * Math.max(0, len - rows + 1));
    // The scroll offset matters to the rows only when they are placed proportionally.
    const at = ex ? 0 : top;
    setWin((w) => (w.first === first && w.rows === rows && w.width === width && w.top === at ? w : { first, rows, width, top: at }));
    store.want(Math.max(0, first - OVERSCAN), first + rows + OVERSCAN);
    store.setFollowing(top < REQ_ROW);
  }, [store]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    viewport.current = { height: el.clientHeight, width: el.clientWidth, top: el.scrollTop };
    measure();
    const ro = new ResizeObserver((entries) => {
      for (const e of entries) viewport.current = { ...viewport.current, height: e.contentRect.height, width: e.contentRect.width };
      measure();
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [measure]);

  // A new list (another filter, the newest rows taken) starts at the top.
  const anchors = useStore(store, anchorsOf);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && el.scrollTop !== 0) el.scrollTop = 0;
    viewport.current = { ...viewport.current, top: 0 };
    measure();
  }, [anchors, measure]);
  useEffect(() => {
    measure();
  }, [length, measure]);

  useEffect(() => {
    const el = ref.current;
    if (!el || !scrollTo) return;
    const { height } = viewport.current;
    const y = scrollTo.index * REQ_ROW;
    if (!exact) return;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + REQ_ROW > el.scrollTop + height - HEAD) el.scrollTop = y + REQ_ROW - (height - HEAD);
  }, [scrollTo, exact]);

  // While the list moves, rows take no pointer events: no hover restyle and no hit test of the rows
  // under a still mouse on every frame (the grid itself still takes the wheel).
  const settle = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onScroll = () => {
    const el = ref.current;
    if (!el) return;
    viewport.current = { ...viewport.current, top: el.scrollTop };
    if (settle.current === null) el.classList.add('scrolling');
    else clearTimeout(settle.current);
    settle.current = setTimeout(() => {
      settle.current = null;
      el.classList.remove('scrolling');
    }, 150);
    measure();
  };
  useEffect(() => () => {
    if (settle.current !== null) clearTimeout(settle.current);
  }, []);

  // Columns change only when the width crosses a step, so rows keep their memo while scrolling.
  const columns = useMemo(() => columnsFor(win.width), [win.width]);
  const template = useMemo(() => templateOf(columns), [columns]);
  const start = Math.max(0, win.first - (exact ? OVERSCAN : 0));
  const end = Math.min(length, win.first + win.rows + (exact ? OVERSCAN : 0));
  // One round scale for the rows in view, so their bars compare.
  let longest = 0;
  for (let i = win.first; i < Math.min(length, win.first + win.rows); i++) {
    const r = store.row(i);
    if (r) longest = Math.max(longest, phasesOf(r).end);
  }
  const scale = niceScale(Math.max(1, longest));
  // Rows sit at their own offset and are keyed by their place in a ring as large as the window: a
  // row scrolled out is reused for the one scrolling in (its text changes, no element is made or
  // removed), and rows that stay in view keep their props and are not rendered again.
  const ring = win.rows + 2 * OVERSCAN + 1;
  const rows = [];
  for (let i = start; i < end; i++) {
    const r = store.row(i);
    const top = exact ? i * REQ_ROW : win.top + (i - start) * REQ_ROW;
    rows.push(<GridRow key={i % ring} row={r} index={i} top={top} columns={columns} scale={scale} selected={r !== null && r.id === selectedId} onSelect={onSelect} />);
  }

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : e.key === 'PageDown' ? win.rows - 1 : e.key === 'PageUp' ? 1 - win.rows : 0;
    if (step === 0) return;
    e.preventDefault();
    let index = win.first;
    if (selectedId !== null) {
      for (let i = start; i < end; i++) if (store.row(i)?.id === selectedId) index = i + step;
    }
    index = Math.max(0, Math.min(length - 1, index));
    const r = store.row(index);
    if (r) onSelect(r, index);
  };

  return (
    <div className="req-grid-scroll" ref={ref} onScroll={onScroll} role="grid" aria-label="Requests" aria-rowcount={length + 1}
      aria-colcount={columns.length} tabIndex={0} onKeyDown={onKeyDown} data-testid="requests-grid" data-rows={length}>
      <div className="req-grid-inner" style={{ '--req-cols': template } as CSSProperties}>
        <div role="rowgroup" className="req-grid-head">
          <div role="row" aria-rowindex={1} className="req-row req-head-row">
            {columns.map((c, i) => (
              <div key={c.id} role="columnheader" aria-colindex={i + 1} className={`req-cell ${c.align} col-${c.id}`} title={c.title}>
                {c.id === 'waterfall' ? `${c.label} · ${scaleWords(scale)}` : c.label}
              </div>
            ))}
          </div>
        </div>
        <div role="rowgroup" className="req-grid-body" style={{ height: contentHeight }}>
          {rows}
        </div>
      </div>
    </div>
  );
}

interface RowProps {
  readonly row: RequestRow | null;
  readonly index: number;
  /** Offset in the body, px. */
  readonly top: number;
  readonly columns: readonly RequestColumn[];
  readonly scale: number;
  readonly selected: boolean;
  readonly onSelect: (row: RequestRow, index: number) => void;
}

const GridRow = memo(function GridRow({ row, index, top, columns, scale, selected, onSelect }: RowProps) {
  const style = { top };
  if (!row) {
    return (
      <div role="row" aria-rowindex={index + 2} className="req-row req-placeholder" aria-busy="true" style={style}>
        {columns.map((c) => <div key={c.id} role="gridcell" className={`req-cell col-${c.id}`}>{c.id === 'url' ? '…' : ''}</div>)}
      </div>
    );
  }
  return (
    <div role="row" aria-rowindex={index + 2} aria-selected={selected} className={`req-row${selected ? ' selected' : ''} tone-${statusTone(row)}`}
      data-row-id={row.id} data-status={row.status ?? 'failed'} onClick={() => onSelect(row, index)} style={style}>
      {columns.map((c) => <Cell key={c.id} column={c} row={row} scale={scale} />)}
    </div>
  );
});

function Cell({ column, row, scale }: { column: RequestColumn; row: RequestRow; scale: number }) {
  const cls = `req-cell ${column.align} col-${column.id}`;
  switch (column.id) {
    case 'time':
      return <div role="gridcell" className={cls} data-col="time">{clockMs(row.t)}</div>;
    case 'url':
      return <div role="gridcell" className={cls} data-col="url" title={row.url}>{row.url}</div>;
    case 'slot':
      return <div role="gridcell" className={cls} data-col="slot" title={row.slot}>{row.slot}</div>;
    case 'status':
      return (
        <div role="gridcell" className={`${cls} status-${statusTone(row)}`} data-col="status" title={row.errorMessage ?? undefined}>
          {statusWords(row)}
        </div>
      );
    case 'method':
      return <div role="gridcell" className={cls} data-col="method">{row.method}</div>;
    case 'latency':
      return <div role="gridcell" className={cls} data-col="latency">{msCell(row.latency === null ? null : row.latency * 1000)}</div>;
    case 'waited':
      return <div role="gridcell" className={cls} data-col="waited">{msCell(row.waitMs)}</div>;
    case 'delay':
      return <div role="gridcell" className={`${cls} cause-${row.delayCause}`} data-col="delay" title={`${row.delayBefore.toFixed(3)} s before this response → ${row.delayAfter.toFixed(3)} s after (${CAUSE_WORDS[row.delayCause]})`}>{delayWords(row)}</div>;
    case 'backoff':
      return <div role="gridcell" className={`${cls}${row.backoffLevel > 0 ? ' warn-text' : ''}`} data-col="backoff">{row.backoffLevel}</div>;
    case 'retry':
      return <div role="gridcell" className={`${cls}${row.attempt > 0 ? ' warn-text' : ''}`} data-col="retry">{row.attempt}</div>;
    case 'size':
      return <div role="gridcell" className={cls} data-col="size">{sizeWords(row)}</div>;
    case 'type':
      return <div role="gridcell" className={cls} data-col="type" title={row.contentType ?? undefined}>{typeWords(row)}</div>;
    case 'waterfall':
      return <div role="gridcell" className={cls} data-col="waterfall"><Waterfall row={row} scale={scale} /></div>;
    default:
      return <div role="gridcell" className={cls} />;
  }
}

/** Queued → sent → headers → end as three segments of one bar, `scale` ms wide. */
export function Waterfall({ row, scale }: { row: RequestRow; scale: number }) {
  const p = phasesOf(row);
  const pct = (ms: number) => `${Math.min(100, (100 * ms) / scale).toFixed(2)}%`;
  const title = `queued ${Math.round(p.sent)} ms → sent → ${p.headers === null ? 'no headers' : `headers after ${Math.round(p.headers - p.sent)} ms`} → end at ${Math.round(p.end)} ms`;
  // One element, its phases as hard stops of a gradient (a few hundred bars in view cost one box each).
  const a = pct(p.sent);
  const stops = p.failed
    ? `var(--wf-queued) 0 ${a}, var(--wf-failed) ${a} ${pct(Math.max(p.end, p.sent + scale / 200))}`
    : `var(--wf-queued) 0 ${a}, var(--wf-wait) ${a} ${pct(Math.max(p.headers ?? p.end, p.sent + scale / 400))}, ` +
      `var(--wf-body) ${pct(Math.max(p.headers ?? p.end, p.sent + scale / 400))} ${pct(Math.max(p.end, (p.headers ?? p.end) + scale / 400))}`;
  return <span className="waterfall" title={title} aria-label={title} style={{ backgroundImage: `linear-gradient(to right, ${stops}, transparent 0)` }} />;
}
