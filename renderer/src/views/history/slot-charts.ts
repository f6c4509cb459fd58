// The four charts of a slot's detail view (latency and delay, in flight against the limits,
// responses per second by status class, backoff level) and how history data becomes their points.

import type { ChartConfiguration } from 'chart.js';
import type { HistoryPoint } from '../../../../shared/contract';
import type { Settings } from '../../../../shared/settings';
import type { ChangeRecord, EventRecord } from '../../../../shared/types';
import type { ChartAnnotation } from '../../charts/annotation-plugin';
import { ChartHandle, type XY } from '../../charts/chart-handle';
import { clockMs, timeScale, valueScale } from '../../charts/time-format';
import { STATUS_CLASSES, statusClass, withAlpha, type ChartTheme, type StatusClass } from '../../charts/theme';
import { backoffSteps, slotAnnotations } from './annotations';
import type { HistoryData } from './history-source';
import { slotDelayFloors, slotLimits, valueAt, type Step } from './settings-timeline';

const legend = (theme: ChartTheme) => ({
  display: true,
  position: 'top' as const,
  align: 'end' as const,
  labels: { color: theme.text, boxWidth: 10, boxHeight: 10, font: { size: 11 } },
});

const tooltip = (unit: (v: number) => string) => ({
  enabled: true,
  mode: 'nearest' as const,
  intersect: false,
  callbacks: {
    title: (items: { parsed: { x: number | null } }[]) => (items[0]?.parsed.x != null ? clockMs(items[0].parsed.x) : ''),
    label: (item: { dataset: { label?: string }; parsed: { y: number | null } }) => `${item.dataset.label}: ${item.parsed.y === null ? '—' : unit(item.parsed.y)}`,
  },
});

/** The latency chart's values, in the seconds its axis says (one unit, never ms here and s there). */
const seconds = (v: number) => `${v.toFixed(3)} s`;
const decimation = { enabled: true, algorithm: 'min-max' as const };

const STATUS_LABEL: Readonly<Record<StatusClass, string>> = { '2xx': '2xx', '3xx': '3xx', '4xx': '4xx (not 429)', '429': '429', '5xx': '5xx', failed: 'failed' };

/** Dataset indexes of the latency chart. */
export const LAT = {
  status: 0, delay: STATUS_CLASSES.length, target: STATUS_CLASSES.length + 1, whatIf: STATUS_CLASSES.length + 2,
  pinDelay: STATUS_CLASSES.length + 3, crawlDelay: STATUS_CLASSES.length + 4,
} as const;

function latencySpec(id: string): ChartHandle['spec'] {
  return {
    id, title: 'Latency and delay',
    description: 'each response’s latency by status class; the delay the slot applied (step), AutoThrottle’s target, latency ÷ target concurrency (dashed), and the delay pinned by the user or asked by robots.txt’s Crawl-delay, seconds',
    table: 'long', xLabel: 'Time', formatX: clockMs, formatY: (y) => y.toFixed(3), zoom: true,
    build: (theme): ChartConfiguration => ({
      type: 'scatter',
      data: {
        datasets: [
          ...STATUS_CLASSES.map((c) => ({
            type: 'scatter' as const, label: STATUS_LABEL[c], data: [], pointRadius: 2, pointHoverRadius: 4, borderWidth: 0,
            backgroundColor: withAlpha(theme.status[c], 0.65), order: 3,
          })),
          { type: 'line' as const, label: 'Delay', data: [], stepped: 'before' as const, borderColor: theme.series.delay, borderWidth: 2, pointRadius: 0, order: 1 },
          { type: 'line' as const, label: 'Target delay', data: [], borderColor: theme.series.target, borderDash: [5, 4], borderWidth: 1.5, pointRadius: 0, order: 2 },
          { type: 'line' as const, label: 'What-if delay', data: [], stepped: 'before' as const, borderColor: theme.series.whatif, borderWidth: 2, borderDash: [2, 2], pointRadius: 0, order: 0, hidden: false },
          { type: 'line' as const, label: 'Pinned delay', data: [], stepped: 'before' as const, borderColor: theme.annotation.slot, borderWidth: 1.5, borderDash: [6, 3], pointRadius: 0, order: 1, spanGaps: false },
          { type: 'line' as const, label: 'Crawl-delay', data: [], stepped: 'before' as const, borderColor: theme.annotation.robots, borderWidth: 1.5, borderDash: [6, 3], pointRadius: 0, order: 1, spanGaps: false },
        ],
      },
      options: {
        parsing: false, normalized: true,
        scales: { x: timeScale(theme), y: valueScale(theme, 'seconds') },
        plugins: {
          legend: { ...legend(theme), labels: { ...legend(theme).labels, filter: (item: { text: string }, data: { datasets: { label?: string; data: unknown[] }[] }) => (data.datasets.find((d) => d.label === item.text)?.data.length ?? 0) > 0 } },
          tooltip: tooltip(seconds), decimation,
        },
      },
    }),
  };
}

function inFlightSpec(id: string): ChartHandle['spec'] {
  return {
    id, title: 'In flight', description: 'requests in flight on the slot against AutoThrottle’s target concurrency and the concurrency limit',
    table: 'wide', xLabel: 'Time', formatX: clockMs, formatY: (y) => (Number.isInteger(y) ? String(y) : y.toFixed(2)), zoom: true,
    build: (theme) => ({
      type: 'line',
      data: {
        datasets: [
          { label: 'In flight (mean)', data: [], borderColor: theme.series.inflight, backgroundColor: withAlpha(theme.series.inflight, 0.15), fill: 'origin', borderWidth: 1.5, pointRadius: 0, stepped: 'before' as const },
          { label: 'In flight (max)', data: [], borderColor: withAlpha(theme.series.inflight, 0.55), borderWidth: 1, pointRadius: 0, stepped: 'before' as const },
          { label: 'Target concurrency', data: [], borderColor: theme.series.target, borderDash: [5, 4], borderWidth: 1.5, pointRadius: 0, stepped: 'before' as const },
          { label: 'Concurrency limit', data: [], borderColor: theme.series.limit, borderWidth: 1.5, pointRadius: 0, stepped: 'before' as const },
        ],
      },
      options: {
        parsing: false, normalized: true, spanGaps: true,
        scales: { x: timeScale(theme), y: valueScale(theme, 'requests', { suggestedMax: 2 }) },
        plugins: { legend: legend(theme), tooltip: tooltip((v) => v.toFixed(v % 1 ? 2 : 0)), decimation },
      },
    }),
  };
}

const RATE_CLASSES: readonly StatusClass[] = STATUS_CLASSES;

/** Bars stand in the middle of their bucket: x = t + span / 2 (the table writes the bucket's start). */
export function ratePoints(points: readonly HistoryPoint[]): { x: number; rates: Record<StatusClass, number> }[] {
  return points.map((p) => ({ x: p.t + p.span / 2, rates: classRates(p) }));
}

/** The responses-per-second chart; `span()` is the buckets' typical span (ms), for the table's bucket starts. */
export function rateSpec(id: string, title: string, span: () => number): ChartHandle['spec'] {
  return {
    id, title, description: 'stacked by status class (per second, averaged over each bucket)',
    table: 'wide', xLabel: 'Bucket start', formatX: (x) => clockMs(x - span() / 2), formatY: (y) => (Number.isInteger(y) ? String(y) : y.toFixed(3)), zoom: true,
    build: (theme) => ({
      type: 'bar',
      data: {
        datasets: RATE_CLASSES.map((c) => ({
          label: STATUS_LABEL[c], data: [], backgroundColor: withAlpha(theme.status[c], 0.85), borderWidth: 0, barPercentage: 1, categoryPercentage: 1, grouped: false,
        })),
      },
      options: {
        parsing: false, normalized: true,
        scales: { x: { ...timeScale(theme), stacked: true, offset: false }, y: { ...valueScale(theme, 'responses / s'), stacked: true } },
        plugins: { legend: legend(theme), tooltip: tooltip((v) => v.toFixed(2)) },
      },
    }),
  };
}

function backoffSpec(id: string): ChartHandle['spec'] {
  return {
    id, title: 'Backoff level', description: 'the slot’s backoff level (a reset by the user brings it to 0); shaded: Retry-After blocks and pauses (no request may start)',
    table: 'wide', xLabel: 'Time', formatX: clockMs, formatY: (y) => String(y), zoom: true,
    build: (theme) => ({
      type: 'line',
      data: {
        datasets: [
          { label: 'Backoff level', data: [], stepped: 'before' as const, borderColor: theme.series.backoff, backgroundColor: withAlpha(theme.series.backoff, 0.15), fill: 'origin', borderWidth: 2, pointRadius: 0 },
        ],
      },
      options: {
        parsing: false, normalized: true,
        scales: { x: timeScale(theme), y: valueScale(theme, 'level', { suggestedMax: 3, ticks: { color: theme.muted, precision: 0, maxTicksLimit: 5 } }) },
        plugins: { legend: legend(theme), tooltip: tooltip((v) => String(v)) },
      },
    }),
  };
}

/** Context the charts need beside the series: the slot, the crawl's settings and its changes and warnings. */
export interface SlotContext {
  readonly slot: string;
  readonly settings: Settings | null;
  readonly changes: readonly ChangeRecord[];
  readonly warnings: readonly EventRecord[];
}

/** Rate per second of each status class in a bucket. */
function classCounts(p: HistoryPoint): Record<StatusClass, number> {
  return { '2xx': p.s2xx, '3xx': p.s3xx, '4xx': p.s4xx - p.s429, '429': p.s429, '5xx': p.s5xx, failed: p.failures };
}

function dominantClass(p: HistoryPoint): StatusClass {
  const c = classCounts(p);
  let best: StatusClass = '2xx';
  for (const k of STATUS_CLASSES) if (c[k] > c[best]) best = k;
  return best;
}

/** Step series as chart points, clipped to [from, to] and held to the right edge (a null value: no line there). */
export function stepPoints(steps: readonly Step<number | null>[], from: number, to: number): XY[] {
  if (steps.length === 0) return [];
  const out: XY[] = [{ x: from, y: valueAt(steps, from) }];
  for (const s of steps) if (s.t > from && s.t < to) out.push({ x: s.t, y: s.value });
  out.push({ x: to, y: valueAt(steps, to) });
  return out;
}

/** The typical span of the points (ms): the median, for words like "buckets of 5 s". */
export function typicalSpan(points: readonly HistoryPoint[]): number {
  if (points.length === 0) return 1000;
  const spans = points.map((p) => p.span).sort((a, b) => a - b);
  return spans[spans.length >> 1];
}

/** Responses per second of each status class in a point. */
export function classRates(p: HistoryPoint): Record<StatusClass, number> {
  const c = classCounts(p);
  const k = 1000 / (p.span || 1000);
  return { '2xx': c['2xx'] * k, '3xx': c['3xx'] * k, '4xx': c['4xx'] * k, '429': c['429'] * k, '5xx': c['5xx'] * k, failed: c.failed * k };
}

/** The four charts of one slot, fed from its history and context. */
export class SlotCharts {
  readonly latency: ChartHandle;
  readonly inFlight: ChartHandle;
  readonly rate: ChartHandle;
  readonly backoff: ChartHandle;
  private span = 1000;

  constructor(prefix = 'slot') {
    this.latency = new ChartHandle(latencySpec(`${prefix}-latency`));
    this.inFlight = new ChartHandle(inFlightSpec(`${prefix}-inflight`));
    this.rate = new ChartHandle(rateSpec(`${prefix}-rate`, 'Responses per second', () => this.span));
    this.backoff = new ChartHandle(backoffSpec(`${prefix}-backoff`));
  }

  all(): ChartHandle[] {
    return [this.latency, this.inFlight, this.rate, this.backoff];
  }

  /** Puts every chart on the same x range. */
  setXRange(from: number, to: number, except?: ChartHandle): void {
    for (const h of this.all()) if (h !== except) h.setXRange(from, to);
  }

  /** What was fed last: only the parts whose inputs changed are recomputed and redrawn. */
  private fed: { data: HistoryData | null; ctx: SlotContext | null } = { data: null, ctx: null };

  feed(data: HistoryData, ctx: SlotContext): void {
    const { from, to, points } = data;
    const last = this.fed;
    const first = last.data === null || last.ctx === null;
    const rangeMoved = first || last.data!.from !== from || last.data!.to !== to;
    const pointsMoved = first || last.data!.points !== points;
    const logMoved = first || last.ctx!.changes !== ctx.changes || last.ctx!.settings !== ctx.settings || last.ctx!.warnings !== ctx.warnings;
    const scatterMoved = first || last.data!.responses !== data.responses || last.data!.scatterPending !== data.scatterPending;
    const infosMoved = first || last.data!.infos !== data.infos;
    this.fed = { data, ctx };

    // Latency scatter: one dataset per status class, from response points (or bucket averages when the
    // host has none); while a new range's points are on their way, the previous ones stay.
    if (!data.scatterPending && (scatterMoved || (data.responses === null && pointsMoved))) {
      const byClass = new Map<StatusClass, XY[]>(STATUS_CLASSES.map((c) => [c, []]));
      if (data.responses) {
        for (const r of data.responses) if (r.latency !== null) byClass.get(statusClass(r.status))!.push({ x: r.t, y: r.latency });
      } else {
        for (const p of points) if (p.avgLatency !== null) byClass.get(dominantClass(p))!.push({ x: p.t, y: p.avgLatency });
      }
      STATUS_CLASSES.forEach((c, i) => this.latency.setSeries(i, byClass.get(c)!));
    }

    if (pointsMoved || logMoved || rangeMoved) {
      const limits = ctx.settings ? slotLimits(ctx.slot, ctx.settings, ctx.changes, Math.min(from, points[0]?.t ?? from), to) : null;
      this.latency.setSeries(LAT.delay, points.map((p) => ({ x: p.t, y: p.avgDelay })));
      this.latency.setSeries(LAT.target, points.flatMap((p) => {
        const target = limits ? valueAt(limits.target, p.t) : ctx.settings?.AUTOTHROTTLE_TARGET_CONCURRENCY ?? null;
        return p.avgLatency === null || !target ? [] : [{ x: p.t, y: p.avgLatency / target }];
      }));
      // In flight: the responses' in-flight counts per bucket (mean and max), against the limits.
      this.inFlight.setSeries(0, points.map((p) => ({ x: p.t, y: p.avgInFlight })));
      this.inFlight.setSeries(1, points.map((p) => ({ x: p.t, y: p.maxInFlight })));
      this.inFlight.setSeries(2, limits ? stepPoints(limits.target, from, to) : []);
      this.inFlight.setSeries(3, limits ? stepPoints(limits.limit, from, to) : []);
    }

    if (logMoved || rangeMoved) {
      // What the user pinned and robots.txt asked for, beside the delay the slot applied.
      const floors = slotDelayFloors(ctx.slot, ctx.changes);
      this.latency.setSeries(LAT.pinDelay, stepPoints(floors.pin, from, to));
      this.latency.setSeries(LAT.crawlDelay, stepPoints(floors.crawlDelay, from, to));
    }

    if (pointsMoved) {
      this.span = typicalSpan(points);
      const rates = ratePoints(points);
      RATE_CLASSES.forEach((c, i) => this.rate.setSeries(i, rates.map((r) => ({ x: r.x, y: r.rates[c] }))));
    }

    if (logMoved || rangeMoved) {
      const steps = backoffSteps(ctx.slot, ctx.changes).map((s) => ({ t: s.t, value: s.level }));
      this.backoff.setSeries(0, stepPoints([{ t: -Infinity, value: 0 }, ...steps], from, to));
    }

    if (logMoved || infosMoved) {
      const marks: ChartAnnotation[] = slotAnnotations(ctx.slot, ctx.changes, ctx.warnings, data.infos);
      for (const h of this.all()) h.setAnnotations(marks);
    }
    if (rangeMoved) for (const h of this.all()) h.setXRange(from, to);
  }

  /** The what-if replay's delays over the real ones (empty to clear). */
  setWhatIf(points: XY[]): void {
    this.latency.setSeries(LAT.whatIf, points);
  }
}
