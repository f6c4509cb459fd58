// A tiny Chart.js plugin of our own for vertical annotations (settings changes, backoff steps,
// Retry-After blocks, warnings): lines and shaded blocks on the x axis, with hover reported to the view.

import type { Chart, ChartEvent, Plugin } from 'chart.js';
import type { AnnotationKind } from './theme';

/** One mark on the time axis. */
export interface ChartAnnotation {
  /** Epoch ms. */
  readonly t: number;
  /** End of a block (Retry-After, a pause), epoch ms: drawn as a shaded band from `t`; Infinity while it lasts. */
  readonly until?: number;
  readonly kind: AnnotationKind;
  /** What changed, in words ("Backoff level 0 → 1"). */
  readonly title: string;
  /** Who or what changed it: user, config, autothrottle, backoff, rampup, robots, engine. */
  readonly source: string;
  /** More words (old → new values, the warning's text). */
  readonly detail?: string;
}

/** What the view hears when the pointer is over annotations (empty list when it left them). */
export type AnnotationHover = (items: readonly ChartAnnotation[], at: { readonly x: number; readonly y: number }) => void;

interface State {
  items: readonly ChartAnnotation[];
  colors: Readonly<Record<AnnotationKind, string>>;
  hovered: readonly ChartAnnotation[];
  onHover: AnnotationHover | null;
}

const states = new WeakMap<Chart, State>();

function stateOf(chart: Chart): State | undefined {
  return states.get(chart);
}

/** Sets a chart's annotations (sorted by time here) and colours; redraw with chart.update('none'). */
export function setChartAnnotations(chart: Chart, items: readonly ChartAnnotation[], colors: Readonly<Record<AnnotationKind, string>>, onHover?: AnnotationHover): void {
  const sorted = [...items].sort((a, b) => a.t - b.t);
  const prev = states.get(chart);
  states.set(chart, { items: sorted, colors, hovered: [], onHover: onHover ?? prev?.onHover ?? null });
}

/** The annotations a chart holds, in time order. */
export function chartAnnotations(chart: Chart): readonly ChartAnnotation[] {
  return stateOf(chart)?.items ?? [];
}

/** First index whose t >= value. */
function lowerBound(items: readonly ChartAnnotation[], value: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].t < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const HIT_PX = 5;

/** Annotations whose line is within HIT_PX of pixel x. */
function hitTest(chart: Chart, s: State, x: number): ChartAnnotation[] {
  const scale = chart.scales.x;
  if (!scale || s.items.length === 0) return [];
  const from = scale.getValueForPixel(x - HIT_PX) as number;
  const to = scale.getValueForPixel(x + HIT_PX) as number;
  const out: ChartAnnotation[] = [];
  for (let i = lowerBound(s.items, Math.min(from, to)); i < s.items.length && s.items[i].t <= Math.max(from, to); i++) out.push(s.items[i]);
  return out;
}

export const annotationPlugin: Plugin = {
  id: 'slotAnnotations',
  afterDatasetsDraw(chart) {
    const s = stateOf(chart);
    const scale = chart.scales.x;
    if (!s || !scale || s.items.length === 0) return;
    const { top, bottom, left, right } = chart.chartArea;
    const ctx = chart.ctx;
    const min = scale.min;
    const max = scale.max;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, right - left, bottom - top);
    ctx.clip();
    // Bands first (under the lines): Retry-After blocks and pauses overlapping the visible range.
    for (const a of s.items) {
      if (a.until === undefined || a.until < min || a.t > max) continue;
      const x0 = Math.max(left, scale.getPixelForValue(a.t));
      const x1 = Math.min(right, scale.getPixelForValue(a.until));
      ctx.globalAlpha = 0.12;
      ctx.fillStyle = s.colors[a.kind];
      ctx.fillRect(x0, top, Math.max(1, x1 - x0), bottom - top);
    }
    ctx.globalAlpha = 1;
    const hovered = new Set(s.hovered);
    for (let i = lowerBound(s.items, min); i < s.items.length && s.items[i].t <= max; i++) {
      const a = s.items[i];
      const x = Math.round(scale.getPixelForValue(a.t)) + 0.5;
      ctx.strokeStyle = s.colors[a.kind];
      ctx.lineWidth = hovered.has(a) ? 2.5 : 1;
      ctx.setLineDash(a.kind === 'warning' ? [2, 2] : a.kind === 'setting' || a.kind === 'slot' || a.kind === 'pause' ? [6, 3] : []);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, bottom);
      ctx.stroke();
      // A small flag at the top so dense marks stay readable.
      ctx.setLineDash([]);
      ctx.fillStyle = s.colors[a.kind];
      ctx.fillRect(x - 2.5, top, 5, 4);
    }
    ctx.restore();
  },
  afterEvent(chart, args: { event: ChartEvent; changed?: boolean }) {
    const s = stateOf(chart);
    if (!s) return;
    const e = args.event;
    let next: ChartAnnotation[] = [];
    if (e.type === 'mousemove' && e.x !== null && e.y !== null) {
      const { left, right, top, bottom } = chart.chartArea;
      if (e.x >= left - HIT_PX && e.x <= right + HIT_PX && e.y >= top && e.y <= bottom) next = hitTest(chart, s, e.x);
    }
    // Over a mark, its popover says more than the data tooltip: keep the tooltip hidden.
    if (next.length > 0 && (chart.tooltip?.getActiveElements().length ?? 0) > 0) {
      chart.tooltip?.setActiveElements([], { x: e.x ?? 0, y: e.y ?? 0 });
      args.changed = true;
    }
    const same = next.length === s.hovered.length && next.every((a, i) => a === s.hovered[i]);
    if (same) return;
    s.hovered = next;
    args.changed = true;
    s.onHover?.(next, { x: e.x ?? 0, y: e.y ?? 0 });
  },
  afterDestroy(chart) {
    states.delete(chart);
  },
};
