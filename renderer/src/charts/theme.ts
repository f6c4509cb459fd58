// Chart colours taken from the stylesheet's custom properties (history.css), so a chart follows the
// light/dark scheme like the rest of the window; one table of colours per status class and annotation kind.

export type StatusClass = '2xx' | '3xx' | '4xx' | '429' | '5xx' | 'failed';

export const STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '429', '5xx', 'failed'];

/** What the status class of a response is; null status = a failed download. */
export function statusClass(status: number | null): StatusClass {
  if (status === null || status <= 0) return 'failed';
  if (status === 429) return '429';
  if (status < 300) return '2xx';
  if (status < 400) return '3xx';
  if (status < 500) return '4xx';
  return '5xx';
}

export const ANNOTATION_KINDS = ['setting', 'slot', 'pause', 'backoff', 'recovery', 'retry-after', 'warning', 'rampup', 'robots'] as const;

/** Kinds of vertical annotation, each with its own colour (`pause`: a slot paused by the user, a band until resumed). */
export type AnnotationKind = (typeof ANNOTATION_KINDS)[number];

export interface ChartTheme {
  readonly dark: boolean;
  readonly text: string;
  readonly muted: string;
  readonly grid: string;
  readonly panel: string;
  readonly status: Readonly<Record<StatusClass, string>>;
  readonly annotation: Readonly<Record<AnnotationKind, string>>;
  /** Named series colours: delay, target, latency, inflight, limit, backoff, whatif. */
  readonly series: Readonly<Record<'delay' | 'target' | 'latency' | 'inflight' | 'limit' | 'backoff' | 'whatif' | 'requests', string>>;
  /** Colours for slots compared side by side (up to 5) and for the top-slots sparklines. */
  readonly palette: readonly string[];
}

function cssVar(style: CSSStyleDeclaration, name: string, fallback: string): string {
  const v = style.getPropertyValue(name).trim();
  return v === '' ? fallback : v;
}

/** The theme as the stylesheet says now (call again when the colour scheme changes). */
export function readTheme(el: Element = document.documentElement): ChartTheme {
  const s = getComputedStyle(el);
  const v = (name: string, fallback: string) => cssVar(s, name, fallback);
  return {
    dark: typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches,
    text: v('--text', '#1d2430'),
    muted: v('--muted', '#667085'),
    grid: v('--chart-grid', 'rgba(0,0,0,0.08)'),
    panel: v('--panel', '#ffffff'),
    status: {
      '2xx': v('--chart-2xx', '#2e9d5b'),
      '3xx': v('--chart-3xx', '#3f7fd9'),
      '4xx': v('--chart-4xx', '#c98a12'),
      '429': v('--chart-429', '#e0631d'),
      '5xx': v('--chart-5xx', '#d13c3c'),
      failed: v('--chart-failed', '#7a5fb8'),
    },
    annotation: {
      setting: v('--ann-setting', '#3b6fd8'),
      slot: v('--ann-slot', '#3b6fd8'),
      pause: v('--ann-pause', '#6b7280'),
      backoff: v('--ann-backoff', '#e0631d'),
      recovery: v('--ann-recovery', '#2e9d5b'),
      'retry-after': v('--ann-retry-after', '#d13c3c'),
      warning: v('--ann-warning', '#c98a12'),
      rampup: v('--ann-rampup', '#8a4fd1'),
      robots: v('--ann-robots', '#13918f'),
    },
    series: {
      delay: v('--chart-delay', '#2f62c8'),
      target: v('--chart-target', '#8a94a6'),
      latency: v('--chart-latency', '#2e9d5b'),
      inflight: v('--chart-inflight', '#2f62c8'),
      limit: v('--chart-limit', '#d13c3c'),
      backoff: v('--chart-backoff', '#e0631d'),
      whatif: v('--chart-whatif', '#c23fa0'),
      requests: v('--chart-requests', '#2f62c8'),
    },
    palette: [
      v('--chart-p1', '#2f62c8'), v('--chart-p2', '#e0631d'), v('--chart-p3', '#2e9d5b'), v('--chart-p4', '#c23fa0'), v('--chart-p5', '#13918f'),
    ],
  };
}

/** `#rrggbb` (or any colour) with an alpha, for fills. */
export function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{6})$/i.exec(color.trim());
  if (!m) return color;
  const n = parseInt(m[1], 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

/** Calls `listener` when the window's colour scheme flips; returns the unsubscribe function. */
export function onSchemeChange(listener: () => void): () => void {
  if (typeof matchMedia !== 'function') return () => {};
  const mq = matchMedia('(prefers-color-scheme: dark)');
  mq.addEventListener('change', listener);
  return () => mq.removeEventListener('change', listener);
}
