// The charts on screen, by id, exposed as `window.__slotscopeCharts` so browser tests and the
// benchmark read what a chart holds (datasets, annotations, paint times) instead of its pixels.

import type { Chart } from 'chart.js';
import type { ChartSnapshot } from './chart-data';

/** What the registry needs of a chart on screen (a ChartHandle, which imports this module). */
export interface RegisteredChart {
  readonly spec: { readonly id: string };
  snapshot(): ChartSnapshot;
  instance(): Chart | null;
  onZooming: ((min: number, max: number) => void) | null;
  onZoomed: ((min: number, max: number) => void) | null;
}

export interface ChartsHook {
  /** Ids of the charts on screen. */
  ids(): string[];
  /** What a chart holds now, or null when no chart has this id. */
  get(id: string): ChartSnapshot | null;
  /** Zooms a chart's x axis to [min, max] as a wheel gesture would (ends with the same callback). */
  zoomTo(id: string, min: number, max: number): boolean;
  /** Chart updates (data to painted canvas) since the page loaded: how many, and the milliseconds they took. */
  work(): { readonly updates: number; readonly ms: number };
  /** Where x value `x` and the middle of the plot are on the chart's canvas (CSS px from its top left). */
  pixelFor(id: string, x: number): { x: number; y: number } | null;
}

declare global {
  interface Window {
    __slotscopeCharts?: ChartsHook;
  }
}

const charts = new Map<string, RegisteredChart>();
const work = { updates: 0, ms: 0 };

/** Counts one chart update and its duration (for the hook's `work()`). */
export function noteChartWork(ms: number): void {
  work.updates++;
  work.ms += ms;
}

const hook: ChartsHook = {
  ids: () => [...charts.keys()],
  work: () => ({ ...work }),
  get: (id) => charts.get(id)?.snapshot() ?? null,
  zoomTo(id, min, max) {
    const h = charts.get(id);
    const c = h?.instance();
    if (!h || !c) return false;
    c.zoomScale('x', { min, max }, 'none');
    h.onZooming?.(min, max);
    h.onZoomed?.(min, max);
    return true;
  },
  pixelFor(id, x) {
    const c = charts.get(id)?.instance();
    if (!c || !c.scales.x) return null;
    return { x: c.scales.x.getPixelForValue(x), y: (c.chartArea.top + c.chartArea.bottom) / 2 };
  },
};

export function registerChart(h: RegisteredChart): void {
  charts.set(h.spec.id, h);
  if (typeof window !== 'undefined') window.__slotscopeCharts = hook;
}

export function unregisterChart(h: RegisteredChart): void {
  if (charts.get(h.spec.id) === h) charts.delete(h.spec.id);
}
