// Turns a crawl's recorded changes and warnings into the marks drawn on a slot's time axis: what
// changed (settings, backoff steps, Retry-After blocks, rampup cuts, robots) and who changed it.

import type { ChangeRecord, EventRecord } from '../../../../shared/types';
import type { ChartAnnotation } from '../../charts/annotation-plugin';
import type { AnnotationKind } from '../../charts/theme';

const show = (v: unknown): string => {
  if (v === undefined || v === null) return 'none';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
  if (typeof v === 'string') return v;
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
};

const SLOT_PROPERTY_WORDS: Readonly<Record<string, string>> = {
  delay: 'Delay pinned',
  concurrency: 'Concurrency pinned',
  pause: 'Slot paused',
};

/** The mark of one change, or null for changes that are not worth a mark. */
export function changeAnnotation(c: ChangeRecord): ChartAnnotation | null {
  const base = { t: c.t, source: c.source };
  switch (c.setting) {
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
    default:
      if (c.slot === null) return { ...base, kind: 'setting', title: `${c.setting}: ${show(c.oldValue)} → ${show(c.newValue)}` };
      return { ...base, kind: 'slot', title: `${SLOT_PROPERTY_WORDS[c.setting] ?? c.setting}: ${show(c.oldValue)} → ${show(c.newValue)}` };
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
  const said = infos.filter((e) => e.code === 'retry-after' && e.slot === slot).sort((a, b) => a.t - b.t);
  const reasonAt = (t: number): string | undefined => {
    let best: EventRecord | undefined;
    for (const e of said) if (Math.abs(e.t - t) <= 250 && (!best || Math.abs(e.t - t) < Math.abs(best.t - t))) best = e;
    return best?.text;
  };
  const out: ChartAnnotation[] = [];
  for (const c of changes) {
    if (c.slot !== null && c.slot !== slot) continue;
    const a = changeAnnotation(c);
    if (!a) continue;
    const reason = a.kind === 'retry-after' && a.until !== undefined ? reasonAt(a.t) : undefined;
    out.push(reason ? { ...a, detail: reason } : a);
  }
  for (const w of warnings) if (w.slot === null || w.slot === slot) out.push(warningAnnotation(w));
  return out.sort((a, b) => a.t - b.t);
}

/** The slot's backoff level over time, from its recorded steps: [t, level] change points. */
export function backoffSteps(slot: string, changes: readonly ChangeRecord[]): { t: number; level: number }[] {
  return changes
    .filter((c) => c.slot === slot && c.setting === 'backoff_level')
    .sort((a, b) => a.t - b.t)
    .map((c) => ({ t: c.t, level: Number(c.newValue ?? 0) }));
}

/** Retry-After blocks of the slot: [from, until] (epoch ms). */
export function retryAfterBlocks(slot: string, changes: readonly ChangeRecord[]): { from: number; until: number }[] {
  return changes
    .filter((c) => c.slot === slot && c.setting === 'blocked_until' && typeof c.newValue === 'number')
    .sort((a, b) => a.t - b.t)
    .map((c) => ({ from: c.t, until: c.newValue as number }));
}
