// Every slot change the engine records (the shared SLOT_CHANGES) reaches the history charts: a mark
// in words for each, the backoff line back at 0 after a reset, the pins and Crawl-delay as step lines.

import { describe, expect, it } from 'vitest';
import { SLOT_CHANGES, type ChangeRecord, type SlotChange } from '../../../shared/types';
import { DEFAULT_SETTINGS } from '../../../shared/settings';

/** What these tests use of the renderer's modules (the renderer is a TypeScript project of its own, with DOM types). */
interface Mark { t: number; until?: number; kind: string; title: string; source: string; detail?: string }
interface Step { t: number; value: number | null }
interface AnnotationsModule {
  changeAnnotation(c: ChangeRecord): Mark | null;
  slotAnnotations(slot: string, changes: readonly ChangeRecord[], warnings: readonly unknown[]): Mark[];
  backoffSteps(slot: string, changes: readonly ChangeRecord[]): { t: number; level: number }[];
}
interface TimelineModule {
  slotLimits(slot: string, current: typeof DEFAULT_SETTINGS, changes: readonly ChangeRecord[], start: number, end: number): { limit: Step[] };
  slotDelayFloors(slot: string, changes: readonly ChangeRecord[]): { pin: Step[]; crawlDelay: Step[] };
  valueAt(series: readonly Step[], t: number): number | null;
}
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ path)) as T;
const { changeAnnotation, slotAnnotations, backoffSteps } = await load<AnnotationsModule>('../../../renderer/src/views/history/annotations');
const { slotLimits, slotDelayFloors, valueAt } = await load<TimelineModule>('../../../renderer/src/views/history/settings-timeline');

const S = 'a.test';
const change = (t: number, setting: SlotChange, oldValue: unknown, newValue: unknown, source: ChangeRecord['source'] = 'user'): ChangeRecord =>
  ({ t, slot: S, setting, source, oldValue, newValue });

/** A value the engine records for each slot change (see electron/core/engine/crawler.ts). */
const SAMPLE: Readonly<Record<SlotChange, readonly [unknown, unknown]>> = {
  pin_delay: [null, 0.5], pin_concurrency: [null, 2], paused: [false, true], backoff_reset: [{ level: 3, blockedUntil: 1500 }, { level: 0, blockedUntil: null }],
  crawl_delay: [null, 0.3], backoff_level: [0, 1], blocked_until: [null, 2000], rampup_rate: [4, 2], delay: [0.5, 0.75],
};

describe('slot changes on the history charts', () => {
  it.each(SLOT_CHANGES.map((n) => [n]))('%s gets a mark of its own, in words', (name) => {
    const [oldValue, newValue] = SAMPLE[name];
    const m = changeAnnotation(change(1000, name, oldValue, newValue));
    expect(m).not.toBeNull();
    expect(m!.title.startsWith(`${name}:`), `"${m!.title}" is the catch-all, not words for ${name}`).toBe(false);
    expect(m!.kind).not.toBe('setting');
  });

  it('a backoff reset brings the level line to 0 and ends the block it lifted; a pause lasts until the resume', () => {
    const changes = [
      change(100, 'backoff_level', 0, 1, 'backoff'), change(200, 'backoff_level', 1, 2, 'backoff'), change(300, 'blocked_until', null, 2300, 'backoff'),
      change(400, 'paused', false, true), change(500, 'backoff_reset', { level: 2, blockedUntil: 2300 }, { level: 0, blockedUntil: null }),
      change(900, 'paused', true, false),
    ];
    expect(backoffSteps(S, changes)).toEqual([{ t: 100, level: 1 }, { t: 200, level: 2 }, { t: 500, level: 0 }]);
    const marks = slotAnnotations(S, changes, []);
    expect(marks.find((m) => m.kind === 'retry-after')?.until).toBe(500);
    expect(marks.find((m) => m.title === 'Slot paused by you')?.until).toBe(900);
    expect(marks.find((m) => m.kind === 'recovery')?.title).toBe('Backoff reset by you: level 2 → 0');
    // Still paused: the band runs to the right edge.
    expect(slotAnnotations(S, changes.slice(0, 5), []).find((m) => m.title === 'Slot paused by you')?.until).toBe(Infinity);
  });

  it('a pinned concurrency is the limit; the delay pin and the Crawl-delay are step lines', () => {
    const changes = [change(100, 'pin_concurrency', null, 1), change(200, 'pin_delay', null, 0.25), change(300, 'crawl_delay', null, 0.3, 'robots'), change(400, 'pin_delay', 0.25, null)];
    const { limit } = slotLimits(S, { ...DEFAULT_SETTINGS, CONCURRENT_REQUESTS_PER_DOMAIN: 4 }, changes, 0, 1000);
    expect([valueAt(limit, 50), valueAt(limit, 100), valueAt(limit, 999)]).toEqual([4, 1, 1]);
    const floors = slotDelayFloors(S, changes);
    expect([valueAt(floors.pin, 50), valueAt(floors.pin, 200), valueAt(floors.pin, 400)]).toEqual([null, 0.25, null]);
    expect([valueAt(floors.crawlDelay, 50), valueAt(floors.crawlDelay, 300)]).toEqual([null, 0.3]);
  });
});
