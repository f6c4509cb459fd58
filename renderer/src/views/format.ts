// How the console writes numbers, times and throttle causes, in one place so every view says
// the same thing the same way (delays in seconds, latencies in ms, causes in words).

import type { SlotState } from '../../../shared/contract';
import type { DelayCause } from '../../../shared/types';

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export const DASH = '—';

export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? DASH : integer.format(n);
}

/** Why a slot waits as long as it does, in the words of the slot table. */
export const CAUSE_WORDS: Readonly<Record<DelayCause, string>> = {
  none: 'no delay',
  floor: 'download delay',
  autothrottle: 'autothrottle',
  backoff: 'backoff',
  rampup: 'rampup',
  'crawl-delay': 'crawl-delay',
  'retry-after': 'retry-after',
  pin: 'pinned',
  ratelimit: 'ratelimit',
};

/** "0.50 s · autothrottle", "blocked · retry-after". */
export function formatDelay(delay: number, cause: DelayCause, state: SlotState): string {
  if (cause === 'retry-after' || state === 'blocked') return `blocked · ${CAUSE_WORDS[cause]}`;
  if (cause === 'none') return formatSeconds(delay);
  return `${formatSeconds(delay)} · ${CAUSE_WORDS[cause]}`;
}

/** Time until a slot's next request may start: "now", "350 ms", "1.2 s", "4 min 05 s", "27 h 49 min", or a dash when nothing waits. */
export function formatStartIn(ms: number | null): string {
  if (ms === null) return DASH;
  if (ms <= 0) return 'now';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatDuration(ms);
}

/** A delay in seconds: "0.50 s", "12.30 s" under a minute, a duration after ("1 min 40 s", "27 h 46 min"). */
export function formatSeconds(seconds: number): string {
  return seconds < 60 ? `${seconds.toFixed(2)} s` : formatDuration(seconds * 1000);
}

/** A delay cell (the column says seconds): "0.50", "12.30", and a duration from a minute on ("27 h 46 min"). */
export function formatDelayCell(seconds: number): string {
  return seconds < 60 ? seconds.toFixed(2) : formatDuration(seconds * 1000);
}

/** A latency given in seconds, written in whole milliseconds. */
export function formatLatencyMs(seconds: number | null): string {
  return seconds === null ? DASH : integer.format(Math.round(seconds * 1000));
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "14:03:27" for today, "2026-03-01 14:03" otherwise. */
export function formatWhen(epochMs: number | null, now = Date.now()): string {
  if (epochMs === null) return DASH;
  const d = new Date(epochMs);
  const today = new Date(now);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (d.toDateString() === today.toDateString()) return `${time}:${pad(d.getSeconds())}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** "42 s", "3 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}
