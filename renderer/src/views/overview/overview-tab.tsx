// The crawl at a glance: throughput by status class over time (with the crawl-wide marks), the 20
// busiest slots with their delay sparklines, and how delays and latencies spread across slots.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { SlotTuple } from '../../../../shared/contract';
import { ChartCard } from '../../charts/chart-card';
import { ChartHandle } from '../../charts/chart-handle';
import { Sparkline } from '../../charts/sparkline';
import { STATUS_CLASSES } from '../../charts/theme';
import { col, type SlotTableStore } from '../../store/slot-table-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatCount, formatLatencyMs } from '../format';
import { changeAnnotation, warningAnnotation } from '../history/annotations';
import { HistorySource, type RangeChoice } from '../history/history-source';
import { RangePicker } from '../history/range-picker';
import { ratePoints, rateSpec, typicalSpan } from '../history/slot-charts';
import { topRows } from '../history/slot-keys';
import { useCrawlSpan } from '../history/use-crawl-span';
import { Histogram } from './histogram';
import { SparklineStore } from './sparkline-store';

const TOP = 20;

const isLoading = (s: HistorySource) => s.current().loading;
const sparkVersion = (s: SparklineStore) => s.getVersion();
const sameRows = (a: readonly SlotTuple[], b: readonly SlotTuple[]) => a.length === b.length && a.every((r, i) => r === b[i]);

export function OverviewTab({ crawlId, onOpenSlot }: { crawlId: number; onOpenSlot: (slot: string) => void }) {
  const { transport, stores } = useApp();
  const span = useCrawlSpan(crawlId);
  const [range, setRange] = useState<RangeChoice>({ kind: 'all' });
  const source = useMemo(() => new HistorySource(transport, { crawlId }), [transport, crawlId]);
  const spanRef = useRef(1000);
  const throughput = useMemo(() => new ChartHandle(rateSpec('overview-throughput', 'Throughput by status class', () => spanRef.current)), []);
  const delays = useMemo(() => new Histogram('overview-delays', 'Delays across slots', 'how many slots apply each delay now (last known), seconds', 's', 'delay'), []);
  const latencies = useMemo(() => new Histogram('overview-latencies', 'Latencies across slots', 'how many slots have each average latency, milliseconds', 'ms', 'latency'), []);
  const table = stores.slotTables.open(crawlId).table;
  const log = stores.crawlLogs.get(crawlId);
  const sparks = useMemo(() => new SparklineStore(transport, crawlId), [transport, crawlId]);

  useEffect(() => {
    source.configure(range, span);
    return () => source.dispose();
  }, [source, range, span]);

  // Throughput: per second by status class, with the crawl-wide setting changes and warnings marked.
  useEffect(() => {
    const feed = () => {
      const v = source.current();
      spanRef.current = typicalSpan(v.points);
      const rates = ratePoints(v.points);
      STATUS_CLASSES.forEach((c, i) => throughput.setSeries(i, rates.map((r) => ({ x: r.x, y: r.rates[c] }))));
      const marks = [
        ...log.changes().filter((c) => c.slot === null).map(changeAnnotation).filter((a) => a !== null),
        ...log.allWarnings().filter((w) => w.slot === null).map(warningAnnotation),
      ];
      throughput.setAnnotations(marks);
      throughput.setXRange(v.from, v.to);
    };
    feed();
    const offs = [source.subscribe(feed), log.subscribe(feed)];
    return () => offs.forEach((off) => off());
  }, [source, throughput, log]);

  useEffect(() => {
    throughput.onZoomed = (min, max) => setRange({ kind: 'custom', from: Math.round(min), to: Math.round(max) });
  }, [throughput]);

  // Histograms over every slot row.
  useEffect(() => {
    const feed = () => {
      const rows = [...table.allRows()];
      delays.feed(rows.map((r) => r[col.delay]));
      latencies.feed(rows.flatMap((r) => (r[col.avgLatency] === null ? [] : [r[col.avgLatency]! * 1000])));
    };
    feed();
    return table.subscribe(feed);
  }, [table, delays, latencies]);

  const top = useStore(table, useCallback((t: SlotTableStore) => topRows(t, TOP), []), sameRows);
  const topKeys = useMemo(() => top.map((r) => r[col.key]), [top]);
  const keysSig = topKeys.join('\n');

  // Sparklines: on a new set of top slots (a round every 3 s at most), and every 5 s while the crawl runs.
  useEffect(() => {
    if (topKeys.length === 0) return;
    const load = () => {
      const w = source.window();
      sparks.request(topKeys, w.from, w.to);
    };
    load();
    const timer = span.live ? setInterval(load, 5000) : null;
    return () => {
      if (timer) clearInterval(timer);
      sparks.cancel();
    };
    // keysSig stands for topKeys' content.
  }, [keysSig, sparks, source, span.live]);

  const status = useStore(source, isLoading);

  return (
    <div className="overview-tab" data-testid="overview-tab" data-loading={status ? 'true' : 'false'}>
      <div className="history-toolbar">
        <RangePicker value={range} shown={source.window()} onChange={setRange} />
        {range.kind === 'custom' && (
          <button type="button" className="btn btn-small" onClick={() => setRange({ kind: 'all' })}>
            Reset zoom
          </button>
        )}
      </div>
      <ChartCard handle={throughput} height={200} />
      <div className="overview-row">
        <ChartCard handle={delays.handle} height={160} />
        <ChartCard handle={latencies.handle} height={160} />
      </div>
      <TopSlots rows={top} sparks={sparks} onOpenSlot={onOpenSlot} />
    </div>
  );
}

function TopSlots({ rows, sparks, onOpenSlot }: { rows: readonly SlotTuple[]; sparks: SparklineStore; onOpenSlot: (slot: string) => void }) {
  const version = useStore(sparks, sparkVersion);
  return (
    <section className="chart-card" aria-labelledby="top-slots-title">
      <div className="chart-head">
        <h4 id="top-slots-title">Busiest slots</h4>
        <span className="chart-desc">the {TOP} slots with the most requests; the line is each one’s delay over the range</span>
      </div>
      {rows.length === 0 ? (
        <p className="empty">No slot rows yet: they come with the crawl’s slot table.</p>
      ) : (
        <div className="table-scroll">
          <table className="grid top-slots" data-testid="top-slots" data-version={version}>
            <thead>
              <tr>
                <th className="left">Slot</th>
                <th className="num">Requests</th>
                <th className="num">2xx</th>
                <th className="num">429</th>
                <th className="num">5xx</th>
                <th className="num">Avg latency ms</th>
                <th className="num">Delay s</th>
                <th className="left">Delay over time</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => {
                const key = r[col.key];
                const spark = sparks.get(key) ?? [];
                return (
                  <tr key={key} data-slot={key}>
                    <td className="left slot-key" title={key}>
                      <button type="button" className="link" onClick={() => onOpenSlot(key)} title={`Open the history of ${key}`}>
                        {key}
                      </button>
                    </td>
                    <td className="num strong">{formatCount(r[col.requests])}</td>
                    <td className="num">{formatCount(r[col.s2xx])}</td>
                    <td className={`num${r[col.s429] > 0 ? ' warn-text' : ''}`}>{formatCount(r[col.s429])}</td>
                    <td className={`num${r[col.s5xx] > 0 ? ' bad-text' : ''}`}>{formatCount(r[col.s5xx])}</td>
                    <td className="num">{formatLatencyMs(r[col.avgLatency])}</td>
                    <td className="num">{r[col.delay].toFixed(2)}</td>
                    <td className="left spark" data-points={spark.length}>
                      <Sparkline values={spark} label={`Delay of ${key} over time: ${spark.length ? `${Math.min(...spark).toFixed(2)} to ${Math.max(...spark).toFixed(2)} s` : 'no data yet'}`} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
