// One slot's history: range picker, four synchronised charts (zoom with the wheel, pan by dragging,
// the finer data refetched when a gesture ends) with their marks, live while the crawl runs.

import { useEffect, useMemo, useRef, useState } from 'react';
import { ChartCard } from '../../charts/chart-card';
import { span as spanWords } from '../../charts/time-format';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { HistorySource, type CrawlSpan, type HistoryData, type RangeChoice } from './history-source';
import { isMissing } from './history-api';
import { RangePicker } from './range-picker';
import { SlotCharts, typicalSpan } from './slot-charts';
import { useCrawlSpan } from './use-crawl-span';
import { WhatIfPanel } from './what-if-panel';

const FIVE_MIN: RangeChoice = { kind: 'last', ms: 5 * 60_000 };
const ALL: RangeChoice = { kind: 'all' };

interface Status {
  readonly loading: boolean;
  readonly error: string | null;
  readonly buckets: number;
  readonly responses: number | null;
  readonly infos: number;
  readonly generation: number;
  readonly span: number;
  readonly fetchMs: number | null;
  readonly from: number;
  readonly to: number;
}

const statusOf = (s: HistorySource): Status => {
  const v: HistoryData = s.current();
  return {
    loading: v.loading, error: v.error, buckets: v.points.length, responses: v.responses?.length ?? null, infos: v.infos.length, generation: v.generation,
    span: typicalSpan(v.points), fetchMs: v.fetchMs, from: v.from, to: v.to,
  };
};
const sameStatus = (a: Status, b: Status) =>
  a.loading === b.loading && a.error === b.error && a.buckets === b.buckets && a.responses === b.responses && a.infos === b.infos && a.generation === b.generation && a.span === b.span &&
  a.fetchMs === b.fetchMs && a.from === b.from && a.to === b.to;

/**
 * Where a slot's history opens: the last 5 minutes of a crawl running for longer than that, else all
 * of it (a crawl that ran 30 s is not drawn in a corner of 5 empty minutes).
 */
export function defaultRange(span: CrawlSpan, now = Date.now()): RangeChoice {
  return span.live && span.start !== null && now - span.start > FIVE_MIN_MS ? FIVE_MIN : ALL;
}

const FIVE_MIN_MS = 5 * 60_000;

/** A moment shown from a request's detail: this much before and after it. */
const FOCUS_MS = 30_000;

export function SlotDetail({ crawlId, slot, focusT }: { crawlId: number; slot: string; focusT?: number }) {
  const { transport, stores } = useApp();
  const span = useCrawlSpan(crawlId);
  const [range, setRange] = useState<RangeChoice>(() => (focusT !== undefined ? { kind: 'custom', from: focusT - FOCUS_MS, to: focusT + FOCUS_MS } : defaultRange(span)));
  const source = useMemo(() => new HistorySource(transport, { crawlId, slot, responses: true, infos: true }), [transport, crawlId, slot]);
  const charts = useMemo(() => new SlotCharts('slot'), []);
  const log = stores.crawlLogs.get(crawlId);

  useEffect(() => {
    source.configure(range, span);
    return () => source.dispose();
  }, [source, range, span]);

  // Data reaches the charts imperatively (update('none') once per frame), never through React state.
  useEffect(() => {
    const feed = () => charts.feed(source.current(), { slot, settings: log.settings(), changes: log.changes(), warnings: log.allWarnings() });
    feed();
    source.onData = feed;
    const off = log.subscribe(feed);
    return () => {
      source.onData = null;
      off();
    };
  }, [charts, source, log, slot]);

  // One gesture moves all four charts; its end refetches the range at the finer resolution at once
  // (the picker's state follows; its effect then finds the source already on that range).
  const spanRef = useRef(span);
  spanRef.current = span;
  useEffect(() => {
    for (const h of charts.all()) {
      h.onZooming = (min, max) => charts.setXRange(min, max, h);
      h.onZoomed = (min, max) => {
        const custom: RangeChoice = { kind: 'custom', from: Math.round(min), to: Math.round(max) };
        source.configure(custom, spanRef.current);
        setRange(custom);
      };
    }
  }, [charts, source]);

  const status = useStore(source, statusOf, sameStatus);
  const scatterNote = status.responses === null && isMissing('slots.responses') ? ' · latency points are per-bucket averages (the host has no slots.responses)' : '';

  return (
    <section className="slot-detail" aria-label={`History of slot ${slot}`} data-testid="slot-detail" data-slot={slot}
      data-loading={status.loading ? 'true' : 'false'} data-buckets={status.buckets} data-infos={status.infos}
      data-generation={status.generation}>
      <div className="history-toolbar">
        <h3 className="slot-detail-title" title={slot}>{slot}</h3>
        <RangePicker value={range} shown={{ from: status.from || Date.now() - 60_000, to: status.to || Date.now() }} onChange={setRange} />
        {range.kind === 'custom' && (
          <button type="button" className="btn btn-small" onClick={() => setRange(defaultRange(span))}>
            Reset zoom
          </button>
        )}
      </div>
      <p className="history-status muted" role="status" data-testid="history-status">
        {status.error ? (
          <span className="bad-text">Loading the history failed: {status.error}</span>
        ) : (
          <>
            {status.loading ? 'Loading… ' : ''}
            {formatCount(status.buckets)} buckets of {spanWords(status.span)} over {spanWords(Math.max(0, status.to - status.from))}
            {status.responses !== null ? ` · ${formatCount(status.responses)} response points` : ''}
            {status.fetchMs !== null ? ` · fetched in ${Math.round(status.fetchMs)} ms` : ''}
            {span.live && range.kind !== 'custom' ? ' · live' : ''}
            {scatterNote}
            {' · wheel to zoom, drag to pan'}
          </>
        )}
      </p>
      <div className="chart-grid">
        <ChartCard handle={charts.latency} height={230} />
        <ChartCard handle={charts.inFlight} height={170} />
        <ChartCard handle={charts.rate} height={170} />
        <ChartCard handle={charts.backoff} height={140} />
      </div>
      <WhatIfPanel crawlId={crawlId} slot={slot} charts={charts} source={source} />
    </section>
  );
}
