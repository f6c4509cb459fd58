// The composition root of the core (ARCHITECTURE): one history database, the crawls running on
// it, and the contract's requests and events. Hosts (Electron IPC, the WebSocket server, tests)
// only ever call `dispatch` and `subscribe`.

import {
  FIRST_SEEDS, METHODS, SLOT_COLUMNS,
  type AppError, type AppEvents, type CrawlInfo, type Dispatcher, type EventName, type ImportReport, type Method,
  type Params, type Reply, type Result, type SlotTuple,
} from '../../shared/contract';
import { applySettings, DEFAULT_SETTINGS, SETTINGS_SCHEMA, type Settings } from '../../shared/settings';
import { Readable, type Writable } from 'node:stream';
import { FOLLOW_SCOPES, type ChangeRecord, type CrawlChange, type CrawlStatus, type FollowScope, type ScopeRule } from '../../shared/types';
import { parseCrawlConfig, type CrawlConfig } from './engine/crawl-config';
import { Crawler, type CrawlStats } from './engine/crawler';
import type { SavedCrawl } from './engine/resume';
import { CrawlPersistence, loadForResume, RESUMABLE } from './crawl-persistence';
import { openHistoryWriter } from './store/history-writer';
import { createExporter } from './store/export/exporter';
import { ExportError, type ExportProgress, type ExportQuery, type ExportResult } from './store/export/index';
import { openHistoryReader } from './store/queries';
import { openHistoryReads } from './store/read-client';
import { importScrapyLogInto, type LogSource } from './store/import/import-scrapy';
import { parseTimeZone, type TimeZoneSpec } from './store/export/wall-time';
import { mergeRetention } from './store/retention';
import { runWhatIf, WhatIfError, WhatIfSettingsError } from './whatif/derive';
import { SlotRowDiff, slotTuple, storedSlotTuple } from './slot-rows';
import { realNow } from './clock';
import { consolePluginPath, PluginError } from './engine/scopes';
import { dirname, join } from 'node:path';
import { validateParams, Invalid } from './dispatch';
import { isScrapyConfig, SCRAPY_SOURCE, ScrapyCrawls, type IngestReply } from './scrapy/scrapy-crawls';
import { AppRefusal, refuse } from './app-refusal';
import { SharedCrawls } from './cluster/shared-crawls';

export interface CoreOptions {
  /** SQLite file of the history. */
  readonly db: string;
  /** Folder relative paths in settings (THROTTLING_MANAGER) are resolved from. */
  readonly baseDir?: string;
  /** Milliseconds between slot-table updates (at most 10 per second). */
  readonly slotUpdateMs?: number;
  /**
   * A Redis (redis://[:password@]host:port[/db]): crawls started from the console are shared crawls
   * (issue 18) that `slotscope worker --redis URL` processes join; this host records and fetches them.
   * A bad URL, a refused password or a Redis older than 7 throws SharedCrawlError.
   */
  readonly redis?: string;
  /** Lines for the operator (shared crawls: Redis lost and found again). */
  readonly log?: (line: string) => void;
}

export interface Core extends Dispatcher {
  readonly db: string;
  /** Pauses running crawls, flushes the history and closes the database. */
  /**
   * Streams a crawl's responses to `out` in an export format (the browser download route), after
   * flushing the history; `out` is ended when done. Throws ExportError for a bad query.
   */
  exportHistory(q: ExportQuery, out: Writable, onProgress?: (p: ExportProgress) => void): Promise<ExportResult>;
  /**
   * Stores a Scrapy AUTOTHROTTLE_DEBUG log read from a stream as a finished crawl (the browser
   * host's upload route, 'history.importScrapyLog'). Throws ImportRefused when it has no debug line.
   */
  importLog(src: LogSource, o?: { readonly tz?: TimeZoneSpec }): Promise<ImportReport>;
  /** Applies a batch POSTed by the slotscope-scrapy extension (the browser host's /ingest/scrapy route). */
  ingestScrapy(body: unknown): Promise<IngestReply>;
  close(): Promise<void>;
}

/** A log that gave nothing to import. */
export class ImportRefused extends Error {
  override readonly name = 'ImportRefused';
  readonly field = 'text';
  constructor(readonly report: ImportReport, file: string) {
    const lines = `${report.lines.toLocaleString('en-US')} line${report.lines === 1 ? '' : 's'}`;
    super(`no AUTOTHROTTLE_DEBUG line in ${file} (${lines} read, ${report.unreadable} unreadable); ` +
      'Scrapy writes them with AUTOTHROTTLE_ENABLED = True and AUTOTHROTTLE_DEBUG = True. Nothing was imported.');
  }
}

type Listener = <E extends EventName>(event: E, payload: AppEvents[E]) => void;

interface Live {
  readonly crawler: Crawler;
  readonly diff: SlotRowDiff;
  /** Frontier, live settings and slot states for crash-safe resume. */
  readonly persist: CrawlPersistence;
}

const fail = refuse;

/** A stored crawl config's seeds (a crawl imported from a log has none). */
function seedsOf(config: unknown): string[] {
  const seeds = typeof config === 'object' && config !== null ? (config as { seeds?: unknown }).seeds : undefined;
  return Array.isArray(seeds) ? seeds.filter((s): s is string => typeof s === 'string') : [];
}

export async function createCore(o: CoreOptions): Promise<Core> {
  const writer = await openHistoryWriter(o.db);
  const reader = openHistoryReader(o.db);
  // Chart and log reads run on a thread of their own (issue 14: never on the scheduler's loop).
  const reads = openHistoryReads(o.db);
  const exporter = createExporter({ db: o.db, flush: () => writer.flush() });
  const listeners = new Set<Listener>();
  const running = new Map<number, Live>();
  /** Finalizations (summary written, history flushed) still going; close() waits for them. */
  const finalizing = new Set<Promise<void>>();
  /** Crawls that ended and whose final row is being written: read from their crawler meanwhile. */
  const ending = new Map<number, Live>();
  let ticker: NodeJS.Timeout | null = null;
  let ticks = 0;
  let closed = false;

  const emit: Listener = (event, payload) => {
    for (const l of listeners) {
      try {
        l(event, payload);
      } catch {
        /* a listener's failure is its own */
      }
    }
  };
  writer.on('error', (err: Error) => emit('warning', { crawlId: 0, event: { t: Date.now(), slot: null, kind: 'error', code: 'history', text: err.message } }));

  const stored = (id: number) => reader.getCrawl(id) ?? fail('not-found', `crawl ${id} does not exist`, 'id');

  /**
   * Settings given by a client (a token holder): THROTTLING_MANAGER may only name a module inside
   * the data folder's plugins/, and is kept as its full path. A value of the wrong type is left to
   * the schema, which refuses it by name.
   */
  const pluginsDir = join(dirname(o.db), 'plugins');
  function consolePlugin(settings: unknown, field: string, current?: string): unknown {
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings) || !Object.hasOwn(settings, 'THROTTLING_MANAGER')) return settings;
    const v = (settings as Record<string, unknown>).THROTTLING_MANAGER;
    // The crawl's own value sent back unchanged (set by the CLI, say) is no new choice.
    if (typeof v !== 'string' || /[\r\n]/.test(v) || v.trim() === current) return settings;
    try {
      return { ...settings, THROTTLING_MANAGER: consolePluginPath(v.trim(), pluginsDir) };
    } catch (e) {
      if (e instanceof PluginError) fail('invalid', field === 'THROTTLING_MANAGER' ? e.message : `settings.${e.message}`, field);
      throw e;
    }
  }

  function info(id: number): CrawlInfo {
    const remote = scrapy.info(id) ?? shared?.info(id);
    if (remote) return remote;
    const c = stored(id);
    // A crawl that just ended is read from its crawler until its final row is written, so the list
    // never says "running" after its status said "finished".
    const live = running.get(id) ?? ending.get(id);
    if (live) {
      const s = live.crawler.stats();
      return { id, name: c.name, status: s.status, createdAt: c.createdAt, startedAt: s.startedAt, finishedAt: s.finishedAt,
        requests: s.requests, responses: s.responses, failures: s.failures, slots: s.slots };
    }
    const sum = reader.crawlSummary(id);
    return { id, name: c.name, status: c.status, createdAt: c.createdAt, startedAt: c.startedAt, finishedAt: c.finishedAt,
      requests: sum.requests, responses: sum.responses, failures: sum.failures, slots: sum.slots,
      ...(c.derivedFrom !== null ? { derivedFrom: c.derivedFrom } : {}), ...(isScrapyConfig(c.config) ? { source: SCRAPY_SOURCE } : {}),
      ...(c.shared !== null ? { shared: true as const } : {}) };
  }

  const list = () => reader.listCrawls().map((c) => info(c.id)).sort((a, b) => b.createdAt - a.createdAt || b.id - a.id);
  // Scrapy crawls streamed in by the slotscope-scrapy extension (core/scrapy/): their own slots, commands and status.
  const scrapy = new ScrapyCrawls({ writer, emit, listChanged: () => emit('crawls.changed', { crawls: list() }), stored: (id) => reader.getCrawl(id) });
  // Shared crawls (issue 18, serve --redis): started here, recorded here, fetched here and by `slotscope worker`s.
  let shared: SharedCrawls | null = null;
  if (o.redis !== undefined) {
    try {
      shared = await SharedCrawls.connect({
        redis: o.redis, writer, db: o.db, emit, listChanged: () => emit('crawls.changed', { crawls: list() }), journal, log: o.log ?? (() => undefined),
      });
      // A shared crawl this host recorded before it stopped (or was killed) and that Redis still holds:
      // recorded here again, with its workers, never resumed as a crawl of one process.
      // (Only crawls that can be open are read whole: a row's config may hold many seeds.)
      const open = reader.listCrawls().filter((c) => c.status === 'paused' || c.status === 'interrupted' || c.status === 'running');
      await shared.adoptOpen(open.map((c) => reader.getCrawl(c.id)).filter((c) => c !== undefined));
    } catch (e) {
      await shared?.close().catch(() => undefined);
      scrapy.close();
      reader.close();
      await reads.close();
      await exporter.close();
      await writer.close();
      throw e;
    }
  }

  function live(id: number): Live {
    const l = running.get(id);
    if (!l) {
      stored(id);
      fail('conflict', `crawl ${id} is not running`, 'id');
    }
    return l!;
  }

  function configOf(id: number, settings?: Settings): CrawlConfig {
    const c = stored(id);
    // An imported Scrapy log has no seeds: it can be read, charted and copied (with seeds), not started.
    const parsed = parseCrawlConfig({ ...(c.config as object), settings: settings ?? c.settings }, undefined, { seedsOptional: true });
    if (!parsed.ok) fail('internal', `crawl ${id} has a stored config that no longer validates: ${parsed.errors.map((e) => e.message).join('; ')}`);
    return (parsed as { config: CrawlConfig }).config;
  }

  async function create(config: unknown, seedsText?: string, nameSuffix = ''): Promise<Result<'crawls.create'>> {
    const parsed = parseCrawlConfig(config, seedsText);
    if (!parsed.ok) {
      const first = parsed.errors[0];
      fail('invalid', parsed.errors.map((e) => e.message).join('\n'), first?.field);
    }
    const c = (parsed as { config: CrawlConfig }).config;
    const raw = config as Record<string, unknown>;
    const toStore = {
      name: c.name + nameSuffix,
      seeds: c.seeds,
      ...(raw.follow !== undefined ? { follow: raw.follow } : {}),
      ...(raw.resolve !== undefined ? { resolve: raw.resolve } : {}),
      ...(raw.scopes !== undefined ? { scopes: raw.scopes } : {}),
    };
    const id = await writer.createCrawl(c.name + nameSuffix, toStore, c.settings);
    emit('crawls.changed', { crawls: list() });
    return { crawl: info(id), seedErrors: c.seedErrors };
  }

  /** Every slotUpdateMs: changed rows of every running (or just ended) crawl; status once a second. */
  /** Sends the slot rows of a crawl that changed since the last ones sent. */
  function emitRows(crawlId: number, l: Live): void {
    const now = l.crawler.now;
    const rows = l.diff.changed(l.crawler.slots(), l.crawler.currentSettings, now, l.crawler.status === 'paused');
    if (rows.length > 0) emit('slots.update', { crawlId, rows, now });
  }

  function tick(): void {
    ticks++;
    for (const [crawlId, l] of running) {
      emitRows(crawlId, l);
      if (ticks % 10 === 0) emit('crawl.status', { crawlId, stats: l.crawler.stats() });
    }
    if (running.size === 0 && ticker) {
      clearInterval(ticker);
      ticker = null;
    }
  }

  /** Crawls between a start/resume request and running (so a second request is refused). */
  const starting = new Set<number>();

  /** Resumes a stored interrupted, paused or stopped crawl from its saved frontier and live settings. */
  async function resumeStored(id: number): Promise<CrawlInfo> {
    if (starting.has(id)) fail('conflict', `crawl ${id} is already starting`, 'id');
    // A crawl that has just ended (e.g. stopped) is resumed after its final status is written.
    await Promise.all([...finalizing]);
    const c = stored(id);
    if (running.has(id) || starting.has(id)) fail('conflict', `crawl ${id} is already running`, 'id');
    if (!RESUMABLE.includes(c.status)) fail('conflict', `crawl ${id} is ${c.status}; only an ${RESUMABLE.join(', ')} crawl can be resumed`, 'id');
    starting.add(id);
    let saved: SavedCrawl;
    try {
      saved = await loadForResume(writer, id);
    } catch (e) {
      starting.delete(id);
      return fail('conflict', (e as Error).message, 'id');
    }
    starting.delete(id);
    return start(id, saved);
  }

  async function start(id: number, saved?: SavedCrawl): Promise<CrawlInfo> {
    const c = stored(id);
    if (running.has(id) || starting.has(id)) fail('conflict', `crawl ${id} is already ${running.get(id)?.crawler.status ?? 'starting'}`, 'id');
    if (!saved && c.status !== 'created') fail('conflict', `crawl ${id} is ${c.status}; only a created crawl can start (resume an interrupted or paused one; duplicate it to run it again)`, 'id');
    if (!saved && configOf(id).seeds.length === 0) fail('conflict', `crawl ${id} has no seeds: duplicate it with seeds to crawl`, 'id');
    // A history that cannot be written pauses the crawl; the app is told why (issue 15).
    const persist = new CrawlPersistence(writer, id, (e) => {
      writer.recordEvent(id, e);
      emit('warning', { crawlId: id, event: e });
    });
    const crawler: Crawler = new Crawler({
      config: configOf(id),
      sinks: {
        onResponse: (r) => writer.recordResponse(id, r),
        onChange: (ch) => {
          writer.recordChange(id, ch);
          persist.onChange(ch);
          emit('settings.changed', { crawlId: id, changes: [ch] });
        },
        onSettings: (st) => persist.onSettings(st),
        onFrontier: persist.frontier,
        onEvent: (e) => {
          writer.recordEvent(id, e);
          if (e.kind === 'warning') emit('warning', { crawlId: id, event: e });
        },
        onStatus: (status: CrawlStatus) => {
          writer.updateCrawl(id, { status });
          persist.onStatus(status);
          emit('crawl.status', { crawlId: id, stats: crawler.stats() });
        },
      },
    });
    starting.add(id);
    try {
      await crawler.prepare(o.baseDir);
    } catch (e) {
      await crawler.close();
      fail('invalid', (e as Error).message, 'THROTTLING_MANAGER');
    } finally {
      starting.delete(id);
    }
    running.set(id, { crawler, diff: new SlotRowDiff(), persist });
    if (saved) {
      crawler.startFrom(saved);
    } else {
      crawler.start();
      writer.updateCrawl(id, { startedAt: crawler.stats().startedAt });
    }
    persist.attach(crawler);
    ticker ??= setInterval(tick, o.slotUpdateMs ?? 100);
    ticker.unref();
    void crawler.done.then((stats) => {
      if (closed) return;
      const l = running.get(id)!;
      running.delete(id);
      l.persist.close();
      // Its last rows go out now, before its final status: a page that re-reads the stored rows when it
      // sees "finished" is never overwritten by a later live row.
      emitRows(id, l);
      ending.set(id, l);
      const done = finalize(id, crawler, stats).finally(() => {
        ending.delete(id);
        finalizing.delete(done);
      });
      finalizing.add(done);
    });
    return info(id);
  }

  async function finalize(id: number, crawler: Crawler, stats: CrawlStats): Promise<void> {
      writer.updateCrawl(id, { status: stats.status, finishedAt: stats.finishedAt, settings: crawler.currentSettings,
        summary: { crawl_id: id, requests: stats.requests, responses: stats.responses, by_status: stats.byStatus,
          failures: stats.failures, slots: stats.slots, seconds: ((stats.finishedAt ?? 0) - (stats.startedAt ?? 0)) / 1000 } });
      // The worker writes the buckets while the crawler closes its connections (see runCrawl).
      writer.writeAggregatesNow();
      await crawler.close();
      // Urgent: the crawl has ended; its history need not wait behind other programs (an idle-priority worker is raised).
      await writer.flush({ urgent: true }).catch(() => undefined);
      if (closed) return;
      emit('crawl.status', { crawlId: id, stats });
      emit('crawls.changed', { crawls: list() });
  }

  /** An operator's action on a whole crawl, in its journal: a change with no slot, by the user (shared/types CRAWL_CHANGES). */
  function journal(id: number, t: number, setting: CrawlChange, oldValue: unknown, newValue: unknown): void {
    const ch: ChangeRecord = { t, slot: null, setting, source: 'user', oldValue, newValue };
    writer.recordChange(id, ch);
    emit('settings.changed', { crawlId: id, changes: [ch] });
  }

  /** A created crawl started as a shared crawl (serve --redis). */
  async function startShared(id: number, sh: SharedCrawls): Promise<CrawlInfo> {
    const c = stored(id);
    if (c.status !== 'created') fail('conflict', `crawl ${id} is ${c.status}; only a created crawl can start (duplicate it to run it again)`, 'id');
    const config = configOf(id);
    if (config.seeds.length === 0) fail('conflict', `crawl ${id} has no seeds: duplicate it with seeds to crawl`, 'id');
    if (starting.has(id)) fail('conflict', `crawl ${id} is already starting`, 'id');
    starting.add(id);
    try {
      return await sh.start(id, config, c.createdAt);
    } finally {
      starting.delete(id);
    }
  }

  function slotAction(p: { id: number; slot: string }, act: (c: Crawler) => void): SlotTuple {
    const l = live(p.id);
    // Only a slot the crawl has: a made-up key would become a slot of its own, kept for good once paused or pinned.
    if (!l.crawler.hasSlot(p.slot)) {
      const key = JSON.stringify(p.slot.length > 100 ? `${p.slot.slice(0, 97)}...` : p.slot);
      fail('not-found', `slot ${key} does not exist in crawl ${p.id} (the crawl has never had a request for it)`, 'slot');
    }
    try {
      act(l.crawler);
    } catch (e) {
      if (e instanceof RangeError) fail('invalid', e.message);
      throw e;
    }
    const slot = l.crawler.slot(p.slot);
    return slotTuple(slot!, l.crawler.currentSettings, l.crawler.now, l.crawler.status === 'paused');
  }

  const handlers: { [M in Method]: (p: Params<M>) => Result<M> | Promise<Result<M>> } = {
    'crawls.list': () => list(),
    'crawls.create': (p) => {
      let config = p.config as Record<string, unknown>;
      const settings = consolePlugin(config.settings, 'settings.THROTTLING_MANAGER');
      if (settings !== config.settings) config = { ...config, settings };
      // A copy edited before it starts takes the seeds of its crawl from the store (they never crossed to the page).
      if (p.seedsFrom !== undefined) {
        const from = seedsOf(stored(p.seedsFrom).config);
        if (typeof config.seeds === 'string') fail('invalid', 'seeds: with seedsFrom, give further seeds in seedsText (or as a list)', 'seeds');
        config = { ...config, seeds: [...from, ...(Array.isArray(config.seeds) ? config.seeds : [])] };
      }
      return create(config, p.seedsText);
    },
    'crawls.duplicate': async (p) => {
      const c = stored(p.id);
      const settings = running.get(p.id)?.crawler.currentSettings ?? c.settings;
      const config = c.config as { readonly seeds?: unknown };
      const seedless = config.seeds === undefined || (Array.isArray(config.seeds) && config.seeds.length === 0);
      // A crawl without seeds (an imported Scrapy log) is copied only with seeds given: none are made up.
      if (seedless && (p.seedsText === undefined || p.seedsText.trim() === '')) {
        fail('invalid', `crawl ${p.id} has no seeds (an imported log keeps only what it fetched): give the copy its seeds, one URL a line`, 'seedsText');
      }
      const seeds = p.seedsText === undefined ? {} : { seeds: seedless ? [] : config.seeds };
      return (await create({ ...(c.config as object), ...seeds, settings }, p.seedsText, ' (copy)')).crawl;
    },
    'crawls.start': async (p) => {
      const t = realNow();
      const started = shared ? await startShared(p.id, shared) : await start(p.id);
      journal(p.id, t, 'started', null, true);
      return started;
    },
    'crawls.pause': (p) => {
      const crawler = live(p.id).crawler;
      const was = crawler.status;
      crawler.pause();
      if (was === 'running') journal(p.id, realNow(), 'paused', false, true);
      return info(p.id);
    },
    'crawls.resume': async (p) => {
      const t = realNow();
      const l = running.get(p.id);
      if (!l) {
        const row = stored(p.id);
        // A shared crawl continues in its Redis (journaled there), or is refused: never in one process.
        if (shared && row.shared !== null) return shared.resumeStored(row);
        // From its saved frontier: the journal says what it was resumed from.
        const was = row.status;
        const resumed = await resumeStored(p.id);
        journal(p.id, t, 'paused', was, false);
        return resumed;
      }
      const was = l.crawler.status;
      l.crawler.resume();
      if (was === 'paused') journal(p.id, t, 'paused', true, false);
      return info(p.id);
    },
    'crawls.stop': async (p) => {
      const t = realNow();
      const l = running.get(p.id);
      if (!l) {
        const c = stored(p.id);
        if (c.status === 'created') {
          writer.updateCrawl(p.id, { status: 'stopped', finishedAt: Date.now() });
          journal(p.id, t, 'stopped', null, 'user');
          await writer.flush();
          return info(p.id);
        }
        fail('conflict', `crawl ${p.id} is ${c.status}`, 'id');
      }
      const was = l!.crawler.status;
      if (was === 'running' || was === 'paused') journal(p.id, t, 'stopped', null, 'user');
      await l!.crawler.stop();
      return info(p.id);
    },
    'crawls.delete': async (p) => {
      stored(p.id);
      if (running.has(p.id)) fail('conflict', `crawl ${p.id} is running; stop it before deleting it`, 'id');
      const deleted = await writer.deleteCrawl(p.id);
      emit('crawls.changed', { crawls: list() });
      return { deleted };
    },
    'crawls.stats': (p) => {
      const l = running.get(p.id);
      if (l) return l.crawler.stats();
      const i = info(p.id);
      const sum = reader.crawlSummary(p.id);
      return { status: i.status, requests: sum.requests, responses: sum.responses, failures: sum.failures, byStatus: sum.by_status,
        bytes: 0, inFlight: 0, queued: 0, slots: sum.slots, robotsDisallowed: 0, startedAt: i.startedAt, finishedAt: i.finishedAt };
    },
    'settings.schema': () => SETTINGS_SCHEMA.map(({ name, label, help, group, default: def, allowed }) => ({ name, label, help, group, default: def, allowed })),
    'settings.get': (p) => running.get(p.id)?.crawler.currentSettings ?? configOf(p.id).settings,
    'settings.update': async (p) => {
      const l = running.get(p.id);
      const at = Date.now();
      const current = (l?.crawler.currentSettings ?? configOf(p.id).settings).THROTTLING_MANAGER;
      p = { ...p, changes: consolePlugin(p.changes, 'THROTTLING_MANAGER', current) as Record<string, unknown> };
      if (l) {
        const r = l.crawler.updateSettings(p.changes, 'user');
        if (!r.ok) fail('invalid', r.errors.map((e) => e.message).join('\n'), r.errors[0]?.setting);
        return { changed: (r as { changed: readonly string[] }).changed, at };
      }
      // A crawl that has ended keeps the settings it ran with: a change row after its end would be a lie.
      const ended = stored(p.id);
      // A shared crawl's live settings are in its Redis: one written here only would be lost at its resume.
      if (ended.shared !== null && ended.status !== 'finished' && ended.status !== 'failed') {
        fail('conflict', `crawl ${p.id} is a shared crawl this host does not record now (it was opened in the Redis at ${ended.shared.redis}); its settings live there: change them from \`slotscope serve --redis URL\` with that Redis. Nothing was changed.`, 'id');
      }
      if (ended.status === 'finished' || ended.status === 'failed' || ended.derivedFrom !== null) {
        fail('conflict', `crawl ${p.id} is ${ended.derivedFrom !== null ? 'a what-if replay' : ended.status}: its settings are as recorded; duplicate it to crawl again with other settings`, 'id');
      }
      const base = configOf(p.id).settings;
      const r = applySettings(p.changes, base);
      if (!r.ok) fail('invalid', r.errors.map((e) => e.message).join('\n'), r.errors[0]?.setting);
      const next = (r as { settings: Settings; changed: readonly (keyof Settings)[] });
      for (const name of next.changed) {
        const ch = { t: at, slot: null, setting: name, source: 'user' as const, oldValue: base[name], newValue: next.settings[name] };
        writer.recordChange(p.id, ch);
        emit('settings.changed', { crawlId: p.id, changes: [ch] });
      }
      writer.updateCrawl(p.id, { settings: next.settings });
      await writer.flush();
      return { changed: next.changed, at };
    },
    'slots.pause': (p) => slotAction(p, (c) => c.pauseSlot(p.slot, true)),
    'slots.resume': (p) => slotAction(p, (c) => c.pauseSlot(p.slot, false)),
    'slots.pinDelay': (p) => slotAction(p, (c) => c.pinDelay(p.slot, p.seconds)),
    'slots.pinConcurrency': (p) => slotAction(p, (c) => c.pinConcurrency(p.slot, p.value)),
    'slots.clearPins': (p) => slotAction(p, (c) => c.clearPins(p.slot)),
    'slots.resetBackoff': (p) => slotAction(p, (c) => c.resetBackoff(p.slot)),
    'slots.snapshot': async (p) => {
      const l = running.get(p.id);
      if (l) {
        const s = l.crawler.currentSettings;
        const now = l.crawler.now;
        const paused = l.crawler.status === 'paused';
        return { columns: SLOT_COLUMNS, rows: [...l.crawler.slots()].map((slot) => slotTuple(slot, s, now, paused)), now };
      }
      // A crawl that is not running: its slots as recorded, so finished and imported crawls have a table too.
      stored(p.id);
      await writer.flush();
      let s: Settings;
      try {
        s = configOf(p.id).settings;
      } catch {
        s = DEFAULT_SETTINGS;
      }
      return { columns: SLOT_COLUMNS, rows: (await reads.read('slotSummaries', p.id)).map((sum) => storedSlotTuple(sum, s)), now: realNow() };
    },
    'slots.history': async (p) => {
      stored(p.id);
      await writer.flush();
      return reads.read('history', p.id, { resolution: p.resolution, slot: p.slot, from: p.from, to: p.to, maxPoints: p.maxPoints });
    },
    'slots.responses': async (p) => {
      if (!reader.getCrawl(p.crawlId)) fail('not-found', `crawl ${p.crawlId} does not exist`, 'crawlId');
      await writer.flush();
      return reads.read('scatter', p.crawlId, { slot: p.slot, from: p.from, to: p.to, maxPoints: p.maxPoints });
    },
    'requests.page': (p) => {
      stored(p.crawlId);
      // No flush: the page reads what is committed (at most one flush interval behind a running crawl).
      return reads.read('requestPage', p.crawlId, {
        order: p.order ?? 'newest', filter: p.filter ?? {}, after: p.after, offset: p.offset, until: p.until,
        limit: p.limit ?? 100, count: p.count === true,
      });
    },
    'slots.queue': async (p) => {
      const limit = p.limit ?? 200;
      const l = running.get(p.id);
      if (l) {
        const { queued, items } = l.crawler.queueOf(p.slot, limit);
        return {
          slot: p.slot, queued, live: true, now: l.crawler.now,
          items: items.map((r) => ({ url: r.url, depth: r.depth, retries: r.retries, priority: r.priority, queuedAt: r.enqueuedAt || null })),
        };
      }
      stored(p.id);
      const { queued, items } = await reads.read('savedQueue', p.id, p.slot, limit);
      return { slot: p.slot, queued, items, live: false, now: realNow() };
    },
    'crawls.definition': (p) => {
      const c = stored(p.id);
      const cfg = (typeof c.config === 'object' && c.config !== null ? c.config : {}) as Record<string, unknown>;
      const seeds = seedsOf(cfg);
      const f = (typeof cfg.follow === 'object' && cfg.follow !== null ? cfg.follow : {}) as Record<string, unknown>;
      const limit = (v: unknown) => (v === undefined || v === null || v === '' ? null : Number(v));
      const list = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
      const given = applySettings(c.settings ?? {});
      const derived = (c.derived ?? null) as { settings?: Record<string, unknown>; slot?: string } | null;
      return {
        id: p.id, name: c.name, seedCount: seeds.length, firstSeeds: seeds.slice(0, FIRST_SEEDS),
        follow: {
          scope: FOLLOW_SCOPES.includes(f.scope as FollowScope) ? (f.scope as FollowScope) : 'host',
          maxDepth: limit(f.max_depth), maxPages: limit(f.max_pages), include: list(f.include), exclude: list(f.exclude),
        },
        resolve: (typeof cfg.resolve === 'object' && cfg.resolve !== null ? cfg.resolve : {}) as Record<string, string>,
        scopes: Array.isArray(cfg.scopes) ? (cfg.scopes as ScopeRule[]) : [],
        settings: running.get(p.id)?.crawler.currentSettings ?? (given.ok ? given.settings : DEFAULT_SETTINGS),
        whatIf: c.derivedFrom !== null ? { from: c.derivedFrom, settings: derived?.settings ?? {}, slot: derived?.slot ?? null } : null,
      };
    },
    'crawls.seeds': (p) => {
      const seeds = seedsOf(stored(p.id).config);
      const offset = p.offset ?? 0;
      return { total: seeds.length, seeds: seeds.slice(offset, offset + (p.limit ?? 10_000)) };
    },
    'crawls.workers': (p) => {
      const c = stored(p.id);
      if (c.shared !== null) {
        return fail('conflict', `crawl ${p.id} is a shared crawl this host does not record now (it was opened in the Redis at ${c.shared.redis}${shared ? '; this host\'s Redis does not have it' : ''}): its workers are listed by \`slotscope serve --redis URL\` with the Redis that holds it`, 'id');
      }
      return fail('conflict', `crawl ${p.id} is not a shared crawl of this host (only \`slotscope serve --redis URL\` records shared crawls, and lists their workers)`, 'id');
    },
    'crawls.scrapyStats': async (p) => {
      stored(p.id);
      await writer.flush();
      return reads.read('scrapyStats', p.id, running.get(p.id)?.crawler.now ?? realNow());
    },
    'store.retention.get': () => reader.retention(),
    'store.retention.set': (p) => {
      const r = mergeRetention(p, reader.retention());
      if (!r.ok) fail('invalid', r.errors.map((e) => e.message).join('\n'), r.errors[0].field);
      return writer.setRetention(p);
    },
    'history.whatIf': async (p) => {
      // A connection of its own: the replay pages through responses between other requests.
      const source = openHistoryReader(o.db);
      try {
        await writer.flush();
        const result = await runWhatIf({ reader: source, writer, crawlId: p.crawlId, slot: p.slot, settings: p.settings });
        emit('crawls.changed', { crawls: list() });
        return result;
      } catch (e) {
        if (e instanceof WhatIfError) fail(e.code, e.message, e.field);
        if (e instanceof WhatIfSettingsError) fail('invalid', e.message, e.errors[0]?.setting);
        throw e;
      } finally {
        source.close();
      }
    },
    'log.events': async (p) => {
      stored(p.id);
      await writer.flush();
      // The latest `limit` events, read as such (a long crawl's log is not loaded whole to keep its tail).
      return reads.read('events', p.id, { kind: p.kind, slot: p.slot, limit: p.limit, latest: true });
    },
    'log.changes': async (p) => {
      stored(p.id);
      await writer.flush();
      return reads.read('changes', p.id, { slot: p.slot });
    },
    // No progress is reported for a text that came in one message (at most 1 MiB over the WebSocket).
    'history.importScrapyLog': (p) =>
      importLog(
        { input: Readable.from([p.text]), size: 0, fileName: p.name, bytesRead: () => 0 },
        { tz: p.tz === undefined ? undefined : parseTimeZone(p.tz) ?? undefined },
      ),
    'history.export': (p) => {
      if (!reader.getCrawl(p.crawlId)) fail('not-found', `crawl ${p.crawlId} does not exist`, 'crawlId');
      return exporter.toFile(p, (e) => emit('history.exportProgress', e));
    },
  };

  async function importLog(src: LogSource, io: { readonly tz?: TimeZoneSpec } = {}): Promise<ImportReport> {
    if (closed) fail('conflict', 'the host is closing', undefined);
    const report = await importScrapyLogInto(writer, src, { tz: io.tz });
    if (report.crawlId === null) throw new ImportRefused(report, src.fileName);
    emit('crawls.changed', { crawls: list() });
    return report;
  }

  async function dispatch(method: string, params: unknown): Promise<Reply> {
    if (!(METHODS as readonly string[]).includes(method)) {
      return { ok: false, error: { code: 'unknown-method', message: `unknown method ${JSON.stringify(method)}; known: ${METHODS.join(', ')}` } };
    }
    try {
      const p = validateParams(method as Method, params);
      const routed = scrapy.route(method as Method, p) ?? shared?.route(method as Method, p);
      if (routed) return { ok: true, result: await routed };
      const handler = handlers[method as Method] as (p: unknown) => unknown;
      return { ok: true, result: await handler(p) };
    } catch (e) {
      if (e instanceof AppRefusal) return { ok: false, error: e.error };
      if (e instanceof Invalid) return { ok: false, error: { code: 'invalid', message: e.message, field: e.field } };
      if (e instanceof ExportError) return { ok: false, error: { code: e.code, message: e.message, field: e.field } };
      if (e instanceof ImportRefused) return { ok: false, error: { code: 'invalid', message: e.message, field: e.field } };
      return { ok: false, error: { code: 'internal', message: `${method} failed: ${(e as Error)?.message ?? String(e)}` } };
    }
  }

  return {
    db: o.db,
    dispatch,
    exportHistory: (q, out, onProgress) => exporter.toStream(q, out, onProgress),
    importLog,
    ingestScrapy: (body) => scrapy.ingest(body),
    subscribe(listener) {
      listeners.add(listener as Listener);
      return () => listeners.delete(listener as Listener);
    },
    async close() {
      closed = true;
      scrapy.close();
      await shared?.close();
      if (ticker) clearInterval(ticker);
      ticker = null;
      await Promise.all([...finalizing]);
      for (const l of running.values()) {
        l.persist.ended();
        l.crawler.pause();
      }
      await Promise.all([...running.values()].map(async (l) => {
        // In-flight requests finish and are recorded; the crawl stays paused in the database.
        const deadline = Date.now() + 5000;
        while (l.crawler.stats().inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        await l.crawler.close({ stop: false }).catch(() => undefined);
        l.persist.close();
      }));
      running.clear();
      await exporter.close();
      listeners.clear();
      reader.close();
      await reads.close();
      await writer.close();
    },
  };
}
