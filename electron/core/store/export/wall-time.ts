// Times as people type them and as logs print them: epoch milliseconds, ISO 8601 and Scrapy's
// `YYYY-MM-DD HH:MM:SS[,mmm]`, read in a given time zone (local, UTC or a fixed offset).

/** `local`: this machine's time zone (DST included); otherwise a fixed offset east of UTC in minutes. */
export type TimeZoneSpec = 'local' | { readonly offsetMinutes: number };

/** What --tz accepts, for error messages. */
export const TIME_ZONE_ALLOWED = 'local, UTC, or an offset like +02:00 or -0530';

/** Parses `local`, `UTC`/`Z`/`GMT`, `+HH`, `+HH:MM` or `+HHMM` (and `-`); null when it is none of them. */
export function parseTimeZone(text: string): TimeZoneSpec | null {
  const t = text.trim();
  if (/^local$/i.test(t)) return 'local';
  if (/^(utc|z|gmt)$/i.test(t)) return { offsetMinutes: 0 };
  const m = /^(?:utc|gmt)?([+-])(\d{2})(?::?(\d{2}))?$/i.exec(t);
  if (!m) return null;
  const h = Number(m[2]);
  const min = Number(m[3] ?? 0);
  if (h > 14 || min > 59) return null;
  return { offsetMinutes: (m[1] === '-' ? -1 : 1) * (h * 60 + min) };
}

/** A calendar date and time of day; `ms` may carry sub-millisecond digits as a fraction. */
export interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly ms: number;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Whether every part is in range (no 25:00, no 31 April). */
export function validWallTime(w: WallTime): boolean {
  return (
    w.month >= 1 && w.month <= 12 && w.day >= 1 && w.day <= daysIn(w.year, w.month) &&
    w.hour <= 23 && w.minute <= 59 && w.second <= 60 && w.ms >= 0 && w.ms < 1000
  );
}

/** Epoch ms of a wall time in `tz`. */
export function wallTimeToEpoch(w: WallTime, tz: TimeZoneSpec): number {
  if (tz === 'local') {
    const d = new Date(2000, 0, 1, 0, 0, 0, 0);
    d.setFullYear(w.year, w.month - 1, w.day);
    d.setHours(w.hour, w.minute, w.second, 0);
    return d.getTime() + w.ms;
  }
  const d = new Date(Date.UTC(2000, 0, 1));
  d.setUTCFullYear(w.year, w.month - 1, w.day);
  d.setUTCHours(w.hour, w.minute, w.second, 0);
  return d.getTime() + w.ms - tz.offsetMinutes * 60_000;
}

/** Fraction digits after the seconds (`,123`, `.123456`) to milliseconds. */
export function fractionToMs(digits: string | undefined): number {
  return digits ? Number(`0.${digits}`) * 1000 : 0;
}

/** An offset written after a time (`Z`, `+0100`, `+01:00`, `-05`) in minutes; null if absent. */
export function offsetMinutes(text: string | undefined): number | null {
  if (!text) return null;
  const z = parseTimeZone(text);
  return z === null || z === 'local' ? null : z.offsetMinutes;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * A time given on the command line or in a query: epoch milliseconds (digits, maybe a fraction) or ISO 8601
 * (`2026-11-22`, `2026-11-22T10:00`, `2026-11-22 10:00:00.250`, with `Z` or `+01:00`). A time
 * without an offset is read in `tz` (this machine's time zone by default). Null when unreadable.
 */
export function parseTimeArg(text: string, tz: TimeZoneSpec = 'local'): number | null {
  const t = text.trim();
  if (/^\d{1,15}(?:\.\d+)?$/.test(t)) return Number(t);
  const m = ISO.exec(t);
  if (!m) return null;
  const w: WallTime = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    ms: fractionToMs(m[7]),
  };
  if (!validWallTime(w)) return null;
  const off = offsetMinutes(m[8]);
  return wallTimeToEpoch(w, off === null ? tz : { offsetMinutes: off });
}

/** What parseTimeArg accepts, for error messages. */
export const TIME_ALLOWED = 'epoch milliseconds like 1795341600000, or ISO 8601 like 2026-11-22T10:00:00Z; without an offset it is local time';
