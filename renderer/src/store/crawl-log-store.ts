// One crawl's settings, settings changes and warnings, fed by 'settings.get', 'log.changes' and
// 'log.events' once, then by the 'settings.changed' and 'warning' events (newest first). The
// warnings a user dismissed stay dismissed across reloads (localStorage, per crawl).

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

const DISMISSED_PREFIX = 'slotscope.dismissed-warnings.';

function defaultStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

export class CrawlLogStore extends FrameStore {
  private settingsValue: Settings | null = null;
  private changeList: readonly ChangeRecord[] = [];
  private warningList: readonly EventRecord[] = [];
  private visibleList: readonly EventRecord[] = [];
  private readonly dismissedCauses: Set<string>;

  /** Without a crawl id (a test), dismissals last as long as the store. */
  constructor(readonly crawlId: number | null = null, private readonly storage: Storage | null = crawlId === null ? null : defaultStorage()) {
    super();
    this.dismissedCauses = new Set(crawlId === null ? [] : readDismissed(storage, crawlId));
  }

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

  /** Hides every warning of this cause (code + slot), now and after a reload. */
  dismiss(cause: string): void {
    this.dismissedCauses.add(cause);
    if (this.crawlId !== null) {
      try {
        this.storage?.setItem(DISMISSED_PREFIX + this.crawlId, JSON.stringify([...this.dismissedCauses]));
      } catch {
        /* storage full or disabled: the dismissal holds for this window only */
      }
    }
    this.refilter();
  }

  private refilter(): void {
    this.visibleList = this.warningList.filter((w) => !this.dismissedCauses.has(causeKey(w)));
    this.changed();
  }
}

function readDismissed(storage: Storage | null, crawlId: number): string[] {
  try {
    const raw = storage?.getItem(DISMISSED_PREFIX + crawlId);
    const v: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Forgets the dismissed warnings of a crawl (it was deleted). */
export function forgetDismissedWarnings(crawlId: number, storage: Storage | null = defaultStorage()): void {
  try {
    storage?.removeItem(DISMISSED_PREFIX + crawlId);
  } catch {
    /* nothing to forget */
  }
}

/** The log store of each crawl, created on first use. */
export class CrawlLogs {
  private readonly stores = new Map<number, CrawlLogStore>();

  get(crawlId: number): CrawlLogStore {
    let s = this.stores.get(crawlId);
    if (!s) {
      s = new CrawlLogStore(crawlId);
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
