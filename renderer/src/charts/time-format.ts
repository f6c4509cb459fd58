// Time on the charts' x axes: epoch ms on a linear scale (no date adapter needed), written as
// local clock time, with the precision the visible span calls for; the same words in the tables.

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "14:03:27". */
export function clock(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "14:03:27.412". */
export function clockMs(ms: number): string {
  return `${clock(ms)}.${pad(new Date(ms).getMilliseconds(), 3)}`;
}

/** "2026-03-01 14:03:27". */
export function dateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(ms)}`;
}

/** A tick label for `ms` when ticks are `stepMs` apart: milliseconds only when the step needs them. */
export function tickLabel(ms: number, stepMs: number): string {
  if (stepMs < 1000) return clockMs(ms);
  if (stepMs < 86_400_000) return clock(ms);
  return dateTime(ms).slice(0, 16);
}

/** "850 ms", "12.4 s", "3 min 20 s", "2 h 05 min". */
export function span(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(Math.round(s % 60))} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}

/** A linear x scale of epoch ms with clock-time ticks. */
export function timeScale(theme: { text: string; muted: string; grid: string }, extra: Record<string, unknown> = {}) {
  return {
    type: 'linear' as const,
    ticks: {
      color: theme.muted,
      maxRotation: 0,
      autoSkip: true,
      autoSkipPadding: 18,
      includeBounds: false,
      callback(this: { max: number; min: number }, value: number | string, _index: number, ticks: { value: number }[]) {
        const step = ticks.length > 1 ? ticks[1].value - ticks[0].value : this.max - this.min;
        return tickLabel(Number(value), step);
      },
    },
    grid: { color: theme.grid },
    border: { color: theme.grid },
    ...extra,
  };
}

/** A linear y scale with a title. */
export function valueScale(theme: { text: string; muted: string; grid: string }, title: string, extra: Record<string, unknown> = {}) {
  return {
    type: 'linear' as const,
    beginAtZero: true,
    title: { display: true, text: title, color: theme.muted, font: { size: 11 } },
    ticks: { color: theme.muted, maxTicksLimit: 6 },
    grid: { color: theme.grid },
    border: { color: theme.grid },
    ...extra,
  };
}
