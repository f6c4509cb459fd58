// The Log tab: AutoThrottle's debug lines in Scrapy's format and the engine's events, filtered by
// slot, kind and text, in a virtualised list (fixed row height) that follows the tail while at the
// bottom; with the export buttons for the whole crawl, the filtered slot or the lines on screen.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { EVENT_KINDS, type EventKind } from '../../../../shared/types';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { useSlotKeys } from '../history/slot-keys';
import { useCrawlSpan } from '../history/use-crawl-span';
import type { RangeChoice } from '../history/history-source';
import { RangePicker } from '../history/range-picker';
import { ExportBar, type ExportScope } from './export-bar';
import { LOG_LIMIT, LogStore, type LogLine } from './log-store';

export const LOG_ROW_PX = 20;
const OVERSCAN = 10;

const linesOf = (s: LogStore) => s.all();
const metaOf = (s: LogStore) => `${s.loading() ? 1 : 0}|${s.error() ?? ''}`;

export function LogView({ crawlId, slot: initialSlot }: { crawlId: number; slot?: string | null }) {
  const { transport } = useApp();
  const span = useCrawlSpan(crawlId);
  const keys = useSlotKeys(crawlId);
  const store = useMemo(() => new LogStore(transport, crawlId), [transport, crawlId]);
  const [slot, setSlot] = useState(initialSlot ?? '');
  const [kinds, setKinds] = useState<ReadonlySet<EventKind>>(() => new Set(EVENT_KINDS));
  const [text, setText] = useState('');
  // A time range the lines are narrowed to (and an export can take): the whole crawl unless one is chosen.
  const [range, setRange] = useState<RangeChoice>({ kind: 'all' });
  const slotFilter = slot.trim() === '' ? null : slot.trim();
  // One kind can be asked of the host; several are filtered here.
  const hostKind = kinds.size === 1 ? [...kinds][0] : null;

  useEffect(() => {
    store.start(span.live, slotFilter, hostKind);
    return () => store.stop();
  }, [store, span.live, slotFilter, hostKind]);

  const lines = useStore(store, linesOf);
  const meta = useStore(store, metaOf);
  const [loading, error] = [meta.startsWith('1'), meta.slice(2) || null];
  const needle = text.trim().toLowerCase();
  const end = span.live || span.end === null ? null : span.end;
  const win = range.kind === 'custom' ? { from: range.from, to: range.to }
    : range.kind === 'last' ? { from: (end ?? Date.now()) - range.ms, to: end ?? Infinity } : null;
  const winFrom = win?.from ?? -Infinity;
  const winTo = win?.to ?? Infinity;
  const shown = useMemo(
    () => lines.filter((l) => kinds.has(l.event.kind) && (needle === '' || l.lower.includes(needle)) && l.event.t >= winFrom && l.event.t < winTo),
    [lines, kinds, needle, winFrom, winTo],
  );

  // The time range chosen above (never the lines the panel's height lets in view): the same whatever
  // the window's size, and named in the file's name.
  const rangeTo = win === null ? null : Number.isFinite(win.to) ? win.to : Date.now();
  const scopes: ExportScope[] = [
    { id: 'crawl', label: 'The whole crawl' },
    slotFilter ? { id: 'slot', label: `Slot ${slotFilter}`, slot: slotFilter } : { id: 'slot', label: 'The filtered slot', unavailable: 'Type a slot in the filter first' },
    win !== null && rangeTo !== null
      ? { id: 'range', label: 'The time range chosen', from: win.from, to: rangeTo, ...(slotFilter ? { slot: slotFilter } : {}) }
      : { id: 'range', label: 'The time range chosen', unavailable: 'Choose a time range above first' },
  ];

  const toggleKind = (k: EventKind) => setKinds((s) => {
    const n = new Set(s);
    if (n.has(k)) n.delete(k);
    else n.add(k);
    return n.size === 0 ? s : n;
  });

  return (
    <div className="log-view" data-testid="log-view" data-loading={loading ? 'true' : 'false'}>
      <div className="log-filters" role="group" aria-label="Filter the log">
        <label className="field-row">
          <span className="muted">Slot</span>
          <input className="input" list={`log-slots-${crawlId}`} value={slot} onChange={(e) => setSlot(e.target.value)} placeholder="every slot" aria-label="Filter by slot" />
          <datalist id={`log-slots-${crawlId}`}>{keys.slice(0, 500).map((k) => <option key={k} value={k} />)}</datalist>
        </label>
        <span className="check-group" role="group" aria-label="Kinds">
          {EVENT_KINDS.map((k) => (
            <label key={k} className="check">
              <input type="checkbox" checked={kinds.has(k)} onChange={() => toggleKind(k)} /> {k}
            </label>
          ))}
        </span>
        <RangePicker value={range} onChange={setRange}
          shown={{ from: win?.from ?? span.start ?? Date.now() - 60_000, to: (win && Number.isFinite(win.to) ? win.to : null) ?? end ?? Date.now() }} />
        <label className="field-row">
          <span className="muted">Text</span>
          <input className="input" type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="contains…" aria-label="Filter by text" />
        </label>
      </div>
      <LogList lines={shown} />
      <div className="log-foot">
        {!loading && !lines.some((l) => l.event.kind === 'debug') && (
          <span className="muted" data-testid="log-debug-note">
            AutoThrottle’s debug lines are recorded when AUTOTHROTTLE_DEBUG is on; the Scrapy debug log export writes them from the recorded responses either way.
          </span>
        )}
        <span className="muted" role="status" data-testid="log-count">
          {error ? <span className="bad-text">Loading the log failed: {error}</span> : loading && lines.length === 0 ? 'Loading…' : `${formatCount(shown.length)} of ${formatCount(lines.length)} lines${lines.length >= LOG_LIMIT ? ` (the latest ${formatCount(LOG_LIMIT)})` : ''}${span.live ? ' · live' : ''}`}
        </span>
      </div>
      <ExportBar crawlId={crawlId} scopes={scopes} />
    </div>
  );
}

/** The virtualised list: only the rows in view (and a few around) are in the DOM. */
function LogList({ lines }: { lines: readonly LogLine[] }) {
  const ref = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(400);
  const follow = useRef(true);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, []);

  // Following the tail: new lines keep the view at the bottom while it was there.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !follow.current) return;
    el.scrollTop = el.scrollHeight;
    setTop(el.scrollTop);
  }, [lines.length]);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    follow.current = el.scrollTop + el.clientHeight >= el.scrollHeight - LOG_ROW_PX;
    setTop(el.scrollTop);
  }, []);

  const first = Math.max(0, Math.floor(top / LOG_ROW_PX) - OVERSCAN);
  const last = Math.min(lines.length, Math.ceil((top + height) / LOG_ROW_PX) + OVERSCAN);

  // Lines never wrap (rows are one fixed height): the list is as wide as its longest line and scrolls sideways to it.
  const widest = useMemo(() => lines.reduce((n, l) => Math.max(n, l.text.length), 0), [lines]);
  const rows = [];
  for (let i = first; i < last; i++) {
    const l = lines[i];
    rows.push(
      <div key={i} className={`log-line kind-${l.event.kind}`} style={{ top: i * LOG_ROW_PX }} data-kind={l.event.kind} data-slot={l.event.slot ?? ''} title={l.text}>
        {l.text}
      </div>,
    );
  }
  return (
    <div ref={ref} className="log-list" onScroll={onScroll} role="log" aria-label="Debug log" aria-live="off" tabIndex={0} data-testid="log-list" data-lines={lines.length}>
      <div style={{ height: lines.length * LOG_ROW_PX, position: 'relative', width: `calc(${widest}ch + 20px)`, minWidth: '100%' }}>{rows}</div>
      {lines.length === 0 && <p className="empty">No lines match.</p>}
    </div>
  );
}
