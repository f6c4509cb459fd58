// The journal's words (renderer/src/views/journal/journal-words.ts): every change the engine, the user
// or the host records reads as a sentence that says who did it, with no internal name or JSON; a
// change that changed nothing is no row and no mark; the crawl's own pauses band the charts until its resume.

import { describe, expect, it } from 'vitest';
import { CRAWL_CHANGES, SLOT_CHANGES, type ChangeRecord, type ChangeSource } from '../../../shared/types';
import { SETTINGS_SCHEMA, DEFAULT_SETTINGS } from '../../../shared/settings';

interface Words { readonly title: string; readonly detail?: string }
interface WordsModule {
  changeWords(c: ChangeRecord): Words | null;
  isNoop(c: ChangeRecord): boolean;
}
interface Mark { t: number; until?: number; kind: string; title: string }
interface AnnotationsModule { slotAnnotations(slot: string, changes: readonly ChangeRecord[], warnings: readonly unknown[]): Mark[] }
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ path)) as T;
const { changeWords, isNoop } = await load<WordsModule>('../../../renderer/src/views/journal/journal-words');
const { slotAnnotations } = await load<AnnotationsModule>('../../../renderer/src/views/history/annotations');

const at = (t: number, slot: string | null, setting: string, oldValue: unknown, newValue: unknown, source: ChangeSource = 'user'): ChangeRecord =>
  ({ t, slot, setting: setting as ChangeRecord['setting'], source, oldValue, newValue });

/** Who records each slot change that is not the operator's. */
const BY_ENGINE: Readonly<Record<string, ChangeSource>> = { crawl_delay: 'robots', backoff_level: 'backoff', blocked_until: 'backoff', rampup_rate: 'rampup', delay: 'autothrottle' };

/** No internal name (snake_case or SCREAMING_CASE outside the detail's parentheses) and no JSON in a title. */
const plain = (s: string) => !/[{}[\]"]/.test(s) && !/\b[a-z]+_[a-z_]+\b/.test(s) && !/\b[A-Z]+_[A-Z_]+\b/.test(s);

describe('the journal in words', () => {
  it('says what the operator did to a slot, to the crawl and to its settings, and who did it', () => {
    expect(changeWords(at(1, 'a.test', 'pin_delay', null, 0.3))?.title).toBe('Delay pinned to 0.30 s by you');
    expect(changeWords(at(1, 'a.test', 'backoff_reset', { level: 3, blockedUntil: null }, { level: 0, blockedUntil: null }))?.title).toBe('Backoff reset by you: level 3 → 0');
    expect(changeWords(at(1, null, 'started', null, true))?.title).toBe('Crawl started by you');
    expect(changeWords(at(1, null, 'paused', false, true))?.title).toBe('Crawl paused by you');
    expect(changeWords(at(1, null, 'paused', true, false))?.title).toBe('Crawl resumed by you');
    expect(changeWords(at(1, null, 'paused', 'stopped', false))?.detail).toMatch(/it was stopped/);
    expect(changeWords(at(1, null, 'stopped', null, 'user'))?.title).toBe('Crawl stopped by you');
    expect(changeWords(at(1, null, 'AUTOTHROTTLE_TARGET_CONCURRENCY', 1, 4))?.title).toBe('Target concurrency set to 4 by you');
    expect(changeWords(at(1, null, 'AUTOTHROTTLE_ENABLED', false, true))?.title).toBe('AutoThrottle on set to on by you');
    expect(changeWords(at(1, null, 'DOWNLOAD_DELAY', 0, 2, 'config'))?.title).toBe('Delay between requests set to 2 s by the crawl config');
  });

  it('reads every slot change, crawl change and setting without internal names or JSON', () => {
    const samples: ChangeRecord[] = [
      ...SLOT_CHANGES.map((n) => at(5, 'a.test', n, n === 'backoff_reset' ? { level: 2, blockedUntil: 9 } : n === 'paused' ? false : 1, n === 'backoff_reset' ? { level: 0, blockedUntil: null } : n === 'paused' ? true : 2,
        BY_ENGINE[n] ?? 'user')),
      ...CRAWL_CHANGES.map((n) => at(5, null, n, n === 'paused' ? false : null, n === 'paused' ? true : n === 'stopped' ? 'user' : true)),
      ...SETTINGS_SCHEMA.map((s) => at(5, null, s.name, DEFAULT_SETTINGS[s.name],
        s.name === 'THROTTLING_SCOPES' ? { 'api.example': { concurrency: 2, backoff: { max_delay: 30 }, autothrottle: { target_concurrency: 1 } } }
          : s.name === 'DOWNLOAD_SLOTS' ? { 'b.example': { delay: 1 } }
          : typeof s.default === 'boolean' ? !s.default : typeof s.default === 'number' ? s.default + 1 : Array.isArray(s.default) ? [429] : 'x')),
    ];
    for (const c of samples) {
      const w = changeWords(c);
      expect(w, `${c.setting} has words`).not.toBeNull();
      expect(plain(w!.title), `“${w!.title}” (${c.setting}) is plain words`).toBe(true);
      if (c.source === 'user') expect(w!.title, c.setting).toMatch(/by you/);
    }
  });

  it('shows no change that changed nothing', () => {
    expect(isNoop(at(1, 'a.test', 'blocked_until', 5000, 5000, 'backoff'))).toBe(true);
    expect(changeWords(at(1, 'a.test', 'blocked_until', 5000, 5000, 'backoff'))).toBeNull();
    expect(changeWords(at(1, null, 'AUTOTHROTTLE_TARGET_CONCURRENCY', 2, 2))).toBeNull();
    expect(changeWords(at(1, 'a.test', 'backoff_reset', { level: 0, blockedUntil: null }, { level: 0, blockedUntil: null }))).toBeNull();
    expect(changeWords(at(1, null, 'started', null, true))).not.toBeNull();
    const marks = slotAnnotations('a.test', [at(1, 'a.test', 'blocked_until', 5000, 5000, 'backoff'), at(2, null, 'DOWNLOAD_DELAY', 1, 1)], []);
    expect(marks).toEqual([]);
  });

  it('bands every slot\'s charts from a crawl pause to the crawl\'s resume', () => {
    const changes = [at(100, null, 'paused', false, true), at(400, 'a.test', 'paused', false, true), at(700, null, 'paused', true, false)];
    const marks = slotAnnotations('a.test', changes, []);
    expect(marks.find((m) => m.title === 'Crawl paused by you')?.until).toBe(700);
    expect(marks.find((m) => m.title === 'Slot paused by you')?.until).toBe(Infinity);
    expect(marks.find((m) => m.title === 'Crawl resumed by you')?.kind).toBe('pause');
  });
});
