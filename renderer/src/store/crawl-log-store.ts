// One crawl's settings, settings changes and warnings, fed by 'settings.get', 'log.changes' and
// 'log.events' once, then by the 'settings.changed' and 'warning' events (newest first).

import type { Settings } from '../../../shared/settings';
import type { ChangeRecord, EventRecord } from '../../../shared/types';
import { FrameStore } from './frame-store';

/** The key of a warning's cause: one warning per code and slot. */
export const causeKey = (w: EventRecord): string => `${w.code}|${w.slot ?? ''}`;

const changeKey = (c: ChangeRecord) => `${c.t}|${c.slot ?? ''}|${c.setting}|${c.source}|${JSON.stringify(c.newValue)}`;
const warningKey = (w: EventRecord) => `${w.t}|${causeKey(w)}|${w.text}`;

/** Merges `incoming` into `current` (both newest first), dropping repeats by `key`. */
function mergeNewestFirst<T extends { readonly t: number }>(current: readonly T[], incoming: readonly T[], key: (x: T) => string): readonly T[] {
  const seen = new Set(current.map(key));
  const fresh = incoming.filter((x) => !seen.has(key(x)));
  if (fresh.length === 0) return current;
  return [...fresh, ...current].sort((a, b) => b.t - a.t);
}

export class CrawlLogStore extends FrameStore {
  private settingsValue: Settings | null = null;
  private changeList: readonly ChangeRecord[] = [];
  private warningList: readonly EventRecord[] = [];
  private visibleList: readonly EventRecord[] = [];
  private readonly dismissedCauses = new Set<string>();

  settings(): Settings | null {
    return this.settingsValue;
  }

  /** Settings and slot changes, newest first. */
  changes(): readonly ChangeRecord[] {
    return this.changeList;
  }

  /** Warnings not dismissed, newest first. */
  warnings(): readonly EventRecord[] {
    return this.visibleList;
  }

  /** Every warning, dismissed ones included, newest first. */
  allWarnings(): readonly EventRecord[] {
    return this.warningList;
  }

  setSettings(settings: Settings): void {
    this.settingsValue = settings;
    this.changed();
  }

  /** Adds changes (any order); repeats of ones already held are dropped. */
  addChanges(changes: readonly ChangeRecord[]): void {
    const next = mergeNewestFirst(this.changeList, [...changes].sort((a, b) => b.t - a.t), changeKey);
    if (next === this.changeList) return;
    this.changeList = next;
    this.changed();
  }

  addWarnings(warnings: readonly EventRecord[]): void {
    const next = mergeNewestFirst(this.warningList, [...warnings].sort((a, b) => b.t - a.t), warningKey);
    if (next === this.warningList) return;
    this.warningList = next;
    this.refilter();
  }

  /** Hides every warning of this cause (code + slot), in this window only. */
  dismiss(cause: string): void {
    this.dismissedCauses.add(cause);
    this.refilter();
  }

  private refilter(): void {
    this.visibleList = this.warningList.filter((w) => !this.dismissedCauses.has(causeKey(w)));
    this.changed();
  }
}

/** The log store of each crawl, created on first use. */
export class CrawlLogs {
  private readonly stores = new Map<number, CrawlLogStore>();

  get(crawlId: number): CrawlLogStore {
    let s = this.stores.get(crawlId);
    if (!s) {
      s = new CrawlLogStore();
      this.stores.set(crawlId, s);
    }
    return s;
  }

  has(crawlId: number): boolean {
    return this.stores.has(crawlId);
  }

  ids(): number[] {
    return [...this.stores.keys()];
  }
}
