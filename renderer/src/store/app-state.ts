// Everything live the renderer holds, built once at start-up from one transport: the stores, the
// one event subscription that feeds them, and the commands the views call (errors to the message line).

import type { AppError, CrawlInfo, Result, SettingDescription, SlotTuple } from '../../../shared/contract';
import { toAppError, type Transport } from '../transport/transport';
import { ConnectionStore } from './connection-store';
import { CrawlLogs, forgetDismissedWarnings } from './crawl-log-store';
import { CrawlRates } from './crawl-rates';
import { CrawlsStore } from './crawls-store';
import { FrameStore } from './frame-store';
import { MessageStore } from './message-store';
import { forgetPinnedRows, SlotTables } from './slot-table-store';
import { WorkersStore } from './workers-store';

export interface Stores {
  readonly connection: ConnectionStore;
  readonly crawls: CrawlsStore;
  readonly slotTables: SlotTables;
  readonly messages: MessageStore;
  /** Per crawl: its settings, changes and warnings. */
  readonly crawlLogs: CrawlLogs;
  /** The settings schema, once loaded. */
  readonly schema: SchemaStore;
  /** Per crawl: requests and bytes per second over the last 10 s. */
  readonly rates: CrawlRates;
  /** Per shared crawl: its workers. */
  readonly workers: WorkersStore;
}

/** The settings schema (it never changes while the host runs), for the settings panel. */
export class SchemaStore extends FrameStore {
  private value: readonly SettingDescription[] | null = null;
  current(): readonly SettingDescription[] | null {
    return this.value;
  }
  set(schema: readonly SettingDescription[]): void {
    this.value = schema;
    this.changed();
  }
}

/** An answer of a command whose refusal the view shows beside its own field (not on the message line). */
export type Outcome<T> = { readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: AppError };

export type CrawlCommand = 'start' | 'pause' | 'resume' | 'stop';
export type SlotCommand = 'pause' | 'resume';

/** A slot control of the row actions menu (SPEC 6); its refusal comes back as data for the menu to show. */
export type SlotControl =
  | { readonly kind: 'pinDelay'; readonly seconds: number | null }
  | { readonly kind: 'pinConcurrency'; readonly value: number | null }
  | { readonly kind: 'clearPins' }
  | { readonly kind: 'resetBackoff' };

export interface Commands {
  /** Starts, pauses, resumes or stops a crawl; resolves false when the host refused (see the message line). */
  crawl(command: CrawlCommand, crawlId: number): Promise<boolean>;
  /** Pauses or resumes one slot of a running crawl. */
  slot(command: SlotCommand, crawlId: number, key: string): Promise<boolean>;
  /** Pins a slot's delay or concurrency, clears its pins or resets its backoff; the row comes back updated. */
  slotControl(crawlId: number, key: string, control: SlotControl): Promise<Outcome<SlotTuple>>;
  /** A new crawl with the same config and the latest settings; resolves with it, or null when refused (see the message line). */
  duplicateCrawl(crawlId: number): Promise<CrawlInfo | null>;
  /**
   * Like duplicateCrawl, `seedsText` (one URL a line) added to the copy's seeds; the refusal comes back
   * as data: a crawl without seeds (an imported log) is refused with field `seedsText` until it gets some.
   */
  copyCrawl(crawlId: number, seedsText?: string): Promise<Outcome<CrawlInfo>>;
  /** Deletes a crawl that is not running, with its history; false when refused (see the message line). */
  deleteCrawl(crawlId: number): Promise<boolean>;
  /** Opens a crawl's slot table (once): its snapshot (live or as recorded), and its figures. Views get the table from `stores.slotTables`. */
  openCrawl(crawlId: number): void;
  /** Sends a settings change set; the refusal comes back as data for the view to show by its field. */
  updateSettings(crawlId: number, changes: Readonly<Record<string, unknown>>): Promise<Outcome<Result<'settings.update'>>>;
  /**
   * Creates a crawl from a crawl config (`seedsText` one URL a line more, `seedsFrom` every seed of that
   * crawl: an edited copy); the refusal comes back as data.
   */
  createCrawl(config: unknown, seeds?: { readonly seedsText?: string; readonly seedsFrom?: number }): Promise<Outcome<Result<'crawls.create'>>>;
}

export interface AppState {
  readonly transport: Transport;
  readonly stores: Stores;
  readonly commands: Commands;
  /** Unsubscribes the feed (the transport itself stays). */
  dispose(): void;
}

const CRAWL_METHODS = { start: 'crawls.start', pause: 'crawls.pause', resume: 'crawls.resume', stop: 'crawls.stop' } as const;
const CRAWL_VERBS = { start: 'Starting', pause: 'Pausing', resume: 'Resuming', stop: 'Stopping' } as const;

/** Crawls whose slots live in the engine (a snapshot is possible). */
const isLive = (status: CrawlInfo['status'] | undefined) => status === 'running' || status === 'paused';

export function createAppState(transport: Transport): AppState {
  const stores: Stores = {
    connection: new ConnectionStore(transport.kind),
    crawls: new CrawlsStore(),
    slotTables: new SlotTables(),
    messages: new MessageStore(),
    crawlLogs: new CrawlLogs(),
    schema: new SchemaStore(),
    rates: new CrawlRates(),
    workers: new WorkersStore(),
  };
  const { crawlLogs } = stores;
  const { crawls, slotTables, messages } = stores;
  const opened = new Set<number>();
  /** Crawls whose end was seen but whose history may not be written yet (their rows are read again). */
  const ending = new Set<number>();

  const crawlName = (id: number) => {
    const c = crawls.crawl(id);
    return c ? `“${c.name}”` : `crawl ${id}`;
  };

  /** Replaces a table with the host's rows (the engine's while the crawl runs, the recorded ones after). */
  async function syncTable(crawlId: number): Promise<void> {
    try {
      const { rows, now } = await transport.invoke('slots.snapshot', { id: crawlId });
      slotTables.get(crawlId)?.replaceAll(rows, now);
    } catch (e) {
      const err = toAppError(e);
      if (err.code !== 'conflict') messages.report(`Loading the slots of ${crawlName(crawlId)}`, err);
    }
  }

  async function loadStats(crawlId: number): Promise<void> {
    try {
      const stats = await transport.invoke('crawls.stats', { id: crawlId });
      crawls.applyStats(crawlId, stats);
      stores.rates.add(crawlId, stats);
    } catch (e) {
      messages.report(`Loading the figures of ${crawlName(crawlId)}`, toAppError(e));
    }
  }

  async function loadSettings(crawlId: number): Promise<void> {
    try {
      crawlLogs.get(crawlId).setSettings(await transport.invoke('settings.get', { id: crawlId }));
    } catch (e) {
      messages.report(`Loading the settings of ${crawlName(crawlId)}`, toAppError(e));
    }
  }

  /** A crawl's settings, changes and warnings as recorded (events add to them after). */
  async function loadLog(crawlId: number): Promise<void> {
    const log = crawlLogs.get(crawlId);
    void loadSettings(crawlId);
    try {
      const [changes, warnings] = await Promise.all([
        transport.invoke('log.changes', { id: crawlId }),
        transport.invoke('log.events', { id: crawlId, kind: 'warning' }),
      ]);
      log.addChanges(changes);
      log.addWarnings(warnings);
    } catch (e) {
      messages.report(`Loading the changes and warnings of ${crawlName(crawlId)}`, toAppError(e));
    }
  }

  /** A shared crawl's workers, once (events keep them fresh while it runs). */
  async function loadWorkers(crawlId: number): Promise<void> {
    try {
      const { workers, now } = await transport.invoke('crawls.workers', { id: crawlId });
      stores.workers.set(crawlId, workers, now);
    } catch (e) {
      const err = toAppError(e);
      // A shared crawl this host does not record now (another Redis, or none): the Workers tab says why.
      if (err.code === 'conflict') stores.workers.unavailable(crawlId, err.message);
      else messages.report(`Loading the workers of ${crawlName(crawlId)}`, err);
    }
  }

  async function loadSchema(): Promise<void> {
    if (stores.schema.current()) return;
    try {
      stores.schema.set(await transport.invoke('settings.schema', {}));
    } catch (e) {
      messages.report('Loading the settings schema', toAppError(e));
    }
  }

  /** At every (re)connection: the list, then every open table of a live crawl. */
  async function refresh(): Promise<void> {
    try {
      crawls.setList(await transport.invoke('crawls.list', {}));
    } catch (e) {
      messages.report('Loading the crawl list', toAppError(e));
      return;
    }
    for (const id of slotTables.ids()) {
      if (isLive(crawls.crawl(id)?.status)) {
        void syncTable(id);
        void loadStats(id);
      }
    }
    void loadSchema();
    for (const id of opened) {
      void loadLog(id);
      if (crawls.crawl(id)?.shared) void loadWorkers(id);
    }
  }

  // The one subscription that feeds the stores.
  const offs = [
    transport.subscribe('crawls.changed', (p) => crawls.setList(p.crawls)),
    transport.subscribe('crawl.status', (p) => {
      const before = crawls.statsOf(p.crawlId)?.status ?? crawls.crawl(p.crawlId)?.status;
      crawls.applyStats(p.crawlId, p.stats);
      stores.rates.add(p.crawlId, p.stats);
      // An open crawl that just came alive (started elsewhere, or before its table had rows): catch up.
      if (!isLive(before) && isLive(p.stats.status) && slotTables.get(p.crawlId)) void syncTable(p.crawlId);
      // One that just ended: its rows become the recorded ones, the same a reload shows. The host says
      // so twice (the engine's end, then once its history is written): the second read is the final one.
      if (!isLive(p.stats.status) && slotTables.get(p.crawlId) && (isLive(before) || ending.delete(p.crawlId))) {
        if (isLive(before)) ending.add(p.crawlId);
        void syncTable(p.crawlId);
      }
    }),
    transport.subscribe('settings.changed', (p) => {
      if (!opened.has(p.crawlId)) return;
      crawlLogs.get(p.crawlId).addChanges(p.changes);
      if (p.changes.some((c) => c.slot === null)) void loadSettings(p.crawlId);
    }),
    transport.subscribe('warning', (p) => {
      if (opened.has(p.crawlId)) crawlLogs.get(p.crawlId).addWarnings([p.event]);
    }),
    transport.subscribe('slots.update', (p) => slotTables.get(p.crawlId)?.apply(p.rows, p.now)),
    transport.subscribe('workers.update', (p) => stores.workers.set(p.crawlId, p.workers, p.now)),
    transport.onState((state) => {
      stores.connection.set(state);
      if (state === 'open') void refresh();
    }),
  ];

  const commands: Commands = {
    async crawl(command, crawlId) {
      const action = `${CRAWL_VERBS[command]} ${crawlName(crawlId)}`;
      try {
        const info = await transport.invoke(CRAWL_METHODS[command], { id: crawlId });
        crawls.applyInfo(info);
        if (command === 'start') {
          slotTables.open(crawlId);
          void syncTable(crawlId);
        }
        void loadStats(crawlId);
        return true;
      } catch (e) {
        messages.report(action, toAppError(e));
        return false;
      }
    },
    async slot(command, crawlId, key) {
      const action = `${command === 'pause' ? 'Pausing' : 'Resuming'} slot ${key}`;
      try {
        const row: SlotTuple = await transport.invoke(command === 'pause' ? 'slots.pause' : 'slots.resume', { id: crawlId, slot: key });
        slotTables.get(crawlId)?.apply([row]);
        return true;
      } catch (e) {
        messages.report(action, toAppError(e));
        return false;
      }
    },
    async slotControl(crawlId, key, control) {
      try {
        const slot = { id: crawlId, slot: key };
        const row: SlotTuple =
          control.kind === 'pinDelay' ? await transport.invoke('slots.pinDelay', { ...slot, seconds: control.seconds })
          : control.kind === 'pinConcurrency' ? await transport.invoke('slots.pinConcurrency', { ...slot, value: control.value })
          : control.kind === 'clearPins' ? await transport.invoke('slots.clearPins', slot)
          : await transport.invoke('slots.resetBackoff', slot);
        slotTables.get(crawlId)?.apply([row]);
        return { ok: true, result: row };
      } catch (e) {
        return { ok: false, error: toAppError(e) };
      }
    },
    async duplicateCrawl(crawlId) {
      try {
        const info = await transport.invoke('crawls.duplicate', { id: crawlId });
        crawls.applyInfo(info);
        return info;
      } catch (e) {
        messages.report(`Duplicating ${crawlName(crawlId)}`, toAppError(e));
        return null;
      }
    },
    async copyCrawl(crawlId, seedsText) {
      try {
        const info = await transport.invoke('crawls.duplicate', seedsText === undefined ? { id: crawlId } : { id: crawlId, seedsText });
        crawls.applyInfo(info);
        return { ok: true, result: info };
      } catch (e) {
        return { ok: false, error: toAppError(e) };
      }
    },
    async deleteCrawl(crawlId) {
      const action = `Deleting ${crawlName(crawlId)}`;
      try {
        await transport.invoke('crawls.delete', { id: crawlId });
        forgetPinnedRows(crawlId);
        forgetDismissedWarnings(crawlId);
        // 'crawls.changed' brings the new list too; this covers a missed event.
        transport.invoke('crawls.list', {}).then((list) => crawls.setList(list), () => undefined);
        return true;
      } catch (e) {
        messages.report(action, toAppError(e));
        return false;
      }
    },
    openCrawl(crawlId) {
      if (opened.has(crawlId)) return;
      opened.add(crawlId);
      slotTables.open(crawlId);
      // Live rows while it runs; a finished, stopped or imported crawl gets its slots as recorded.
      void syncTable(crawlId);
      void loadStats(crawlId);
      void loadLog(crawlId);
      if (crawls.crawl(crawlId)?.shared) void loadWorkers(crawlId);
    },
    async updateSettings(crawlId, changes) {
      try {
        const result = await transport.invoke('settings.update', { id: crawlId, changes });
        void loadSettings(crawlId);
        return { ok: true, result };
      } catch (e) {
        return { ok: false, error: toAppError(e) };
      }
    },
    async createCrawl(config, seeds = {}) {
      try {
        const result = await transport.invoke('crawls.create', { config, ...seeds });
        crawls.applyInfo(result.crawl);
        return { ok: true, result };
      } catch (e) {
        return { ok: false, error: toAppError(e) };
      }
    },
  };

  return {
    transport,
    stores,
    commands,
    dispose() {
      for (const off of offs) off();
    },
  };
}
