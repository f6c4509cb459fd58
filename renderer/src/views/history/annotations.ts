// Turns a crawl's recorded changes and warnings into the marks drawn on a slot's time axis: what
// changed (settings, the user's pins, pauses and backoff resets, the crawl paused or stopped, backoff
// steps, Retry-After blocks, rampup cuts, robots) and who changed it, in the journal's words.

import type { ChangeName, ChangeRecord, EventRecord, ThrottleNote } from '../../../../shared/types';
import type { ChartAnnotation } from '../../charts/annotation-plugin';
import type { AnnotationKind } from '../../charts/theme';
import { changeWords, resetValue, timeOfDay } from '../journal/journal-words';

export { resetValue };

/** A change's name as the renderer reads it: a setting's, or one of the shared slot change names. */
const nameOf = (c: ChangeRecord): ChangeName => c.setting as ChangeName;

/** The throttle's note that a Retry-After block began (its text says why). */
const RETRY_AFTER: ThrottleNote = 'retry-after';

/** The chart mark's kind for a change (its colour), by what changed. */
function kindOf(c: ChangeRecord): AnnotationKind {
  if (c.slot === null) return nameOf(c) === 'paused' ? 'pause' : 'setting';
  switch (nameOf(c)) {
    case 'backoff_level': return Number(c.newValue ?? 0) > Number(c.oldValue ?? 0) ? 'backoff' : 'recovery';
    case 'blocked_until': return 'retry-after';
    case 'rampup_rate': return 'rampup';
    case 'crawl_delay': return 'robots';
    case 'paused': return 'pause';
    case 'backoff_reset': return 'recovery';
    default: return 'slot';
  }
}

/**
 * The mark of one change, titled in the journal's words (journal-words.ts), or null for a change that
 * changed nothing. A pause (of the slot, or of the whole crawl) is a band until its resume.
 */
export function changeAnnotation(c: ChangeRecord): ChartAnnotation | null {
  const words = changeWords(c);
  if (!words) return null;
  const kind = kindOf(c);
  const a: ChartAnnotation = { t: c.t, source: c.source, kind, title: words.title, ...(words.detail ? { detail: words.detail } : {}) };
  if (kind === 'pause' && c.newValue === true) return { ...a, until: Infinity };
  if (nameOf(c) === 'blocked_until' && typeof c.newValue === 'number') return { ...a, until: c.newValue };
  return a;
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
  const crawlResumes = changes.filter((c) => c.slot === null && nameOf(c) === 'paused' && c.newValue === false).map((c) => c.t).sort((a, b) => a - b);
  const resets = own.filter((c) => nameOf(c) === 'backoff_reset' && resetValue(c.oldValue).blockedUntil !== null).map((c) => c.t);
  const firstAfter = (times: readonly number[], t: number): number | undefined => times.find((x) => x >= t);
  const out: ChartAnnotation[] = [];
  for (const c of changes) {
    if (c.slot !== null && c.slot !== slot) continue;
    let a = changeAnnotation(c);
    if (!a) continue;
    if (a.kind === 'pause' && a.until !== undefined) {
      const resumed = firstAfter(c.slot === null ? crawlResumes : resumes, a.t);
      a = resumed === undefined ? { ...a, detail: 'still paused: no request starts until it is resumed' } : { ...a, until: resumed };
    }
    if (a.kind === 'retry-after' && a.until !== undefined) {
      const reason = reasonAt(a.t);
      const reset = firstAfter(resets, a.t);
      if (reset !== undefined && reset < a.until) a = { ...a, until: reset, detail: `${reason ?? a.detail ?? ''}; lifted by a backoff reset at ${timeOfDay(reset)}` };
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
