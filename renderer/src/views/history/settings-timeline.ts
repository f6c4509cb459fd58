// A crawl's settings over time, rebuilt from its current settings and its recorded changes, and the
// per-slot figures the charts draw from them: AutoThrottle's target concurrency and the concurrency limit.

import type { Settings } from '../../../../shared/settings';
import type { ChangeRecord, SlotChange } from '../../../../shared/types';
import { concurrencyLimit as limitOf, scopeAutoThrottle, scopeConfig } from '../../../../shared/throttle-rules';

/** A value that holds from `t` (epoch ms) until the next step (null: none, e.g. no pin). */
export interface Step<V extends number | null = number> {
  readonly t: number;
  readonly value: V;
}

/** Whether a change is `name` (one of the shared slot change names) for `slot`. */
const slotChange = (c: ChangeRecord, slot: string, name: SlotChange): boolean => c.slot === slot && c.setting === name;

/** Settings in force from `t` on; the first entry has t = -Infinity (the crawl's start). */
export interface SettingsEpoch {
  readonly t: number;
  readonly settings: Settings;
}

/** Replays crawl-wide changes backwards from `current` to find the first settings, then forwards. */
export function settingsEpochs(current: Settings, changes: readonly ChangeRecord[]): SettingsEpoch[] {
  const wide = changes.filter((c) => c.slot === null && c.setting in current).sort((a, b) => a.t - b.t);
  const first: Record<string, unknown> = { ...current };
  for (let i = wide.length - 1; i >= 0; i--) first[wide[i].setting] = wide[i].oldValue;
  const out: SettingsEpoch[] = [{ t: -Infinity, settings: first as unknown as Settings }];
  let s: Record<string, unknown> = first;
  for (const c of wide) {
    s = { ...s, [c.setting]: c.newValue };
    out.push({ t: c.t, settings: s as unknown as Settings });
  }
  return out;
}

/** AutoThrottle's target concurrency for a slot under `s` (its scope's, else the crawl's): the engine's rule. */
export function targetConcurrency(slot: string, s: Settings): number {
  return scopeAutoThrottle(slot, s).target;
}

/** The concurrency a slot may use under `s`, as configured (pins and Crawl-delay passed in): the engine's rule. */
export function concurrencyLimit(slot: string, s: Settings, pin: number | null, crawlDelay: boolean): number {
  const { scope, override } = scopeConfig(slot, s);
  return limitOf(scope, override, s, pin, crawlDelay);
}

/** Step series of a slot's target concurrency and concurrency limit, from `start` to `end`. */
export function slotLimits(
  slot: string, current: Settings, changes: readonly ChangeRecord[], start: number, end: number,
): { target: Step[]; limit: Step[]; autothrottle: Step[] } {
  const epochs = settingsEpochs(current, changes);
  const own = changes.filter((c) => slotChange(c, slot, 'pin_concurrency') || slotChange(c, slot, 'crawl_delay')).sort((a, b) => a.t - b.t);
  // Every instant where something that matters changes, in order.
  const times = [start, ...epochs.slice(1).map((e) => e.t), ...own.map((c) => c.t)].filter((t) => t >= start && t <= end).sort((a, b) => a - b);
  const target: Step[] = [];
  const limit: Step[] = [];
  const autothrottle: Step[] = [];
  let e = 0;
  let o = 0;
  let pin: number | null = null;
  let crawlDelay = false;
  for (const t of times) {
    while (e + 1 < epochs.length && epochs[e + 1].t <= t) e++;
    while (o < own.length && own[o].t <= t) {
      const c = own[o++];
      if (slotChange(c, slot, 'pin_concurrency')) pin = typeof c.newValue === 'number' ? c.newValue : null;
      else crawlDelay = c.newValue !== null && c.newValue !== undefined;
    }
    const s = epochs[e].settings;
    push(target, t, targetConcurrency(slot, s));
    push(limit, t, concurrencyLimit(slot, s, pin, crawlDelay));
    push(autothrottle, t, (s.THROTTLING_SCOPES?.[slot]?.autothrottle?.enabled ?? s.AUTOTHROTTLE_ENABLED) ? 1 : 0);
  }
  // Close each step series at the end so the line reaches the right edge.
  for (const series of [target, limit, autothrottle]) if (series.length > 0 && series[series.length - 1].t < end) series.push({ t: end, value: series[series.length - 1].value });
  return { target, limit, autothrottle };
}

/**
 * Step series of what the user and robots.txt set a slot's delay to: its pinned delay and its
 * Crawl-delay (seconds; null while there is none), from the recorded pin_delay and crawl_delay changes.
 */
export function slotDelayFloors(slot: string, changes: readonly ChangeRecord[]): { pin: Step<number | null>[]; crawlDelay: Step<number | null>[] } {
  const steps = (name: SlotChange): Step<number | null>[] => {
    const own = changes.filter((c) => slotChange(c, slot, name)).sort((a, b) => a.t - b.t);
    if (own.length === 0) return [];
    const first = typeof own[0].oldValue === 'number' ? own[0].oldValue : null;
    return [{ t: -Infinity, value: first }, ...own.map((c) => ({ t: c.t, value: typeof c.newValue === 'number' ? c.newValue : null }))];
  };
  return { pin: steps('pin_delay'), crawlDelay: steps('crawl_delay') };
}

function push(series: Step[], t: number, value: number): void {
  const last = series[series.length - 1];
  if (last && last.value === value) return;
  if (last && last.t === t) series[series.length - 1] = { t, value };
  else series.push({ t, value });
}

/** The value of a step series at `t` (the last step at or before it), or the first value before it starts. */
export function valueAt<V extends number | null>(series: readonly Step<V>[], t: number): V | null {
  if (series.length === 0) return null;
  let lo = 0;
  let hi = series.length - 1;
  if (t < series[0].t) return series[0].value;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (series[mid].t <= t) lo = mid;
    else hi = mid - 1;
  }
  return series[lo].value;
}
