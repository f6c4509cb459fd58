// One chart, owned outside React: holds the data, annotations and x range, creates the Chart.js
// instance on a canvas, pushes new data with update('none') once per frame, and is a store for its table.

import { Chart, type ChartConfiguration, type ChartDataset } from 'chart.js';
import { FrameStore } from '../store/frame-store';
import { chartAnnotations, setChartAnnotations, type AnnotationHover, type ChartAnnotation } from './annotation-plugin';
import { drawStats, setChartBackground } from './chart-plugins';
import type { ChartSnapshot, XY } from './chart-data';
import { noteChartWork, registerChart, unregisterChart } from './chart-registry';
import { setupCharts } from './chart-setup';
import { readTheme, type ChartTheme } from './theme';

export type { ChartSnapshot, XY } from './chart-data';

/** How the table fallback lays the data out: one row per x with a column per series, or one row per point. */
export type TableLayout = 'wide' | 'long';

export interface ChartSpec {
  /** Stable id: the test hook's key and the PNG's file name. */
  readonly id: string;
  readonly title: string;
  /** Words under the title: what the chart shows, in which unit. */
  readonly description?: string;
  readonly table: TableLayout;
  /** Header of the x column in the table, and how x values are written there. */
  readonly xLabel: string;
  readonly formatX: (x: number) => string;
  /** How y values are written in the table (per series). */
  readonly formatY?: (y: number, series: number) => string;
  /** The chart's configuration with empty datasets (labels and styles only). Called again when the colour scheme flips. */
  build(theme: ChartTheme): ChartConfiguration;
  /** Wheel zoom and drag pan on x; the callback gets the new x range when a gesture ends. */
  readonly zoom?: boolean;
}

type Range = { readonly min: number | undefined; readonly max: number | undefined };

export class ChartHandle extends FrameStore {
  private chart: Chart | null = null;
  private canvas: HTMLCanvasElement | null = null;
  private data: XY[][] = [];
  private annotations: readonly ChartAnnotation[] = [];
  private range: Range = { min: undefined, max: undefined };
  private pending = false;
  private theme: ChartTheme | null = null;
  private labels: readonly string[] = [];
  private types: readonly string[] = [];
  /** Hears the x range the user zoomed or panned to (once the gesture ended). */
  onZoomed: ((min: number, max: number) => void) | null = null;
  /** Hears the x range while the user zooms or pans (to keep sibling charts aligned). */
  onZooming: ((min: number, max: number) => void) | null = null;
  onAnnotationHover: AnnotationHover | null = null;

  constructor(readonly spec: ChartSpec) {
    super();
  }

  /** Creates the Chart.js instance on `canvas` with the data held so far. */
  attach(canvas: HTMLCanvasElement): void {
    setupCharts();
    this.detach();
    this.canvas = canvas;
    this.theme = readTheme();
    const config = this.spec.build(this.theme);
    const options = (config.options ??= {});
    options.animation = false;
    options.responsive = true;
    options.maintainAspectRatio = false;
    const plugins = (options.plugins ??= {});
    if (this.spec.zoom) {
      const end = ({ chart }: { chart: Chart }) => this.onZoomed?.(chart.scales.x.min, chart.scales.x.max);
      const during = ({ chart }: { chart: Chart }) => this.onZooming?.(chart.scales.x.min, chart.scales.x.max);
      plugins.zoom = {
        zoom: { wheel: { enabled: true, speed: 0.15 }, pinch: { enabled: true }, mode: 'x', onZoom: during, onZoomComplete: end },
        pan: { enabled: true, mode: 'x', threshold: 4, onPan: during, onPanComplete: end },
      };
    }
    this.labels = config.data.datasets.map((d) => String(d.label ?? ''));
    this.types = config.data.datasets.map((d) => String((d as { type?: string }).type ?? config.type));
    config.data.datasets.forEach((d, i) => {
      (d as ChartDataset).data = (this.data[i] ??= []) as never;
    });
    const x = (options.scales as Record<string, { min?: number; max?: number }> | undefined)?.x;
    if (x) {
      x.min = this.range.min;
      x.max = this.range.max;
    }
    const chart = new Chart(canvas, config);
    setChartBackground(chart, this.theme.panel);
    setChartAnnotations(chart, this.annotations, this.theme.annotation, (items, at) => this.onAnnotationHover?.(items, at));
    this.chart = chart;
    // The first paint happened inside the constructor, before the background and marks were known.
    chart.update('none');
    registerChart(this);
  }

  detach(): void {
    if (!this.chart) return;
    unregisterChart(this);
    this.chart.destroy();
    this.chart = null;
  }

  /** Rebuilds the chart with the current theme (colour scheme flipped). */
  retheme(): void {
    if (this.canvas && this.chart) this.attach(this.canvas);
  }

  instance(): Chart | null {
    return this.chart;
  }

  /** Dataset labels, in order (known once attached). */
  seriesLabels(): readonly string[] {
    return this.labels;
  }

  /** The points of every dataset, as held (the table reads them). */
  allData(): readonly (readonly XY[])[] {
    return this.data;
  }

  currentAnnotations(): readonly ChartAnnotation[] {
    return this.annotations;
  }

  xRange(): Range {
    return this.range;
  }

  /** Replaces the points of dataset `index` (sorted by x). */
  setSeries(index: number, points: XY[]): void {
    this.data[index] = points;
    const d = this.chart?.data.datasets[index];
    if (d) d.data = points as never;
    this.scheduleUpdate();
  }

  setAnnotations(items: readonly ChartAnnotation[]): void {
    this.annotations = items;
    if (this.chart && this.theme) setChartAnnotations(this.chart, items, this.theme.annotation);
    this.scheduleUpdate();
  }

  /** Pins the x axis to [min, max] (undefined: fit the data). */
  setXRange(min: number | undefined, max: number | undefined): void {
    if (this.range.min === min && this.range.max === max) return;
    this.range = { min, max };
    const x = this.chart?.options.scales?.x;
    if (x) {
      x.min = min;
      x.max = max;
    }
    this.scheduleUpdate();
  }

  /** Redraws now (no animation). */
  flush(): void {
    this.pending = false;
    const t = performance.now();
    this.chart?.update('none');
    noteChartWork(performance.now() - t);
    this.changed();
  }

  pngDataUrl(): string | null {
    return this.chart ? this.chart.toBase64Image('image/png', 1) : null;
  }

  snapshot(): ChartSnapshot {
    const c = this.chart;
    const s = c ? drawStats(c) : undefined;
    return {
      id: this.spec.id,
      title: this.spec.title,
      datasets: this.data.map((points, i) => ({
        label: this.labels[i] ?? '',
        type: this.types[i] ?? '',
        points: points.map((p) => ({ x: p.x, y: p.y })),
      })),
      annotations: c ? chartAnnotations(c) : this.annotations,
      xMin: c ? c.scales.x?.min ?? null : this.range.min ?? null,
      xMax: c ? c.scales.x?.max ?? null : this.range.max ?? null,
      draws: s?.draws ?? 0,
      firstDataDrawAt: s?.firstDataDrawAt ?? null,
      lastDrawAt: s?.lastDrawAt ?? null,
      points: s?.points ?? 0,
    };
  }

  private scheduleUpdate(): void {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      if (this.pending) this.flush();
    });
  }
}
