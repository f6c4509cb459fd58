// CSV export per RFC 4180: a header row, CRLF line ends, and a field quoted (inner quotes doubled)
// whenever it holds a comma, a quote, CR or LF. Nulls are empty fields; numbers keep every digit.
import type { ResponseRecord } from '../../../../shared/types';
import { EXPORT_FIELDS, fieldValues } from './fields';

const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field: null/undefined empty, booleans true/false, numbers in JavaScript's shortest exact form. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = typeof v === 'string' ? v : String(v);
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header row (with its CRLF). */
export function csvHeader(): string {
  return `${EXPORT_FIELDS.map((f) => csvField(f.name)).join(',')}\r\n`;
}

/** One record of crawl `crawlId` (with its CRLF). */
export function csvLine(crawlId: number, r: ResponseRecord): string {
  return `${fieldValues(crawlId, r).map(csvField).join(',')}\r\n`;
}
