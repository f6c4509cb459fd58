// The slot grid's columns (label, what a header click sorts by, width) and the words for what
// binds a slot's delay (SPEC 4.4: "the GUI shows it in words"), declared once for header and rows.

import type { SlotTuple } from '../../../../shared/contract';
import type { DelayCause } from '../../../../shared/types';
import { cell, type SlotColumn } from '../../store/slot-table-store';
import { formatSeconds } from '../format';

export interface GridColumn {
  readonly id: string;
  readonly label: string;
  /** What a click on the header sorts by; none for the pin and action columns. */
  readonly sort?: SlotColumn;
  /** First direction of a click: names and "next start" ascending, counts and delays largest first. */
  readonly first?: 'asc' | 'desc';
  readonly align: 'left' | 'num' | 'center';
  /** The CSS grid track. */
  readonly width: string;
  /** Its narrowest width, px (the track's fixed size, or its minimum). */
  readonly minPx: number;
  /** Which columns give way first when the table is narrow: the highest number first; 0 never. */
  readonly priority: number;
  readonly title?: string;
}

export const GRID_COLUMNS: readonly GridColumn[] = [
  { id: 'pin', label: 'Pin', align: 'center', width: '26px', minPx: 26, priority: 0, title: 'Rows pinned to the top stay there whatever the sort' },
  { id: 'key', label: 'Slot', sort: 'key', first: 'asc', align: 'left', width: 'minmax(140px, 1fr)', minPx: 140, priority: 0, title: 'The download slot: a host, or a throttling scope' },
  { id: 'state', label: 'State', sort: 'state', first: 'asc', align: 'left', width: '74px', minPx: 74, priority: 0, title: 'active / waiting / backoff / paused (by hand, or with the crawl) / blocked (Retry-After) / idle' },
  { id: 'inflight', label: 'In flight', sort: 'inFlight', align: 'num', width: '56px', minPx: 56, priority: 2, title: 'Requests in flight / concurrency allowed' },
  { id: 'target', label: 'Target', sort: 'target', align: 'num', width: '46px', minPx: 46, priority: 6, title: 'AutoThrottle target concurrency (— when AutoThrottle is off)' },
  { id: 'delay', label: 'Delay', sort: 'delay', align: 'num', width: '90px', minPx: 90, priority: 0, title: 'Effective delay between request starts, seconds (a long one as hours and minutes)' },
  { id: 'cause', label: 'Delay set by', sort: 'cause', first: 'asc', align: 'left', width: '110px', minPx: 110, priority: 1, title: 'Which of floor, AutoThrottle, backoff, Crawl-delay, Retry-After and pin binds the delay' },
  { id: 'next', label: 'Next start', sort: 'nextStartAt', first: 'asc', align: 'num', width: '90px', minPx: 90, priority: 1, title: 'Time until the next queued request may start' },
  { id: 'latency', label: 'Latency ms', sort: 'avgLatency', align: 'num', width: '90px', minPx: 90, priority: 3, title: 'Last / average response latency, milliseconds (sorts by the average)' },
  { id: 'requests', label: 'Requests', sort: 'requests', align: 'num', width: '70px', minPx: 70, priority: 1 },
  { id: 's2xx', label: '2xx', sort: 's2xx', align: 'num', width: '50px', minPx: 50, priority: 5 },
  { id: 's3xx', label: '3xx', sort: 's3xx', align: 'num', width: '42px', minPx: 42, priority: 8 },
  { id: 's4xx', label: '4xx', sort: 's4xx', align: 'num', width: '46px', minPx: 46, priority: 4, title: '4xx responses, 429 included' },
  { id: 's5xx', label: '5xx', sort: 's5xx', align: 'num', width: '46px', minPx: 46, priority: 3 },
  { id: 's429', label: '429', sort: 's429', align: 'num', width: '46px', minPx: 46, priority: 2, title: 'Too Many Requests' },
  { id: 'backoff', label: 'Backoff', sort: 'backoffLevel', align: 'num', width: '56px', minPx: 56, priority: 2, title: 'Backoff level (0: none)' },
  { id: 'queued', label: 'Queued', sort: 'queued', align: 'num', width: '58px', minPx: 58, priority: 4 },
  { id: 'bytes', label: 'Bytes', sort: 'bytes', align: 'num', width: '62px', minPx: 62, priority: 7, title: 'Body bytes received' },
  { id: 'action', label: 'Actions', align: 'left', width: '114px', minPx: 114, priority: 0 },
];

/** The row's horizontal padding, px (.slot-row). */
const ROW_PADDING_PX = 8;

/**
 * The columns that fit `widthPx` (the grid's inner width): the lowest priorities give way first (the
 * last of equal ones first), so the slot, its state, its delay and the row actions always stay.
 */
export function fitColumns(widthPx: number, columns: readonly GridColumn[] = GRID_COLUMNS): readonly GridColumn[] {
  const shown = new Set(columns);
  let total = columns.reduce((n, c) => n + c.minPx, ROW_PADDING_PX);
  const order = columns.map((c, i) => [c, i] as const).filter(([c]) => c.priority > 0).sort((a, b) => b[0].priority - a[0].priority || b[1] - a[1]);
  for (const [c] of order) {
    if (total <= widthPx) break;
    shown.delete(c);
    total -= c.minPx;
  }
  return columns.filter((c) => shown.has(c));
}

/** The least inner width `columns` need, px. */
export const columnsWidth = (columns: readonly GridColumn[]): number => columns.reduce((n, c) => n + c.minPx, ROW_PADDING_PX);

/** The grid-template-columns every row of the grid shares (of the columns shown). */
export const gridTemplate = (columns: readonly GridColumn[]): string => columns.map((c) => c.width).join(' ');

/** Short words for a cause, as the cell shows them. */
const CAUSE_SHORT: Readonly<Record<DelayCause, string>> = {
  none: 'no delay',
  floor: 'DOWNLOAD_DELAY',
  autothrottle: 'AutoThrottle',
  backoff: 'backoff',
  rampup: 'rampup',
  'crawl-delay': 'Crawl-delay',
  'retry-after': 'Retry-After',
  pin: 'pinned by hand',
  ratelimit: 'RateLimit headers',
};

/** What each cause means, for the cell's title. */
const CAUSE_LONG: Readonly<Record<DelayCause, string>> = {
  none: 'nothing holds the slot back',
  floor: 'the configured floor (DOWNLOAD_DELAY, or the slot\'s own delay) is the largest delay',
  autothrottle: 'AutoThrottle\'s delay, learned from the latency of recent responses, is the largest',
  backoff: 'backoff after error responses (BACKOFF_HTTP_CODES / exceptions) is the largest',
  rampup: 'rampup, probing the rate the server accepts, is the largest',
  'crawl-delay': 'the Crawl-delay of robots.txt is the largest',
  'retry-after': 'the server asked to wait (Retry-After) and the slot is blocked until then',
  pin: 'a delay pinned by hand replaces the learned one',
  ratelimit: 'the server\'s RateLimit headers (limit per window) pace the slot: one fewer than the limit per window, spread evenly',
};

/** "backoff, level 2", "Retry-After", "AutoThrottle": the binding cause in the row's words. */
export function causeWords(row: SlotTuple): string {
  const cause = cell(row, 'cause');
  if (cause === 'backoff') return `backoff, level ${cell(row, 'backoffLevel')}`;
  if (cause === 'pin') {
    // A long pin reads in the Delay column (as a duration); here the words stay short.
    const pin = cell(row, 'pinDelay') ?? cell(row, 'delay');
    return pin < 60 ? `pinned at ${pin} s` : 'pinned by hand';
  }
  return CAUSE_SHORT[cause];
}

/** "Waits 4.00 s between starts: backoff after error responses … (level 2)." */
export function causeSentence(row: SlotTuple): string {
  const cause = cell(row, 'cause');
  const delay = cell(row, 'delay');
  if (cause === 'none') return 'No delay: nothing holds the slot back.';
  const level = cause === 'backoff' ? ` (level ${cell(row, 'backoffLevel')})` : '';
  if (cause === 'retry-after') return `Blocked for ${formatSeconds(delay)} more: ${CAUSE_LONG[cause]}.`;
  return `Waits ${formatSeconds(delay)} between starts: ${CAUSE_LONG[cause]}${level}.`;
}

const units = ['B', 'KB', 'MB', 'GB', 'TB'];

/** "812 B", "4.1 KB", "12 MB" (powers of 1,024). */
export function formatBytes(n: number): string {
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
