// The Requests grid's columns (label, width, and the order they give way in when the panel is
// narrow), the words for a row's status, timing and delay, and the waterfall's phases of a row.

import type { RequestRow } from '../../../../shared/contract';
import { CAUSE_WORDS, DASH, formatCount } from '../format';
import { formatBytes } from '../slot-table/columns';

export interface RequestColumn {
  readonly id: string;
  readonly label: string;
  /** Pixels (the URL column takes what is left, at least its width). */
  readonly width: number;
  readonly align: 'left' | 'num';
  /** 0 always shown; higher numbers give way first when the grid is narrow. */
  readonly priority: number;
  readonly title: string;
}

export const REQUEST_COLUMNS: readonly RequestColumn[] = [
  { id: 'time', label: 'Ended', width: 104, align: 'left', priority: 3, title: 'When the response ended or the download failed (local time)' },
  { id: 'url', label: 'URL', width: 180, align: 'left', priority: 0, title: 'The requested URL' },
  { id: 'slot', label: 'Slot', width: 128, align: 'left', priority: 1, title: 'The throttling slot (by default the host)' },
  { id: 'status', label: 'Status', width: 62, align: 'left', priority: 0, title: 'HTTP status, or the kind of failure of a download that got none' },
  { id: 'method', label: 'Method', width: 62, align: 'left', priority: 7, title: 'HTTP method' },
  { id: 'latency', label: 'Latency ms', width: 74, align: 'num', priority: 1, title: 'From hand-over to the HTTP client until the response headers, ms (what AutoThrottle uses)' },
  { id: 'waited', label: 'Queued ms', width: 76, align: 'num', priority: 4, title: "Time the request waited in its slot's queue before it started, ms" },
  { id: 'delay', label: 'Delay · set by', width: 122, align: 'left', priority: 2, title: "The slot's delay after this response, seconds, and what set it" },
  { id: 'backoff', label: 'Backoff', width: 64, align: 'num', priority: 5, title: "The slot's backoff level after this response (0: none)" },
  { id: 'retry', label: 'Retry', width: 46, align: 'num', priority: 5, title: 'Retries of this request before this attempt (0: its first attempt)' },
  { id: 'size', label: 'Size', width: 62, align: 'num', priority: 4, title: 'Body bytes as received' },
  { id: 'type', label: 'Type', width: 86, align: 'left', priority: 6, title: 'Content-Type of the response' },
  { id: 'waterfall', label: 'Waterfall', width: 150, align: 'left', priority: 2, title: 'Queued (grey) → sent → headers (blue, waiting for the server) → end (green, the body); red for a failure' },
];

/** The columns that fit `width` px (the URL column keeps at least its width), in their order. */
export function columnsFor(width: number): readonly RequestColumn[] {
  const byPriority = [...REQUEST_COLUMNS].sort((a, b) => a.priority - b.priority);
  const shown = new Set<string>();
  let used = 8;
  for (const c of byPriority) {
    if (c.priority > 0 && used + c.width > width) continue;
    shown.add(c.id);
    used += c.width;
  }
  return REQUEST_COLUMNS.filter((c) => shown.has(c.id));
}

/** The grid-template-columns of these columns (the URL column flexes). */
export function templateOf(columns: readonly RequestColumn[]): string {
  return columns.map((c) => (c.id === 'url' ? `minmax(${c.width}px, 1fr)` : `${c.width}px`)).join(' ');
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "14:03:27.123", local time. */
export function clockMs(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Whole milliseconds ("87", "12,204"): the columns say "ms" once, in their headers. */
export function msCell(ms: number | null): string {
  return ms === null ? DASH : formatCount(Math.round(ms));
}

/** The status cell: the code, or the failure's kind. */
export function statusWords(r: RequestRow): string {
  if (r.status !== null) return String(r.status);
  return r.errorKind ?? 'failed';
}

/** The tone of a status: ok, redirect, client error, 429, server error, failure. */
export function statusTone(r: RequestRow): 'ok' | 'info' | 'warn' | 'bad' | 'muted' {
  const s = r.status;
  if (s === null) return 'bad';
  if (s >= 500) return 'bad';
  if (s === 429) return 'warn';
  if (s >= 400) return 'warn';
  if (s >= 300) return 'info';
  return 'ok';
}

/** "0.30 s · backoff". */
export function delayWords(r: RequestRow): string {
  return `${r.delayAfter.toFixed(2)} s · ${CAUSE_WORDS[r.delayCause]}`;
}

export function sizeWords(r: RequestRow): string {
  return r.status === null && r.bytes === 0 ? DASH : formatBytes(r.bytes);
}

/** The Content-Type without its parameters ("text/html"). */
export function typeWords(r: RequestRow): string {
  return r.contentType ? r.contentType.split(';')[0].trim() : DASH;
}

/** The phases of a row in ms from when it was queued: sent (waited), headers (latency), end. */
export interface Phases {
  readonly queued: number;
  readonly sent: number;
  /** Null for a download that failed before the headers. */
  readonly headers: number | null;
  readonly end: number;
  readonly failed: boolean;
}

export function phasesOf(r: RequestRow): Phases {
  const queuedAt = r.startedAt - r.waitMs;
  const sent = r.startedAt - queuedAt;
  const headers = r.latency === null ? null : sent + r.latency * 1000;
  return { queued: 0, sent, headers, end: Math.max(sent, r.t - queuedAt), failed: r.status === null };
}

/** A round scale (ms) at least `ms` long, so the waterfall's scale moves in steps, not with every row. */
export function niceScale(ms: number): number {
  const steps = [50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000];
  for (const s of steps) if (ms <= s) return s;
  return Math.ceil(ms / 600_000) * 600_000;
}

/** "500 ms", "2 s", "1 min". */
export function scaleWords(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1000} s`;
  return `${ms / 60_000} min`;
}
