// Two small Chart.js plugins: a panel-coloured background (so exported PNGs read in either scheme),
// and a draw counter that records when each chart last painted and how many points it had (tests, bench).

import type { Chart, Plugin } from 'chart.js';

/** Paint statistics of one chart. `points` counts the data points held when it last painted. */
export interface DrawStats {
  draws: number;
  /** performance.now() of the last paint. */
  lastDrawAt: number;
  /** performance.now() of the first paint that had at least one data point; null until then. */
  firstDataDrawAt: number | null;
  points: number;
}

const stats = new WeakMap<Chart, DrawStats>();
const backgrounds = new WeakMap<Chart, string>();

export function drawStats(chart: Chart): DrawStats | undefined {
  return stats.get(chart);
}

/** The colour behind a chart's plot (the panel colour). */
export function setChartBackground(chart: Chart, color: string): void {
  backgrounds.set(chart, color);
}

export const backgroundPlugin: Plugin = {
  id: 'slotBackground',
  beforeDraw(chart) {
    const color = backgrounds.get(chart);
    if (!color) return;
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = color;
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

export const drawCounterPlugin: Plugin = {
  id: 'slotDrawCounter',
  afterDraw(chart) {
    let points = 0;
    for (const d of chart.data.datasets) points += (d.data as unknown[]).length;
    const now = performance.now();
    const s = stats.get(chart);
    if (!s) {
      stats.set(chart, { draws: 1, lastDrawAt: now, firstDataDrawAt: points > 0 ? now : null, points });
      return;
    }
    s.draws++;
    s.lastDrawAt = now;
    s.points = points;
    if (s.firstDataDrawAt === null && points > 0) s.firstDataDrawAt = now;
  },
  afterDestroy(chart) {
    stats.delete(chart);
  },
};
