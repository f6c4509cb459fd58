// Scrapy crawls streamed in by the slotscope-scrapy extension: each session becomes a live crawl
// (source "Scrapy") whose records go through the history writer like the engine's, whose slot table
// comes from the downloader's slots the bridge reports, and whose console commands travel back to
// the spider in the answers to its batches, each recorded once in the change journal when applied.

import { AppRefusal, refuse } from '../app-refusal';
import { countResponse, emptySlotFigures, type SlotFigures } from '../slot-figures';
import type {
  AppError, AppEvents, CrawlInfo, CrawlStatsWire, EventName, Method, Params, Result, SlotTuple,
} from '../../../shared/contract';
import { SLOT_COLUMNS } from '../../../shared/contract';
import { recordDebugLine } from '../../../shared/debug-line';
import { applySettings, validateDelayPin, type Settings } from '../../../shared/settings';
import type { ChangeName, ChangeRecord, CrawlStatus, DelayCause, EventRecord, ResponseRecord } from '../../../shared/types';
import type { HistoryWriter } from '../store/history-writer';
import { BadBatch, parseBatch, type Batch, type CommandBody, type IngestAnswer, type WireAck, type WireCommand, type WireSlot } from './ingest-wire';
import { scrapyRefusal, settingsFromScrapy } from './scrapy-settings';

/** The source a crawl came from (CrawlInfo.source): only a Scrapy crawl says so. */
export const SCRAPY_SOURCE = 'Scrapy' as const;

/** How long a command may wait for the spider to apply it before the console is told it did not. */
export const COMMAND_TIMEOUT_MS = 5000;
/** A live Scrapy crawl that has sent nothing for this long is shown as interrupted (until it reports again). */
export const SILENCE_MS = 15_000;


/** What the ingest route answers: a status and a JSON body. */
export interface IngestReply {
  readonly status: 200 | 400 | 409 | 503;
  readonly body: IngestAnswer | { readonly ok: false; readonly error: string };
}

/** The part of a stored crawl this module reads (queries.ts CrawlDetail). */
interface StoredCrawl {
  readonly name: string;
  readonly status: CrawlStatus;
  readonly config: unknown;
}

export interface ScrapyCrawlsOptions {
  readonly writer: HistoryWriter;
  readonly emit: <E extends EventName>(event: E, payload: AppEvents[E]) => void;
  /** The crawl list changed (a crawl was created or changed status). */
  readonly listChanged: () => void;
  readonly stored: (id: number) => StoredCrawl | undefined;
  /** Clock for the silence watchdog (tests); default Date.now. */
  readonly now?: () => number;
}

/** Whether a stored crawl config is a Scrapy crawl's (it carries the bridge's `scrapy` block). */
export function isScrapyConfig(config: unknown): boolean {
  return typeof config === 'object' && config !== null && typeof (config as { scrapy?: unknown }).scrapy === 'object';
}

interface LiveSlot extends SlotFigures {
  wire: WireSlot | null;
  lastDelay: number;
  lastCause: DelayCause;
}

interface Waiting {
  readonly body: CommandBody;
  readonly resolve: (ack: WireAck) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

class ScrapyCrawl {
  readonly slots = new Map<string, LiveSlot>();
  readonly lastRows = new Map<string, SlotTuple>();
  readonly waiting = new Map<string, Waiting>();
  readonly acked = new Set<string>();
  readonly byStatus: Record<string, number> = {};
  status: CrawlStatus = 'running';
  finishedAt: number | null = null;
  lastSeq = 0;
  lastSeen: number;
  lastStatusEmit = 0;
  responses = 0;
  failures = 0;
  bytes = 0;
  inFlight = 0;
  scheduled: number | null = null;
  dropped = 0;
  closed = false;
  nextCommand = 0;

  constructor(
    readonly id: number,
    readonly session: string,
    readonly name: string,
    readonly createdAt: number,
    readonly startedAt: number,
    public settings: Settings,
    now: number,
  ) {
    this.lastSeen = now;
  }

  slot(key: string): LiveSlot {
    let s = this.slots.get(key);
    if (!s) {
      s = { ...emptySlotFigures(), wire: null, lastDelay: 0, lastCause: 'none' };
      this.slots.set(key, s);
    }
    return s;
  }

  tuple(key: string, s: LiveSlot): SlotTuple {
    const w = s.wire;
    const st = this.settings;
    const inFlight = w?.transferring ?? 0;
    const queued = w?.queued ?? 0;
    const state = w?.paused ? 'paused' : inFlight > 0 ? 'active' : queued > 0 ? 'waiting' : 'idle';
    const pinned = w?.pinDelay !== null && w?.pinDelay !== undefined;
    return [
      key, state, inFlight, w?.concurrency ?? st.CONCURRENT_REQUESTS_PER_DOMAIN,
      st.AUTOTHROTTLE_ENABLED ? st.AUTOTHROTTLE_TARGET_CONCURRENCY : null,
      round(w?.delay ?? s.lastDelay), pinned ? 'pin' : s.lastCause, w?.nextStartAt ?? null, s.lastLatency,
      s.latencyCount > 0 ? round(s.latencySum / s.latencyCount) : null,
      s.requests + inFlight, s.s2xx, s.s3xx, s.s4xx, s.s5xx, s.s429, s.failures, 0, queued, s.bytes,
      w?.pinDelay ?? null, w?.pinConcurrency ?? null,
    ];
  }

  rows(): SlotTuple[] {
    return [...this.slots].map(([k, s]) => this.tuple(k, s));
  }

  changedRows(): SlotTuple[] {
    const out: SlotTuple[] = [];
    for (const [k, s] of this.slots) {
      const row = this.tuple(k, s);
      const prev = this.lastRows.get(k);
      if (!prev || prev.some((v, i) => v !== row[i])) {
        this.lastRows.set(k, row);
        out.push(row);
      }
    }
    return out;
  }

  get live(): boolean {
    return !this.closed;
  }

  stats(): CrawlStatsWire {
    let queued = this.scheduled ?? 0;
    for (const s of this.slots.values()) queued += s.wire?.queued ?? 0;
    return {
      status: this.status, requests: this.responses + this.failures + this.inFlight, responses: this.responses, failures: this.failures,
      byStatus: { ...this.byStatus }, bytes: this.bytes, inFlight: this.inFlight, queued, slots: this.slots.size, robotsDisallowed: 0,
      startedAt: this.startedAt, finishedAt: this.finishedAt,
    };
  }

  info(): CrawlInfo {
    return {
      id: this.id, name: this.name, status: this.status, createdAt: this.createdAt, startedAt: this.startedAt, finishedAt: this.finishedAt,
      requests: this.responses + this.failures + this.inFlight, responses: this.responses, failures: this.failures, slots: this.slots.size,
      source: SCRAPY_SOURCE,
    };
  }
}

/** Status of a Scrapy crawl once its spider closed with `reason` (Scrapy's finish_reason). */
export function statusOfReason(reason: string): CrawlStatus {
  if (reason === 'finished') return 'finished';
  if (reason === 'slotscope_stop' || reason === 'cancelled' || reason === 'shutdown') return 'stopped';
  return reason.includes('error') ? 'failed' : 'finished';
}

/** Every Scrapy crawl of this host process, by session and by crawl id. */
export class ScrapyCrawls {
  private readonly bySession = new Map<string, ScrapyCrawl>();
  private readonly byId = new Map<number, ScrapyCrawl>();
  private readonly opening = new Map<string, Promise<ScrapyCrawl>>();
  private readonly watchdog: NodeJS.Timeout;
  private closing = false;
  private readonly now: () => number;

  constructor(private readonly o: ScrapyCrawlsOptions) {
    this.now = o.now ?? Date.now;
    this.watchdog = setInterval(() => this.checkSilence(), 1000);
    this.watchdog.unref();
  }

  /** The live CrawlInfo of a Scrapy crawl this process is receiving, or undefined. */
  info(id: number): CrawlInfo | undefined {
    return this.byId.get(id)?.info();
  }

  /** Applies one POSTed batch (already parsed JSON); never throws for a bad batch: it answers 400. */
  async ingest(body: unknown): Promise<IngestReply> {
    if (this.closing) return { status: 503, body: { ok: false, error: 'Slotscope is closing' } };
    let batch: Batch;
    try {
      batch = parseBatch(body);
    } catch (e) {
      if (e instanceof BadBatch) return { status: 400, body: { ok: false, error: `batch refused, nothing of it applied: ${e.message}` } };
      throw e;
    }
    // While the history cannot take more (a store fault, or too much waiting), the spider keeps its records and retries.
    const block = this.o.writer.blocked;
    if (block) return { status: 503, body: { ok: false, error: `the history cannot take more now: ${block.text}` } };
    let crawl = this.bySession.get(batch.session);
    if (!crawl) {
      if (!batch.open) {
        return { status: 409, body: { ok: false, error: `this Slotscope does not know session ${batch.session} (it was restarted); send "open" again` } };
      }
      let pending = this.opening.get(batch.session);
      if (!pending) {
        pending = this.open(batch);
        this.opening.set(batch.session, pending);
        pending.finally(() => this.opening.delete(batch.session)).catch(() => undefined);
      }
      crawl = await pending;
    }
    crawl.lastSeen = this.now();
    if (batch.seq <= crawl.lastSeq || crawl.closed) return { status: 200, body: this.answer(crawl, true) };
    crawl.lastSeq = batch.seq;
    this.apply(crawl, batch);
    return { status: 200, body: this.answer(crawl) };
  }

  private answer(crawl: ScrapyCrawl, duplicate = false): IngestAnswer {
    const commands = crawl.closed ? [] : [...crawl.waiting].map(([id, w]) => ({ id, ...w.body }) as WireCommand);
    return { ok: true, crawlId: crawl.id, commands, ...(duplicate ? { duplicate: true as const } : {}) };
  }

  private async open(batch: Batch): Promise<ScrapyCrawl> {
    const open = batch.open!;
    const { settings, ignored } = settingsFromScrapy(open.settings);
    const seeds = open.startUrls.filter((u) => /^https?:\/\//i.test(u) && URL.canParse(u));
    const config = {
      name: open.spider,
      seeds: seeds.length > 0 ? seeds : ['http://scrapy.invalid/'],
      follow: { scope: 'none' },
      scrapy: {
        spider: open.spider, session: batch.session, scrapyVersion: open.scrapyVersion, bridgeVersion: open.bridgeVersion,
        python: open.python, pid: open.pid, autothrottle: open.autothrottle, overridden: open.overridden,
      },
    };
    const createdAt = this.now();
    const id = await this.o.writer.createCrawl(open.spider, config, settings, createdAt);
    this.o.writer.updateCrawl(id, { status: 'running', startedAt: open.startedAt });
    const crawl = new ScrapyCrawl(id, batch.session, open.spider, createdAt, open.startedAt, settings, this.now());
    this.bySession.set(batch.session, crawl);
    this.byId.set(id, crawl);
    const text = `Scrapy ${open.scrapyVersion} spider ${JSON.stringify(open.spider)} (pid ${open.pid}) opened, ` +
      `streamed by slotscope-scrapy ${open.bridgeVersion}; AutoThrottle ${open.autothrottle ? 'on' : 'off'}`;
    this.o.writer.recordEvent(id, { t: open.startedAt, slot: null, kind: 'info', code: 'scrapy-open', text });
    for (const i of ignored) {
      this.o.writer.recordEvent(id, { t: open.startedAt, slot: null, kind: 'info', code: 'scrapy-setting', text: `${i.setting} not taken over: ${i.reason}` });
    }
    this.o.listChanged();
    return crawl;
  }

  private apply(crawl: ScrapyCrawl, b: Batch): void {
    const w = this.o.writer;
    const id = crawl.id;
    for (const r of b.responses) {
      const record: ResponseRecord = {
        t: r.t, startedAt: r.startedAt, waitMs: r.waitMs, slot: r.slot, url: r.url, method: r.method, status: r.status,
        latency: r.latency, downloadTime: r.downloadTime, bytes: r.bytes, inFlight: r.inFlight, delayBefore: r.delayBefore,
        delayAfter: r.delayAfter, delayCause: r.delayCause, backoffLevel: 0, reused: null, errorKind: r.errorKind,
        errorMessage: r.errorMessage, depth: r.depth, contentType: r.contentType, attempt: r.attempt,
      };
      w.recordResponse(id, record);
      // AUTOTHROTTLE_DEBUG: where Scrapy printed its line, the Log tab has the same line, rendered from the record.
      if (r.debug) w.recordEvent(id, { t: r.t, slot: r.slot, kind: 'debug', code: 'autothrottle', text: recordDebugLine(record) });
      if (r.errorKind !== null) w.recordEvent(id, { t: r.t, slot: r.slot, kind: 'error', code: r.errorKind, text: `${r.url}: ${r.errorKind}: ${r.errorMessage ?? ''}` });
      const s = crawl.slot(r.slot);
      countResponse(s, r);
      s.lastDelay = r.delayAfter;
      s.lastCause = r.delayCause;
      crawl.bytes += r.bytes;
      if (r.status === null) crawl.failures++;
      else {
        crawl.responses++;
        crawl.byStatus[r.status] = (crawl.byStatus[r.status] ?? 0) + 1;
      }
    }
    for (const e of b.events) {
      const ev: EventRecord = { t: e.t, slot: e.slot, kind: e.kind, code: e.code, text: e.text };
      w.recordEvent(id, ev);
      if (e.kind === 'warning') this.o.emit('warning', { crawlId: id, event: ev });
    }
    for (const s of b.slots) crawl.slot(s.key).wire = s;
    for (const key of b.gone) {
      const s = crawl.slots.get(key);
      if (s) s.wire = null;
    }
    for (const a of b.acks) this.acked(crawl, a);
    if (b.dropped > crawl.dropped) {
      const t = b.responses.at(-1)?.t ?? this.now();
      w.recordEvent(id, {
        t, slot: null, kind: 'warning', code: 'scrapy-dropped',
        text: `${b.dropped - crawl.dropped} records were dropped by the spider while Slotscope was unreachable (its buffer was full)`,
      });
      crawl.dropped = b.dropped;
    }
    let status: CrawlStatus = crawl.status;
    if (b.state) {
      crawl.inFlight = b.state.inFlight;
      crawl.scheduled = b.state.scheduled;
      status = b.state.paused ? 'paused' : 'running';
    }
    if (b.close) {
      this.closeCrawl(crawl, b);
      return;
    }
    this.setStatus(crawl, status);
    this.publish(crawl);
  }

  private acked(crawl: ScrapyCrawl, a: WireAck): void {
    if (crawl.acked.has(a.id)) return;
    crawl.acked.add(a.id);
    const waiting = crawl.waiting.get(a.id);
    crawl.waiting.delete(a.id);
    if (waiting) clearTimeout(waiting.timer);
    if (a.ok) {
      const changes: ChangeRecord[] = [];
      let settings = crawl.settings;
      const sent = waiting?.body.op === 'settings' ? waiting.body.changes : undefined;
      for (const [slot, setting, oldValue, newValue] of a.changes) {
        if (slot === null && sent && setting in sent) {
          // A setting: its old and new values in the schema's form (RANDOMIZE_DOWNLOAD_DELAY true is 0.5).
          const r = applySettings({ [setting]: sent[setting] }, settings);
          if (r.ok) {
            const name = setting as keyof Settings;
            changes.push({ t: a.at, slot: null, setting: name, source: 'user', oldValue: settings[name], newValue: r.settings[name] });
            settings = r.settings;
            continue;
          }
        }
        changes.push({ t: a.at, slot, setting: setting as ChangeName, source: 'user', oldValue, newValue });
      }
      if (settings !== crawl.settings) {
        crawl.settings = settings;
        this.o.writer.updateCrawl(crawl.id, { settings });
      }
      for (const ch of changes) this.o.writer.recordChange(crawl.id, ch);
      if (changes.length > 0) this.o.emit('settings.changed', { crawlId: crawl.id, changes });
    } else {
      this.o.writer.recordEvent(crawl.id, { t: a.at, slot: null, kind: 'info', code: 'scrapy-refused', text: `Scrapy refused a command: ${a.message ?? ''}` });
    }
    waiting?.resolve(a);
  }

  private setStatus(crawl: ScrapyCrawl, status: CrawlStatus): void {
    if (status === crawl.status) return;
    crawl.status = status;
    this.o.writer.updateCrawl(crawl.id, { status });
    this.o.emit('crawl.status', { crawlId: crawl.id, stats: crawl.stats() });
    crawl.lastStatusEmit = this.now();
    this.o.listChanged();
  }

  /** Changed slot rows now; the crawl's figures about once a second. */
  private publish(crawl: ScrapyCrawl): void {
    const rows = crawl.changedRows();
    if (rows.length > 0) this.o.emit('slots.update', { crawlId: crawl.id, rows, now: this.now() });
    if (this.now() - crawl.lastStatusEmit >= 1000) {
      crawl.lastStatusEmit = this.now();
      this.o.emit('crawl.status', { crawlId: crawl.id, stats: crawl.stats() });
    }
  }

  private closeCrawl(crawl: ScrapyCrawl, b: Batch): void {
    const c = b.close!;
    const status = statusOfReason(c.reason);
    crawl.closed = true;
    crawl.inFlight = 0;
    crawl.scheduled = 0;
    crawl.finishedAt = c.t;
    for (const s of crawl.slots.values()) s.wire = null;
    const w = this.o.writer;
    const counted = c.stats['response_received_count'];
    const text = `Spider closed (${c.reason}): ${crawl.responses} responses and ${crawl.failures} failed downloads recorded` +
      (typeof counted === 'number' ? `; Scrapy counted ${counted} responses received` : '') +
      (c.unsent > 0 ? `; ${c.unsent} records could not be sent` : '');
    w.recordEvent(crawl.id, { t: c.t, slot: null, kind: c.unsent > 0 ? 'warning' : 'info', code: 'scrapy-close', text, data: { reason: c.reason, unsent: c.unsent } });
    w.updateCrawl(crawl.id, {
      status, finishedAt: c.t, settings: crawl.settings,
      summary: {
        crawl_id: crawl.id, requests: crawl.responses + crawl.failures, responses: crawl.responses, by_status: crawl.byStatus,
        failures: crawl.failures, slots: crawl.slots.size, seconds: (c.t - crawl.startedAt) / 1000,
        scrapy: { finish_reason: c.reason, stats: c.stats, unsent: c.unsent },
      },
    });
    for (const [cid, waiting] of crawl.waiting) {
      clearTimeout(waiting.timer);
      waiting.reject(new AppRefusal({ code: 'conflict', message: `the spider closed (${c.reason}) before it applied the command` }));
      crawl.waiting.delete(cid);
    }
    crawl.status = status;
    this.byId.delete(crawl.id);
    const rows = crawl.changedRows();
    if (rows.length > 0) this.o.emit('slots.update', { crawlId: crawl.id, rows, now: this.now() });
    void w.flush().catch(() => undefined).then(() => {
      this.o.emit('crawl.status', { crawlId: crawl.id, stats: crawl.stats() });
      this.o.listChanged();
    });
  }

  private checkSilence(): void {
    const now = this.now();
    for (const crawl of this.byId.values()) {
      if (crawl.status === 'interrupted' || now - crawl.lastSeen < SILENCE_MS) continue;
      this.o.writer.recordEvent(crawl.id, {
        t: now, slot: null, kind: 'warning', code: 'scrapy-silent',
        text: `no word from the spider for ${Math.round((now - crawl.lastSeen) / 1000)} s (it was killed, or cannot reach Slotscope); the crawl continues here if it reports again`,
      });
      this.setStatus(crawl, 'interrupted');
    }
  }

  // --- the console's requests on a Scrapy crawl ---------------------------------------------

  /** Sends a command with the next answer and resolves when the spider applied it; refuses in words otherwise. */
  private command(crawl: ScrapyCrawl, body: CommandBody): Promise<WireAck> {
    if (crawl.closed) refuse('conflict', `crawl ${crawl.id} (Scrapy spider ${crawl.name}) has ended`, 'id');
    if (crawl.status === 'interrupted') {
      refuse('conflict', `crawl ${crawl.id}: the spider has not reported for ${Math.round((this.now() - crawl.lastSeen) / 1000)} s, so it cannot be steered now`, 'id');
    }
    const id = `${crawl.id}.${++crawl.nextCommand}`;
    return new Promise<WireAck>((resolve, reject) => {
      const timer = setTimeout(() => {
        crawl.waiting.delete(id);
        reject(new AppRefusal({
          code: 'conflict',
          message: `the spider did not apply the command within ${COMMAND_TIMEOUT_MS / 1000} s (it is busy, or cannot reach Slotscope); it was withdrawn`,
        }));
      }, COMMAND_TIMEOUT_MS);
      crawl.waiting.set(id, { body, resolve, reject, timer });
    }).then((ack) => {
      if (!ack.ok) refuse('conflict', `Scrapy refused it: ${ack.message ?? 'no reason given'}`);
      return ack;
    });
  }

  private row(crawl: ScrapyCrawl, key: string): SlotTuple {
    return crawl.tuple(key, crawl.slot(key));
  }

  /**
   * Handles `method` when it addresses a Scrapy crawl: a promise of its result, or undefined for
   * the core's own handler (a Slotscope crawl, or a request a stored Scrapy crawl answers like any).
   */
  route<M extends Method>(method: M, p: Params<M>): Promise<Result<M>> | undefined {
    const ref = p as { id?: unknown; crawlId?: unknown };
    const id = typeof ref.id === 'number' ? ref.id : typeof ref.crawlId === 'number' ? ref.crawlId : undefined;
    if (id === undefined) return undefined;
    const live = this.byId.get(id);
    if (!live) {
      // A stored Scrapy crawl answers like any crawl, but cannot be run again by Slotscope.
      if (method !== 'crawls.start' && method !== 'crawls.resume' && method !== 'crawls.duplicate') return undefined;
      const c = this.o.stored(id);
      if (!c || !isScrapyConfig(c.config)) return undefined;
      const spider = (c.config as { scrapy: { spider?: string } }).scrapy.spider ?? c.name;
      const again = `it was run by the Scrapy spider ${JSON.stringify(spider)}: run \`scrapy crawl ${spider}\` again for a new crawl (Slotscope cannot run a Scrapy spider)`;
      return Promise.reject(new AppRefusal(method === 'crawls.duplicate'
        ? { code: 'conflict', message: `crawl ${id} cannot be duplicated: ${again}`, field: 'id' }
        : { code: 'conflict', message: `crawl ${id} is ${c.status}; ${again}`, field: 'id' }));
    }
    if (method === 'crawls.delete' && live.status === 'interrupted') {
      // A spider that went silent (killed) can be deleted; if it reports again, it opens a new crawl.
      this.byId.delete(id);
      this.bySession.delete(live.session);
      live.closed = true;
      return undefined;
    }
    const handler = (this.handlers as Partial<Record<Method, (c: ScrapyCrawl, p: unknown) => unknown>>)[method];
    if (!handler) return undefined;
    return Promise.resolve().then(() => handler(live, p) as Result<M>);
  }

  private readonly handlers: { [M in Method]?: (c: ScrapyCrawl, p: Params<M>) => Result<M> | Promise<Result<M>> } = {
    'crawls.start': (c) => refuse('conflict', `crawl ${c.id} is Scrapy spider ${c.name}'s, which started it; it is ${c.status}`, 'id'),
    'crawls.duplicate': (c) => refuse('conflict', `crawl ${c.id} cannot be duplicated: it is run by the Scrapy spider ${JSON.stringify(c.name)} (Slotscope cannot run a Scrapy spider)`, 'id'),
    'crawls.delete': (c) => refuse('conflict', `crawl ${c.id} is running (Scrapy spider ${c.name}); stop it before deleting it`, 'id'),
    'crawls.pause': async (c) => {
      if (c.status !== 'paused') {
        await this.command(c, { op: 'pause' });
        this.setStatus(c, 'paused');
      }
      return c.info();
    },
    'crawls.resume': async (c) => {
      await this.command(c, { op: 'resume' });
      this.setStatus(c, 'running');
      return c.info();
    },
    'crawls.stop': async (c) => {
      await this.command(c, { op: 'stop', reason: 'slotscope_stop' });
      return c.info();
    },
    'crawls.stats': (c) => c.stats(),
    'settings.get': (c) => c.settings,
    'settings.update': async (c, p) => {
      const r = applySettings(p.changes, c.settings);
      if (!r.ok) refuse('invalid', r.errors.map((e) => e.message).join('\n'), r.errors[0]?.setting);
      const next = r as { settings: Settings; changed: readonly (keyof Settings)[] };
      const refusals = next.changed.map((n) => scrapyRefusal(n)).filter((m): m is string => m !== null);
      if (refusals.length > 0) refuse('invalid', `${refusals.join('\n')}\nNothing was changed.`, next.changed.find((n) => scrapyRefusal(n) !== null));
      const at = this.now();
      if (next.changed.length === 0) return { changed: [], at };
      const changes = Object.fromEntries(next.changed.map((n) => [n, next.settings[n]]));
      const ack = await this.command(c, { op: 'settings', changes });
      return { changed: next.changed, at: ack.at };
    },
    'slots.pause': async (c, p) => {
      await this.command(c, { op: 'slot-pause', slot: p.slot, paused: true });
      return this.row(c, p.slot);
    },
    'slots.resume': async (c, p) => {
      await this.command(c, { op: 'slot-pause', slot: p.slot, paused: false });
      return this.row(c, p.slot);
    },
    'slots.pinDelay': async (c, p) => {
      let seconds: number | null;
      try {
        seconds = validateDelayPin(p.seconds);
      } catch (e) {
        return refuse('invalid', (e as Error).message, 'seconds');
      }
      await this.command(c, { op: 'pin-delay', slot: p.slot, seconds });
      return this.row(c, p.slot);
    },
    'slots.pinConcurrency': async (c, p) => {
      await this.command(c, { op: 'pin-concurrency', slot: p.slot, value: p.value });
      return this.row(c, p.slot);
    },
    'slots.clearPins': async (c, p) => {
      await this.command(c, { op: 'clear-pins', slot: p.slot });
      return this.row(c, p.slot);
    },
    'slots.resetBackoff': (c, p) => refuse('conflict', `slot ${p.slot}: Scrapy has no backoff, so there is nothing to reset`, 'slot'),
    'slots.snapshot': (c) => ({ columns: SLOT_COLUMNS, rows: c.rows(), now: this.now() }),
    'slots.queue': (c, p) => ({ slot: p.slot, queued: c.slots.get(p.slot)?.wire?.queued ?? 0, items: [], live: true, now: this.now() }),
  };

  /** Stops the watchdog; live crawls are left interrupted (their spiders keep crawling and may report to the next Slotscope). */
  close(): void {
    this.closing = true;
    clearInterval(this.watchdog);
    for (const crawl of this.byId.values()) {
      for (const waiting of crawl.waiting.values()) {
        clearTimeout(waiting.timer);
        waiting.reject(new AppRefusal({ code: 'conflict', message: 'Slotscope is closing' }));
      }
      crawl.waiting.clear();
      try {
        this.o.writer.recordEvent(crawl.id, {
          t: this.now(), slot: null, kind: 'warning', code: 'scrapy-host-closed',
          text: 'Slotscope closed while the spider was running; what it sent afterwards is not in this crawl',
        });
        this.o.writer.updateCrawl(crawl.id, { status: 'interrupted' });
      } catch {
        /* the writer is closing too */
      }
    }
    this.byId.clear();
  }
}
