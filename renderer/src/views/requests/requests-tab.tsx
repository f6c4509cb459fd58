// The Requests tab, DevTools' Network panel for a crawl: every response and failed download, newest
// first or by time, filtered by status class (429 and 5xx one click away), slot, failure kind and URL
// text, a click opening the row's detail; and the Queue of a slot: what it will start next.

import { useCallback, useEffect, useMemo, useState } from 'react';
import { REQUEST_CLASSES, type RequestClass, type RequestFilter, type RequestOrder, type RequestRow } from '../../../../shared/contract';
import { FAILURE_KINDS, type FailureKind } from '../../../../shared/types';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { useSlotKeys } from '../history/slot-keys';
import { useCrawlSpan } from '../history/use-crawl-span';
import { QueueView } from './queue-view';
import { RequestDetail } from './request-detail';
import { RequestGrid } from './request-grid';
import { RequestsStore, type RequestsStatus } from './requests-store';

export type RequestsMode = 'requests' | 'queue';

const CLASS_WORDS: Readonly<Record<RequestClass, string>> = {
  '2xx': '2xx', '3xx': '3xx', '4xx': '4xx', '429': '429', '5xx': '5xx', failed: 'Failed',
};
const CLASS_TITLES: Readonly<Record<RequestClass, string>> = {
  '2xx': 'Successful responses', '3xx': 'Redirects', '4xx': 'Client errors, 429 included', '429': 'Too Many Requests only',
  '5xx': 'Server errors', failed: 'Downloads that got no status: timeouts, refused or reset connections, DNS, TLS…',
};

const statusOf = (s: RequestsStore): RequestsStatus => s.status();
const sameStatus = (a: RequestsStatus, b: RequestsStatus) =>
  a.anchored === b.anchored && a.loading === b.loading && a.error === b.error && a.total === b.total && a.newer === b.newer && a.anchorMs === b.anchorMs &&
  a.found === b.found && a.complete === b.complete;

export interface RequestsTabProps {
  readonly crawlId: number;
  /** Where the tab opens: a slot to filter by (or whose queue to show), and which view. */
  readonly initial?: { readonly slot?: string; readonly mode?: RequestsMode };
  readonly onOpenHistory: (slot: string, t: number) => void;
}

export function RequestsTab({ crawlId, initial, onOpenHistory }: RequestsTabProps) {
  const { transport } = useApp();
  const span = useCrawlSpan(crawlId);
  const keys = useSlotKeys(crawlId);
  const store = useMemo(() => new RequestsStore(transport, crawlId), [transport, crawlId]);
  const [mode, setMode] = useState<RequestsMode>(initial?.mode ?? 'requests');
  const [order, setOrder] = useState<RequestOrder>('newest');
  const [statusClass, setStatusClass] = useState<RequestClass | null>(null);
  const [slot, setSlot] = useState(initial?.slot ?? '');
  const [errorKind, setErrorKind] = useState<FailureKind | ''>('');
  const [text, setText] = useState('');
  const [typedText, setTypedText] = useState('');
  const [selected, setSelected] = useState<{ row: RequestRow; index: number } | null>(null);
  const [scrollTo, setScrollTo] = useState<{ index: number; seq: number } | null>(null);
  const slotKey = slot.trim();

  // The URL text filters once typing pauses (each change reads the store again).
  useEffect(() => {
    const t = setTimeout(() => setText(typedText), 200);
    return () => clearTimeout(t);
  }, [typedText]);

  const filter = useMemo<RequestFilter>(() => ({
    ...(statusClass ? { statusClass } : {}), ...(slotKey ? { slot: slotKey } : {}),
    ...(errorKind ? { errorKind } : {}), ...(text.trim() ? { text: text.trim() } : {}),
  }), [statusClass, slotKey, errorKind, text]);

  useEffect(() => {
    store.attach();
    return () => store.dispose();
  }, [store]);
  useEffect(() => {
    store.setQuery({ order, filter });
  }, [store, order, filter]);

  // Live: each status event of the crawl (about once a second) brings the rows recorded since.
  useEffect(() => {
    if (!span.live) return;
    return transport.subscribe('crawl.status', (p) => {
      if (p.crawlId === crawlId) void store.refresh();
    });
  }, [transport, store, crawlId, span.live]);
  // The crawl just ended: its last rows once more.
  useEffect(() => {
    if (!span.live) void store.refresh();
  }, [store, span.live]);

  const status = useStore(store, statusOf, sameStatus);
  const onSelect = useCallback((row: RequestRow, index: number) => {
    setSelected({ row, index });
    setScrollTo((s) => ({ index, seq: (s?.seq ?? 0) + 1 }));
  }, []);

  const classChip = (c: RequestClass | null) => {
    const on = statusClass === c;
    const label = c === null ? 'All' : CLASS_WORDS[c];
    return (
      <button key={label} type="button" className={`chip req-chip${on ? ' on' : ''}${c ? ` req-chip-${c}` : ''}`} aria-pressed={on}
        title={c === null ? 'Every response and failed download' : CLASS_TITLES[c]} onClick={() => setStatusClass(c)} data-class={c ?? 'all'}>
        {label}
      </button>
    );
  };

  const listId = `req-slots-${crawlId}`;
  return (
    <div className="requests-tab" data-testid="requests-tab" data-mode={mode}>
      <div className="req-filters" role="group" aria-label="Filter the requests">
        <span className="segmented" role="group" aria-label="View">
          <button type="button" className={`seg${mode === 'requests' ? ' active' : ''}`} aria-pressed={mode === 'requests'} onClick={() => setMode('requests')}>
            Done
          </button>
          <button type="button" className={`seg${mode === 'queue' ? ' active' : ''}`} aria-pressed={mode === 'queue'} onClick={() => setMode('queue')}
            title="The requests a slot will start next">
            Queued
          </button>
        </span>
        <label className="field-row">
          <span className="muted">Slot</span>
          <input className="input req-slot-input" list={listId} value={slot} onChange={(e) => setSlot(e.target.value)} placeholder={mode === 'queue' ? 'pick a slot' : 'every slot'}
            aria-label="Slot" data-testid="requests-slot" />
          <datalist id={listId}>{keys.slice(0, 500).map((k) => <option key={k} value={k} />)}</datalist>
        </label>
        {mode === 'requests' && (
          <>
            <span className="segmented" role="group" aria-label="Order">
              <button type="button" className={`seg${order === 'newest' ? ' active' : ''}`} aria-pressed={order === 'newest'} onClick={() => setOrder('newest')}>
                Newest first
              </button>
              <button type="button" className={`seg${order === 'oldest' ? ' active' : ''}`} aria-pressed={order === 'oldest'} onClick={() => setOrder('oldest')}>
                By time
              </button>
            </span>
            <span className="chips" role="group" aria-label="Status">
              {classChip(null)}
              {REQUEST_CLASSES.map((c) => classChip(c))}
            </span>
            <label className="field-row">
              <span className="muted">Failure</span>
              <select className="input" value={errorKind} onChange={(e) => setErrorKind(e.target.value as FailureKind | '')} aria-label="Failure kind">
                <option value="">any</option>
                {FAILURE_KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
              </select>
            </label>
            <label className="field-row req-text">
              <span className="muted">URL</span>
              <input className="input" type="search" value={typedText} onChange={(e) => setTypedText(e.target.value)} placeholder="contains…" aria-label="URL contains" />
            </label>
          </>
        )}
      </div>
      {mode === 'queue' ? (
        <QueueView crawlId={crawlId} slot={slotKey || null} live={span.live} />
      ) : (
        <>
          <div className="req-status-row">
            <p className="muted req-status" role="status" data-testid="requests-status">
              {status.error ? <span className="bad-text">Loading the requests failed: {status.error}</span>
                : !status.anchored ? 'Loading…'
                : statusWords(status, order, filter)}
            </p>
            {status.newer > 0 && (
              <button type="button" className="btn btn-small" onClick={() => store.jumpToNewest()} data-testid="requests-newer">
                ↑ {formatCount(status.newer)} newer
              </button>
            )}
          </div>
          <div className="req-body">
            <RequestGrid store={store} selectedId={selected?.row.id ?? null} onSelect={onSelect} scrollTo={scrollTo} />
            {selected && (
              <RequestDetail crawlId={crawlId} row={selected.row} onClose={() => setSelected(null)} onOpenHistory={onOpenHistory}
                onFilterSlot={(s) => { setSlot(s); setSelected(null); }} />
            )}
          </div>
        </>
      )}
    </div>
  );
}

function statusWords(s: RequestsStatus, order: RequestOrder, f: RequestFilter): string {
  const what = [f.statusClass ? (f.statusClass === 'failed' ? 'failed downloads' : `${f.statusClass} responses`) : 'requests',
    f.errorKind ? `(${f.errorKind})` : '', f.slot ? `of ${f.slot}` : '', f.text ? `with “${f.text}” in the URL` : ''].filter(Boolean).join(' ');
  const n = s.total ?? (s.complete ? s.found : null);
  const count = n === null ? `${formatCount(s.found)}+ ${what} found so far (more as you scroll)` : n === 0 ? `No ${what}` : `${formatCount(n)} ${n === 1 ? what.replace(/s\b/, '') : what}`;
  return `${count}${n === null || n > 0 ? ` · ${order === 'newest' ? 'newest first' : 'by time'}` : ''}${s.loading ? ' · loading…' : ''}`;
}
