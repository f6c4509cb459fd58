// Histograms of one figure across a crawl's slots (their delays, their average latencies): equal
// bins from zero to a round maximum, as a Chart.js bar chart on a linear axis and as table rows.

import { ChartHandle, type XY } from '../../charts/chart-handle';
import { valueScale } from '../../charts/time-format';
import { withAlpha } from '../../charts/theme';

export interface Bins {
  /** Lower edge of each bin; every bin is `width` wide. */
  readonly edges: readonly number[];
  readonly width: number;
  readonly counts: readonly number[];
}

/** A round bin width giving about `target` bins up to `max`. */
function niceWidth(max: number, target: number): number {
  const raw = max / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

/** Counts `values` into equal bins from 0; empty input gives no bins. */
export function binValues(values: readonly number[], target = 20): Bins {
  const finite = values.filter((v) => Number.isFinite(v) && v >= 0);
  if (finite.length === 0) return { edges: [], width: 0, counts: [] };
  const max = Math.max(...finite);
  const width = max === 0 ? 1 : niceWidth(max, target);
  const n = Math.max(1, Math.floor(max / width) + 1);
  const counts = new Array<number>(n).fill(0);
  for (const v of finite) counts[Math.min(n - 1, Math.floor(v / width))]++;
  return { edges: counts.map((_, i) => i * width), width, counts };
}

const trim = (n: number) => String(Number(n.toPrecision(6)));

/** A histogram chart; `unit` names the figure's unit (s, ms). */
export class Histogram {
  readonly handle: ChartHandle;
  private width = 1;

  constructor(id: string, title: string, description: string, private readonly unit: string, colorKey: 'delay' | 'latency') {
    this.handle = new ChartHandle({
      id, title, description, table: 'wide', xLabel: `Bin (${unit})`,
      formatX: (x) => `${trim(x - this.width / 2)}–${trim(x + this.width / 2)}`,
      formatY: (y) => String(y),
      build: (theme) => ({
        type: 'bar',
        data: { datasets: [{ label: 'Slots', data: [], backgroundColor: withAlpha(theme.series[colorKey], 0.75), borderColor: theme.series[colorKey], borderWidth: 1, barPercentage: 1, categoryPercentage: 1 }] },
        options: {
          parsing: false, normalized: true,
          scales: {
            x: { type: 'linear', offset: false, title: { display: true, text: unit, color: theme.muted, font: { size: 11 } }, ticks: { color: theme.muted, maxTicksLimit: 8 }, grid: { color: theme.grid }, border: { color: theme.grid } },
            y: valueScale(theme, 'slots', { ticks: { color: theme.muted, precision: 0, maxTicksLimit: 5 } }),
          },
          plugins: {
            legend: { display: false },
            tooltip: {
              callbacks: {
                title: (items: { parsed: { x: number | null } }[]) => (items[0]?.parsed.x != null ? `${trim(items[0].parsed.x - this.width / 2)}–${trim(items[0].parsed.x + this.width / 2)} ${this.unit}` : ''),
              },
            },
          },
        },
      }),
    });
  }

  feed(values: readonly number[]): Bins {
    const bins = binValues(values);
    this.width = bins.width || 1;
    const points: XY[] = bins.counts.map((c, i) => ({ x: bins.edges[i] + bins.width / 2, y: c }));
    this.handle.setSeries(0, points);
    this.handle.setXRange(bins.edges.length ? 0 : undefined, bins.edges.length ? bins.edges[bins.edges.length - 1] + bins.width : undefined);
    return bins;
  }
}
