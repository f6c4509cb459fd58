// Compare slots: pick two to five, see their delays and latencies overlaid on one time axis (one
// colour per slot), with the same range picker, zoom and table fallback as the slot detail.

import { useEffect, useMemo, useRef, useState } from 'react';
import type { HistoryPoint } from '../../../../shared/contract';
import { ChartCard } from '../../charts/chart-card';
import { ChartHandle, type XY } from '../../charts/chart-handle';
import { clockMs, timeScale, valueScale } from '../../charts/time-format';
import { FrameStore } from '../../store/frame-store';
import { useStore } from '../../store/use-store';
import type { Transport } from '../../transport/transport';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { fetchSeries } from './history-api';
import type { CrawlSpan, RangeChoice } from './history-source';
import { RangePicker } from './range-picker';
import { useBusiest, useSlotKeys } from './slot-keys';
import { useCrawlSpan } from './use-crawl-span';

export const MAX_COMPARED = 5;

interface Compared {
  readonly from: number;
  readonly to: number;
  readonly series: ReadonlyMap<string, readonly HistoryPoint[]>;
  readonly loading: boolean;
  readonly error: string | null;
}

/** The compared slots' series for one range; refetched whole (five slots at most) every 2 s while live. */
class CompareSource extends FrameStore {
  private value: Compared = { from: 0, to: 0, series: new Map(), loading: false, error: null };
  private seq = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly transport: Transport, private readonly crawlId: number) {
    super();
  }

  current(): Compared {
    return this.value;
  }

  configure(slots: readonly string[], range: RangeChoice, span: CrawlSpan): void {
    this.stop();
    const load = () => void this.load(slots, range, span);
    load();
    if (span.live && range.kind !== 'custom') this.timer = setInterval(load, 2000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async load(slots: readonly string[], range: RangeChoice, span: CrawlSpan): Promise<void> {
    const seq = ++this.seq;
    const now = Date.now();
    const end = span.live || span.end === null ? now : span.end;
    const from = range.kind === 'custom' ? range.from : range.kind === 'last' ? end - range.ms : (span.start ?? end - 60_000);
    const to = range.kind === 'custom' ? range.to : end;
    this.value = { ...this.value, loading: true };
    this.changed();
    try {
      const all = await Promise.all(slots.map((slot) => fetchSeries(this.transport, { crawlId: this.crawlId, slot, from, to: to + 1 })));
      if (seq !== this.seq) return;
      this.value = { from, to, series: new Map(slots.map((s, i) => [s, all[i]])), loading: false, error: null };
    } catch (e) {
      if (seq !== this.seq) return;
      this.value = { ...this.value, loading: false, error: toAppError(e).message };
    }
    this.changed();
  }
}

function compareSpec(id: string, title: string, description: string, unit: string, slots: readonly string[], digits: number): ChartHandle['spec'] {
  return {
    id, title, description, table: 'wide', xLabel: 'Time', formatX: clockMs, formatY: (y) => y.toFixed(digits), zoom: true,
    build: (theme) => ({
      type: 'line',
      data: {
        datasets: Array.from({ length: MAX_COMPARED }, (_, i) => ({
          label: slots[i] ?? '', data: [], borderColor: theme.palette[i], backgroundColor: theme.palette[i], borderWidth: 1.75, pointRadius: 0,
          stepped: unit === 's' ? ('before' as const) : false, hidden: slots[i] === undefined,
        })),
      },
      options: {
        parsing: false, normalized: true, spanGaps: true,
        scales: { x: timeScale(theme), y: valueScale(theme, unit === 's' ? 'seconds' : 'milliseconds') },
        plugins: {
          legend: { display: true, position: 'top', align: 'end', labels: { color: theme.text, boxWidth: 10, boxHeight: 10, font: { size: 11 }, filter: (item) => item.text !== '' } },
          decimation: { enabled: true, algorithm: 'min-max' },
          tooltip: { mode: 'nearest', intersect: false, callbacks: { title: (items) => (items[0]?.parsed.x != null ? clockMs(items[0].parsed.x) : '') } },
        },
      },
    }),
  };
}

export function CompareTab({ crawlId, initial }: { crawlId: number; initial: readonly string[] }) {
  const { transport } = useApp();
  const keys = useSlotKeys(crawlId);
  const busiest = useBusiest(crawlId, MAX_COMPARED);
  const span = useCrawlSpan(crawlId);
  const [picked, setPicked] = useState<readonly string[]>(() => initial.slice(0, MAX_COMPARED));
  const [typed, setTyped] = useState('');
  const [range, setRange] = useState<RangeChoice>({ kind: 'all' });
  const source = useMemo(() => new CompareSource(transport, crawlId), [transport, crawlId]);
  const sig = picked.join('\n');
  // The charts are rebuilt when the set of slots changes (dataset labels are the slot keys).
  const charts = useMemo(() => [
    new ChartHandle(compareSpec('compare-delay', 'Delay', 'the delay each slot applied between request starts, seconds', 's', picked, 3)),
    new ChartHandle(compareSpec('compare-latency', 'Latency', 'each slot’s mean response latency, milliseconds', 'ms', picked, 0)),
  ], [sig]);

  // Until the user picks, fill up to two slots with the busiest ones (once).
  const filled = useRef(false);
  useEffect(() => {
    if (filled.current || busiest.length < 2) return;
    filled.current = true;
    setPicked((p) => (p.length >= 2 ? p : [...p, ...busiest.filter((k) => !p.includes(k))].slice(0, 2)));
  }, [busiest]);

  useEffect(() => {
    if (picked.length === 0) return;
    source.configure(picked, range, span);
    return () => source.stop();
  }, [source, sig, range, span]);

  useEffect(() => {
    const [delay, latency] = charts;
    const feed = () => {
      const v = source.current();
      picked.forEach((slot, i) => {
        const pts = v.series.get(slot) ?? [];
        delay.setSeries(i, pts.map((p): XY => ({ x: p.t, y: p.avgDelay })));
        latency.setSeries(i, pts.flatMap((p): XY[] => (p.avgLatency === null ? [] : [{ x: p.t, y: p.avgLatency * 1000 }])));
      });
      if (v.to > v.from) for (const h of charts) h.setXRange(v.from, v.to);
    };
    feed();
    for (const h of charts) {
      h.onZooming = (min, max) => charts.forEach((o) => o !== h && o.setXRange(min, max));
      h.onZoomed = (min, max) => setRange({ kind: 'custom', from: Math.round(min), to: Math.round(max) });
    }
    return source.subscribe(feed);
  }, [charts, source]);

  const state = useStore(source, currentOf);
  const add = (slot: string) => {
    const s = slot.trim();
    if (s === '' || picked.includes(s) || picked.length >= MAX_COMPARED) return;
    setPicked([...picked, s]);
    setTyped('');
  };
  const listId = `compare-slots-${crawlId}`;

  return (
    <div className="compare-tab" data-testid="compare-tab" data-loading={state.loading ? 'true' : 'false'}>
      <div className="compare-pick">
        <span className="muted">Slots ({picked.length} of 2–{MAX_COMPARED}):</span>
        {picked.map((s, i) => (
          <span key={s} className="compare-chip" data-slot={s}>
            <span className="swatch" style={{ background: `var(--chart-p${i + 1})` }} aria-hidden="true" />
            {s}
            <button type="button" className="chip-x" aria-label={`Remove ${s} from the comparison`} onClick={() => setPicked(picked.filter((x) => x !== s))}>
              ×
            </button>
          </span>
        ))}
        {picked.length < MAX_COMPARED && (
          <form onSubmit={(e) => { e.preventDefault(); add(typed); }} className="compare-add">
            <input className="input slot-input" list={listId} value={typed} onChange={(e) => setTyped(e.target.value)} placeholder="add a slot" aria-label="Add a slot to compare" />
            <datalist id={listId}>
              {keys.filter((k) => !picked.includes(k)).slice(0, 500).map((k) => <option key={k} value={k} />)}
            </datalist>
            <button type="submit" className="btn btn-small">Add</button>
          </form>
        )}
      </div>
      <div className="history-toolbar">
        <RangePicker value={range} shown={{ from: state.from || Date.now() - 60_000, to: state.to || Date.now() }} onChange={setRange} />
        {range.kind === 'custom' && <button type="button" className="btn btn-small" onClick={() => setRange({ kind: 'all' })}>Reset zoom</button>}
        {state.error && <span className="bad-text">Loading failed: {state.error}</span>}
      </div>
      {picked.length < 2 ? (
        <p className="empty">Pick at least two slots to compare.</p>
      ) : null}
      <div className="chart-grid" hidden={picked.length === 0}>
        <ChartCard key={`d${sig}`} handle={charts[0]} height={200} />
        <ChartCard key={`l${sig}`} handle={charts[1]} height={200} />
      </div>
    </div>
  );
}

const currentOf = (s: CompareSource) => s.current();
