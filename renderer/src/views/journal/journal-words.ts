// Every recorded change in words, once, for the journal and the marks on the charts: what changed, to
// what, and who changed it ("Backoff reset by you: level 3 → 0", "Delay pinned to 0.30 s by you",
// "Crawl paused by you"); never a change's internal name or JSON. A change that changed nothing is no row.

import { CRAWL_CHANGES, type BackoffResetValue, type ChangeRecord, type CrawlChange, type SlotChange } from '../../../../shared/types';
import { settingSpec } from '../../../../shared/settings';
import { sameSetting, secondsWords, settingLabel, valueWords } from '../setting-words';

/** Who changed it: "by you", "by AutoThrottle"… */
export const SOURCE_WORDS: Readonly<Record<string, string>> = {
  user: 'by you',
  config: 'by the crawl config',
  autothrottle: 'by AutoThrottle',
  backoff: 'by backoff',
  rampup: 'by rampup',
  robots: 'by robots.txt',
  engine: 'by the engine',
};

export const byWhom = (source: string): string => SOURCE_WORDS[source] ?? `by ${source}`;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const two = (n: number) => String(n).padStart(2, '0');

/** "14:03:27", local time, as the rest of the console writes times of day. */
export function timeOfDay(ms: number): string {
  const d = new Date(ms);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** A delay: two decimals below 10 s ("0.30 s"), else as a duration. */
export function delayWords(s: number): string {
  return s < 10 ? `${s.toFixed(2)} s` : secondsWords(s);
}

/** A `backoff_reset` value as recorded (missing parts read as none). */
export function resetValue(v: unknown): BackoffResetValue {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Partial<Record<keyof BackoffResetValue, unknown>>;
  return { level: isNumber(o.level) ? o.level : 0, blockedUntil: isNumber(o.blockedUntil) ? o.blockedUntil : null };
}

/** A crawl change (slot null): the crawl started, paused, resumed or stopped. */
const isCrawlChange = (c: ChangeRecord): boolean => c.slot === null && (CRAWL_CHANGES as readonly string[]).includes(c.setting) && settingSpec(c.setting) === undefined;

/** True for a change that changed nothing (blocked_until X → X, a setting set to its own value): no row, no mark. */
export function isNoop(c: ChangeRecord): boolean {
  if (isCrawlChange(c)) return c.setting !== 'started' && c.setting !== 'stopped' && sameSetting(c.oldValue ?? null, c.newValue ?? null);
  if (c.slot !== null && (c.setting as SlotChange) === 'backoff_reset') {
    const was = resetValue(c.oldValue);
    return was.level === 0 && (was.blockedUntil === null || was.blockedUntil <= c.t);
  }
  return sameSetting(c.oldValue ?? null, c.newValue ?? null);
}

export interface ChangeWords {
  /** One line: what happened and who did it. */
  readonly title: string;
  /** What it means or what it was before, when that helps. */
  readonly detail?: string;
}

/** A change in words; null for one that changed nothing. */
export function changeWords(c: ChangeRecord): ChangeWords | null {
  if (isNoop(c)) return null;
  const by = byWhom(c.source);
  if (isCrawlChange(c)) {
    switch (c.setting as CrawlChange | 'started') {
      case 'started':
        return { title: `Crawl started ${by}` };
      case 'paused':
        if (c.newValue === true) return { title: `Crawl paused ${by}`, detail: 'requests in flight finish; nothing new starts' };
        return { title: `Crawl resumed ${by}`, ...(typeof c.oldValue === 'string' && c.oldValue !== 'paused' ? { detail: `it was ${c.oldValue}; it goes on from its saved frontier` } : {}) };
      case 'stopped':
        return { title: `Crawl stopped ${by}`, detail: 'requests in flight were cancelled; Resume goes on from its frontier' };
      default:
    }
  }
  if (c.slot === null) {
    const spec = settingSpec(c.setting);
    if (spec) {
      return { title: `${settingLabel(c.setting)} set to ${valueWords(c.setting, c.newValue)} ${by}`, detail: `was ${valueWords(c.setting, c.oldValue)} (${c.setting})` };
    }
  }
  switch (c.setting as SlotChange) {
    case 'pin_delay':
      return isNumber(c.newValue)
        ? { title: `Delay pinned to ${delayWords(c.newValue)} ${by}`, detail: isNumber(c.oldValue) ? `was pinned to ${delayWords(c.oldValue)}` : 'the slot waits this long between request starts, whatever else says' }
        : { title: `Delay pin cleared ${by}`, ...(isNumber(c.oldValue) ? { detail: `was pinned to ${delayWords(c.oldValue)}` } : {}) };
    case 'pin_concurrency':
      return isNumber(c.newValue)
        ? { title: `Concurrency pinned to ${c.newValue} ${by}`, detail: isNumber(c.oldValue) ? `was pinned to ${c.oldValue}` : 'at most this many requests in flight at once' }
        : { title: `Concurrency pin cleared ${by}`, ...(isNumber(c.oldValue) ? { detail: `was pinned to ${c.oldValue}` } : {}) };
    case 'paused':
      return c.newValue === true
        ? { title: `Slot paused ${by}`, detail: 'no request of it starts until it is resumed' }
        : { title: `Slot resumed ${by}` };
    case 'backoff_reset': {
      const was = resetValue(c.oldValue);
      const lifted = was.blockedUntil !== null && was.blockedUntil > c.t ? `; lifted the Retry-After block until ${timeOfDay(was.blockedUntil)}` : '';
      return { title: `Backoff reset ${by}: level ${was.level} → 0`, detail: `backoff level, rampup memory and block forgotten${lifted}` };
    }
    case 'crawl_delay':
      return { title: `Crawl-delay ${isNumber(c.newValue) ? secondsWords(c.newValue) : 'none'}`, detail: c.oldValue === null || c.oldValue === undefined ? 'read from robots.txt' : `was ${isNumber(c.oldValue) ? secondsWords(c.oldValue) : 'none'}` };
    case 'backoff_level': {
      const from = Number(c.oldValue ?? 0);
      const to = Number(c.newValue ?? 0);
      return { title: `Backoff level ${from} → ${to}`, detail: to > from ? 'a backoff step: the slot waits longer' : 'recovered a level after a quiet window' };
    }
    case 'blocked_until': {
      const until = isNumber(c.newValue) ? c.newValue : null;
      if (until === null) return { title: 'Block lifted' };
      return { title: `Blocked ${((until - c.t) / 1000).toFixed(1)} s (Retry-After)`, detail: `no request until ${timeOfDay(until)}` };
    }
    case 'rampup_rate':
      return { title: `Rampup cut ${isNumber(c.oldValue) ? Number(c.oldValue.toFixed(3)) : '?'} → ${isNumber(c.newValue) ? Number(c.newValue.toFixed(3)) : '?'} req/s` };
    case 'delay':
      return { title: `AutoThrottle delay ${isNumber(c.oldValue) ? delayWords(c.oldValue) : '?'} → ${isNumber(c.newValue) ? delayWords(c.newValue) : '?'}` };
    default:
      return { title: `${settingLabel(c.setting)} changed ${by}`, detail: `${valueWords(c.setting, c.oldValue)} → ${valueWords(c.setting, c.newValue)}` };
  }
}

/** Whether a change is something the operator did (the journal's rows by default). */
export const byOperator = (c: ChangeRecord): boolean => c.source === 'user';
