// Everything live the renderer holds, built once at start-up from one transport: the stores, the
// one event subscription that feeds them, and the commands the views call (errors to the message line).

import type { CrawlInfo, SlotTuple } from '../../../shared/contract';
import { toAppError, type Transport } from '../transport/transport';
import { ConnectionStore } from './connection-store';
import { CrawlsStore } from './crawls-store';
import { MessageStore } from './message-store';
import { SlotTables } from './slot-table-store';

export interface Stores {
  readonly connection: ConnectionStore;
  readonly crawls: CrawlsStore;
  readonly slotTables: SlotTables;
  readonly messages: MessageStore;
}

export type CrawlCommand = 'start' | 'pause' | 'resume' | 'stop';
export type SlotCommand = 'pause' | 'resume';

export interface Commands {
  /** Starts, pauses, resumes or stops a crawl; resolves false when the host refused (see the message line). */
  crawl(command: CrawlCommand, crawlId: number): Promise<boolean>;
  /** Pauses or resumes one slot of a running crawl. */
  slot(command: SlotCommand, crawlId: number, key: string): Promise<boolean>;
  /** Opens a crawl's slot table (once): its snapshot when it runs, and its figures. Views get the table from `stores.slotTables`. */
  openCrawl(crawlId: number): void;
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
  };
  const { crawls, slotTables, messages } = stores;
  const opened = new Set<number>();

  const crawlName = (id: number) => {
    const c = crawls.crawl(id);
    return c ? `“${c.name}”` : `crawl ${id}`;
  };

  /** Replaces a table with the engine's rows; a crawl that is not running keeps what it had. */
  async function syncTable(crawlId: number): Promise<void> {
    try {
      const { rows } = await transport.invoke('slots.snapshot', { id: crawlId });
      slotTables.get(crawlId)?.replaceAll(rows);
    } catch (e) {
      const err = toAppError(e);
      if (err.code !== 'conflict') messages.report(`Loading the slots of ${crawlName(crawlId)}`, err);
    }
  }

  async function loadStats(crawlId: number): Promise<void> {
    try {
      crawls.applyStats(crawlId, await transport.invoke('crawls.stats', { id: crawlId }));
    } catch (e) {
      messages.report(`Loading the figures of ${crawlName(crawlId)}`, toAppError(e));
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
  }

  // The one subscription that feeds the stores.
  const offs = [
    transport.subscribe('crawls.changed', (p) => crawls.setList(p.crawls)),
    transport.subscribe('crawl.status', (p) => {
      const before = crawls.statsOf(p.crawlId)?.status ?? crawls.crawl(p.crawlId)?.status;
      crawls.applyStats(p.crawlId, p.stats);
      // An open crawl that just came alive (started elsewhere, or before its table had rows): catch up.
      if (!isLive(before) && isLive(p.stats.status) && slotTables.get(p.crawlId)) void syncTable(p.crawlId);
    }),
    transport.subscribe('slots.update', (p) => slotTables.get(p.crawlId)?.apply(p.rows)),
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
    openCrawl(crawlId) {
      if (opened.has(crawlId)) return;
      opened.add(crawlId);
      slotTables.open(crawlId);
      if (isLive(crawls.crawl(crawlId)?.status)) void syncTable(crawlId);
      void loadStats(crawlId);
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
