// Runs a what-if replay over a stored crawl and stores the result as a derived crawl (its
// responses with the replayed delays, its changes), so its series overlay the original's in charts.

import type { WhatIfResult } from '../../../shared/contract';
import { settingSpec, type Settings } from '../../../shared/settings';
import type { HistoryWriter } from '../store/history-writer';
import type { HistoryReader } from '../store/queries';
import { initialSettings, WhatIfReplay, whatIfSettings, WhatIfSettingsError } from './replay';

export { WhatIfSettingsError } from './replay';

/** A what-if that cannot run: what is wrong and which param. Nothing was stored. */
export class WhatIfError extends Error {
  constructor(readonly code: 'invalid' | 'not-found' | 'conflict', readonly field: string, message: string) {
    super(message);
    this.name = 'WhatIfError';
  }
}

export interface WhatIfOptions {
  /** Read connection used only by this replay (it pages through the crawl's responses). */
  readonly reader: HistoryReader;
  readonly writer: HistoryWriter;
  readonly crawlId: number;
  /** Only this slot's responses. */
  readonly slot?: string;
  /** Setting changes over the crawl's starting settings (validated like 'settings.update'). */
  readonly settings: unknown;
  /** Responses per page; the replay yields to the event loop between pages. */
  readonly pageSize?: number;
}

const PAGE = 5000;

/** Short words for the settings a what-if usually changes (the others go by their schema label). */
const SHORT: Readonly<Record<string, string>> = {
  AUTOTHROTTLE_TARGET_CONCURRENCY: 'target', AUTOTHROTTLE_START_DELAY: 'start delay', AUTOTHROTTLE_MAX_DELAY: 'max delay',
  AUTOTHROTTLE_ENABLED: 'AutoThrottle', DOWNLOAD_DELAY: 'delay', CONCURRENT_REQUESTS_PER_DOMAIN: 'concurrency',
  BACKOFF_MIN_DELAY: 'backoff from', BACKOFF_MAX_DELAY: 'backoff up to', BACKOFF_DELAY_FACTOR: 'backoff factor', BACKOFF_WINDOW: 'backoff window',
};

/** A changed setting in a few words: "target 4", "delay 0.5 s", "AutoThrottle off". */
function settingWords(name: string, v: unknown): string {
  const spec = settingSpec(name);
  const label = SHORT[name] ?? (spec ? spec.label.replace(/\s*\((s|bytes)\)$/, '').toLowerCase() : name);
  const seconds = spec?.label.endsWith('(s)') === true;
  const value = typeof v === 'boolean' ? (v ? 'on' : 'off') : typeof v === 'number' ? `${v}${seconds ? ' s' : ''}` : Array.isArray(v) ? v.join(', ') : typeof v === 'object' && v !== null ? 'changed' : String(v);
  return `${label} ${value}`;
}

/** The derived crawl's name: what the replay changed, in words, and where it comes from ("What if: target 4, from crawl 3"). */
export function whatIfName(patch: Readonly<Record<string, unknown>>, crawlId: number, slot?: string): string {
  const text = Object.entries(patch).map(([k, v]) => settingWords(k, v)).join(', ') || 'the same settings';
  const what = text.length > 100 ? `${text.slice(0, 97)}...` : text;
  return `What if: ${what}${slot !== undefined ? `, slot ${slot}` : ''}, from crawl ${crawlId}`;
}

/**
 * Replays crawl `crawlId` (or one slot of it) with other settings and stores the result as a crawl
 * derived from it. Throws WhatIfError (unknown crawl or slot, a derived crawl) or
 * WhatIfSettingsError (refused settings) before anything is stored; a failure while storing
 * deletes the partial derived crawl.
 */
export async function runWhatIf(o: WhatIfOptions): Promise<WhatIfResult> {
  const crawl = o.reader.getCrawl(o.crawlId);
  if (crawl === undefined) throw new WhatIfError('not-found', 'crawlId', `crawlId: crawl ${o.crawlId} does not exist`);
  if (crawl.derivedFrom !== null) {
    throw new WhatIfError('conflict', 'crawlId',
      `crawlId: crawl ${o.crawlId} is itself a what-if replay of crawl ${crawl.derivedFrom}; replay crawl ${crawl.derivedFrom} instead`);
  }
  if (o.slot !== undefined && !o.reader.slotSummaries(o.crawlId).some((s) => s.slot === o.slot)) {
    throw new WhatIfError('not-found', 'slot', `slot: ${JSON.stringify(o.slot)} has no recorded responses in crawl ${o.crawlId}`);
  }
  const changes = o.reader.changes(o.crawlId);
  let initial: Settings;
  try {
    initial = initialSettings(crawl.settings, changes);
  } catch (e) {
    if (e instanceof WhatIfSettingsError) throw new WhatIfError('conflict', 'crawlId', `crawl ${o.crawlId} has stored settings that no longer validate: ${e.message}`);
    throw e;
  }
  const patch = (o.settings ?? {}) as Readonly<Record<string, unknown>>;
  const { settings, changed } = whatIfSettings(patch, initial);

  const start = crawl.startedAt ?? crawl.createdAt;
  const derivedId = await o.writer.createCrawl(whatIfName(patch, o.crawlId, o.slot), crawl.config, settings);
  try {
    // 'failed' until it is complete: a partial one (the process died) says so, and neither state
    // can be started or resumed (a derived crawl has nothing to fetch).
    o.writer.updateCrawl(derivedId, {
      status: 'failed', startedAt: crawl.startedAt, finishedAt: crawl.finishedAt, derivedFrom: o.crawlId,
      derived: { settings: patch, ...(o.slot !== undefined ? { slot: o.slot } : {}) },
    });
    for (const name of changed) {
      o.writer.recordChange(derivedId, { t: start, slot: null, setting: name, source: 'config', oldValue: initial[name], newValue: settings[name] });
    }
    const replay = new WhatIfReplay(settings, Object.keys(patch), changes, o.slot);
    let after: [number, number] = [-Infinity, 0];
    let responses = 0;
    const pageSize = o.pageSize ?? PAGE;
    for (;;) {
      const page = o.reader.responsePage(o.crawlId, after, pageSize, o.slot);
      for (const r of page) {
        const d = replay.response(r);
        const { id: _id, ...record } = r;
        o.writer.recordResponse(derivedId, { ...record, ...d });
        for (const c of replay.drainChanges()) o.writer.recordChange(derivedId, c);
      }
      responses += page.length;
      if (page.length < pageSize) break;
      const last = page[page.length - 1];
      after = [last.t, last.id];
      await new Promise((r) => setImmediate(r));
    }
    o.writer.updateCrawl(derivedId, {
      status: 'finished',
      summary: { derived_from: o.crawlId, settings: patch, responses, slots: replay.slotKeys().length },
    });
    await o.writer.flush();
    return { crawlId: derivedId, slots: replay.slotKeys().length, responses };
  } catch (e) {
    await o.writer.deleteCrawl(derivedId).catch(() => undefined);
    throw e;
  }
}
