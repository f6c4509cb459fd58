// The data of a chart as the charts hold it and as the test hook shows it: plain types, kept apart
// from the chart handle so the registry can describe a chart without importing the handle (no cycle).

import type { ChartAnnotation } from './annotation-plugin';

/** A data point as Chart.js takes it with `parsing: false`. */
export interface XY {
  x: number;
  y: number | null;
}

/** What the test hook exposes of a chart (data, not pixels). */
export interface ChartSnapshot {
  readonly id: string;
  readonly title: string;
  readonly datasets: readonly { readonly label: string; readonly type: string; readonly points: readonly XY[] }[];
  readonly annotations: readonly ChartAnnotation[];
  readonly xMin: number | null;
  readonly xMax: number | null;
  readonly draws: number;
  readonly firstDataDrawAt: number | null;
  readonly lastDrawAt: number | null;
  readonly points: number;
}
