// Turns a crawl's recorded changes and warnings into the marks drawn on a slot's time axis: what
// changed (settings, the user's pins, pauses and backoff resets, backoff steps, Retry-After blocks,
// rampup cuts, robots) and who changed it. Change names are the shared SLOT_CHANGES, never re-typed.

import type { BackoffResetValue, ChangeName, ChangeRecord, EventRecord, ThrottleNote } from '../../../../shared/types';
import type { ChartAnnotation } from '../../charts/annotation-plugin';
import type { AnnotationKind } from '../../charts/theme';

const show = (v: unknown): string => {
  if (v === undefined || v === null) return 'none';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
  if (typeof v === 'string') return v;
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A `backoff_reset` value as recorded (missing parts read as none). */
export function resetValue(v: unknown): BackoffResetValue {
  const o = (typeof v === 'object' && v !== null ? v : {}) as Partial<Record<keyof BackoffResetValue, unknown>>;
  return { level: isNumber(o.level) ? o.level : 0, blockedUntil: isNumber(o.blockedUntil) ? o.blockedUntil : null };
}

/** A change's name as the renderer reads it: a setting's, or one of the shared slot change names. */
const nameOf = (c: ChangeRecord): ChangeName => c.setting as ChangeName;

/** The throttle's note that a Retry-After block began (its text says why). */
const RETRY_AFTER: ThrottleNote = 'retry-after';

/** The mark of one change, or null for changes that are not worth a mark. */
export function changeAnnotation(c: ChangeRecord): ChartAnnotation | null {
  const base = { t: c.t, source: c.source };
  if (c.slot === null) return { ...base, kind: 'setting', title: `${c.setting}: ${show(c.oldValue)} → ${show(c.newValue)}` };
  const name = nameOf(c);
  switch (name) {
    case 'backoff_level': {
      const from = Number(c.oldValue ?? 0);
      const to = Number(c.newValue ?? 0);
      const kind: AnnotationKind = to > from ? 'backoff' : 'recovery';
      return { ...base, kind, title: `Backoff level ${from} → ${to}`, detail: to > from ? 'a backoff step: the slot waits longer' : 'recovered a level after a quiet window' };
    }
    case 'blocked_until': {
      const until = typeof c.newValue === 'number' ? c.newValue : null;
      if (until === null) return { ...base, kind: 'retry-after', title: 'Block lifted' };
      return { ...base, kind: 'retry-after', until, title: `Blocked ${((until - c.t) / 1000).toFixed(1)} s (Retry-After)`, detail: `no request until ${new Date(until).toLocaleTimeString()}` };
    }
    case 'rampup_rate':
      return { ...base, kind: 'rampup', title: `Rampup cut ${show(c.oldValue)} → ${show(c.newValue)} req/s` };
    case 'crawl_delay':
      return { ...base, kind: 'robots', title: `Crawl-delay ${show(c.newValue)} s`, detail: c.oldValue === null || c.oldValue === undefined ? 'read from robots.txt' : `was ${show(c.oldValue)} s` };
    case 'pin_delay':
      return isNumber(c.newValue)
        ? { ...base, kind: 'slot', title: `Delay pinned at ${show(c.newValue)} s`, detail: isNumber(c.oldValue) ? `was pinned at ${show(c.oldValue)} s` : 'the slot waits this long between request starts, whatever else says' }
        : { ...base, kind: 'slot', title: 'Delay pin cleared', detail: isNumber(c.oldValue) ? `was pinned at ${show(c.oldValue)} s` : undefined };
    case 'pin_concurrency':
      return isNumber(c.newValue)
        ? { ...base, kind: 'slot', title: `Concurrency pinned at ${show(c.newValue)}`, detail: isNumber(c.oldValue) ? `was pinned at ${show(c.oldValue)}` : 'at most this many requests in flight at once' }
        : { ...base, kind: 'slot', title: 'Concurrency pin cleared', detail: isNumber(c.oldValue) ? `was pinned at ${show(c.oldValue)}` : undefined };
    case 'paused':
      return c.newValue === true
        ? { ...base, kind: 'pause', until: Infinity, title: 'Slot paused', detail: 'no request starts until it is resumed' }
        : { ...base, kind: 'pause', title: 'Slot resumed' };
    case 'backoff_reset': {
      const was = resetValue(c.oldValue);
      const lifted = was.blockedUntil !== null && was.blockedUntil > c.t ? `; lifted the Retry-After block until ${new Date(was.blockedUntil).toLocaleTimeString()}` : '';
      return { ...base, kind: 'recovery', title: `Backoff reset: level ${was.level} → 0`, detail: `backoff level, rampup memory and block forgotten${lifted}` };
    }
    case 'delay':
      return { ...base, kind: 'slot', title: `AutoThrottle delay ${show(c.oldValue)} → ${show(c.newValue)} s` };
    default:
      return { ...base, kind: 'slot', title: `${c.setting}: ${show(c.oldValue)} → ${show(c.newValue)}` };
  }
}

export function warningAnnotation(w: EventRecord): ChartAnnotation {
  return { t: w.t, kind: 'warning', source: 'engine', title: `Warning: ${w.code}`, detail: w.text };
}

/**
 * Marks for `slot` (its own changes, the crawl-wide setting changes and the warnings of the slot or
 * the whole crawl), oldest first. Retry-After marks take their reason from the 'retry-after' info events.
 */
export function slotAnnotations(
  slot: string, changes: readonly ChangeRecord[], warnings: readonly EventRecord[], infos: readonly EventRecord[] = [],
): ChartAnnotation[] {
  // The info event is stamped when it was logged, a moment after the response's time the change carries.
  const said = infos.filter((e) => e.code === RETRY_AFTER && e.slot === slot).sort((a, b) => a.t - b.t);
  const reasonAt = (t: number): string | undefined => {
    let best: EventRecord | undefined;
    for (const e of said) if (Math.abs(e.t - t) <= 250 && (!best || Math.abs(e.t - t) < Math.abs(best.t - t))) best = e;
    return best?.text;
  };
  // A pause lasts until the slot's next resume; a block ends early at a backoff reset that lifted it.
  const own = changes.filter((c) => c.slot === slot).sort((a, b) => a.t - b.t);
  const resumes = own.filter((c) => nameOf(c) === 'paused' && c.newValue === false).map((c) => c.t);
  const resets = own.filter((c) => nameOf(c) === 'backoff_reset' && resetValue(c.oldValue).blockedUntil !== null).map((c) => c.t);
  const firstAfter = (times: readonly number[], t: number): number | undefined => times.find((x) => x >= t);
  const out: ChartAnnotation[] = [];
  for (const c of changes) {
    if (c.slot !== null && c.slot !== slot) continue;
    let a = changeAnnotation(c);
    if (!a) continue;
    if (a.kind === 'pause' && a.until !== undefined) {
      const resumed = firstAfter(resumes, a.t);
      a = resumed === undefined ? { ...a, detail: 'still paused: no request starts until it is resumed' } : { ...a, until: resumed };
    }
    if (a.kind === 'retry-after' && a.until !== undefined) {
      const reason = reasonAt(a.t);
      const reset = firstAfter(resets, a.t);
      if (reset !== undefined && reset < a.until) a = { ...a, until: reset, detail: `${reason ?? a.detail ?? ''}; lifted by a backoff reset at ${new Date(reset).toLocaleTimeString()}` };
      else if (reason) a = { ...a, detail: reason };
    }
    out.push(a);
  }
  for (const w of warnings) if (w.slot === null || w.slot === slot) out.push(warningAnnotation(w));
  return out.sort((a, b) => a.t - b.t);
}

/** The slot's backoff level over time, from its recorded steps and the user's resets (to 0): [t, level] change points. */
export function backoffSteps(slot: string, changes: readonly ChangeRecord[]): { t: number; level: number }[] {
  return changes
    .filter((c) => c.slot === slot && (nameOf(c) === 'backoff_level' || nameOf(c) === 'backoff_reset'))
    .sort((a, b) => a.t - b.t)
    .map((c) => ({ t: c.t, level: nameOf(c) === 'backoff_reset' ? resetValue(c.newValue).level : Number(c.newValue ?? 0) }));
}
