// The console's side of a shared crawl (issue 18, `slotscope serve --redis URL`): a crawl started from
// the console opens in Redis, this host records it (the Recorder, into the core's one history writer)
// and fetches too (a SharedWorker), and its slot table, figures, controls and Workers panel are served
// like any crawl's: controls go to every worker through SharedControl and are recorded once, here.

import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import type { AppError, AppEvents, CrawlInfo, CrawlStatsWire, EventName, Method, Params, Result, SlotState, SlotTuple, WorkerWire } from '../../../shared/contract';
import { SLOT_COLUMNS } from '../../../shared/contract';
import { applySettings, type Settings } from '../../../shared/settings';
import type { ChangeRecord, CrawlChange, CrawlStatus, DelayCause } from '../../../shared/types';
import type { CrawlConfig } from '../engine/crawl-config';
import type { HistoryWriter } from '../store/history-writer';
import { SharedControl, type SharedSlot, type SharedStatus } from './control';
import { assertNoneOpen, dbKey, openShared, Recorder } from './recorder';
import { BY_DB_KEY, connectRedis, crawlPrefix, OPEN_KEY, SharedCrawlError, shownUrl, closeRedis } from './redis';
import { parseCrawlConfig } from '../engine/crawl-config';
import { openHistoryReader, type CrawlDetail } from '../store/queries';
import { sharedUnsupported, SharedWorker, type QueuedRequest as QueuedInRedis, type StreamedRecord } from './worker';
import { AppRefusal, refuse } from '../app-refusal';
import { countResponse, countStored, emptySlotFigures, type SlotFigures } from '../slot-figures';

/** How often the slot rows are read from Redis (the slot table's at most 10 updates a second). */
const SLOTS_MS = 250;
/** How often the workers and the crawl's status are read. */
const WORKERS_MS = 1000;
/** The span responses per second are counted over (heartbeats publish the counts every second). */
const RATE_SPAN_MS = 3000;


export interface SharedCrawlsOptions {
  readonly redis: string;
  readonly writer: HistoryWriter;
  /** The history file (the key `crawl --resume ID --redis` finds the crawl by). */
  readonly db: string;
  readonly emit: <E extends EventName>(event: E, payload: AppEvents[E]) => void;
  /** The crawl list changed (a crawl started or ended). */
  readonly listChanged: () => void;
  /** An operator's action on a whole crawl, recorded once in its journal (the core's). */
  readonly journal: (id: number, t: number, setting: CrawlChange, oldValue: unknown, newValue: unknown) => void;
  readonly log: (line: string) => void;
  /** This host's worker name (default recorder@HOST). */
  readonly name?: string;
}

const round = (x: number, digits = 4) => Math.round(x * 10 ** digits) / 10 ** digits;

const STATUS: Readonly<Record<SharedStatus, CrawlStatus>> = { starting: 'running', running: 'running', paused: 'paused', stopped: 'stopped', finished: 'finished' };

class LiveShared {
  readonly figures = new Map<string, SlotFigures>();
  readonly lastRows = new Map<string, SlotTuple>();
  rows: SlotTuple[] = [];
  slots: SharedSlot[] = [];
  workers: WorkerWire[] = [];
  /** Per worker: its responses count at each reading in the last RATE_SPAN_MS. */
  readonly readings = new Map<string, { t: number; n: number }[]>();
  readonly byStatus: Record<string, number> = {};
  responses = 0;
  failures = 0;
  bytes = 0;
  status: CrawlStatus = 'running';
  finishedAt: number | null = null;
  ended = false;
  settings: Settings;
  recorderDone: Promise<void> = Promise.resolve();
  pausing = false;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly createdAt: number,
    readonly startedAt: number,
    readonly sid: string,
    readonly control: SharedControl,
    readonly config: CrawlConfig,
    readonly recorder: Recorder,
    readonly recorderRedis: Redis,
    readonly worker: SharedWorker | null,
  ) {
    this.settings = config.settings;
  }

  figure(slot: string): SlotFigures {
    let f = this.figures.get(slot);
    if (!f) {
      f = emptySlotFigures();
      this.figures.set(slot, f);
    }
    return f;
  }

  /** A committed record's figures (the Recorder's onRecord). */
  add(rec: StreamedRecord): void {
    const r = rec.resp;
    if (!r) return;
    countResponse(this.figure(r.slot), r);
    this.bytes += r.bytes;
    if (r.status === null) {
      this.failures++;
      return;
    }
    this.responses++;
    this.byStatus[r.status] = (this.byStatus[r.status] ?? 0) + 1;
  }

  tuple(slot: SharedSlot, now: number): SlotTuple {
    const s = this.settings;
    const p = slot.policy;
    const f = this.figure(slot.key);
    const paused = this.status !== 'running';
    const state: SlotState = p.paused || paused ? 'paused' : p.backoff.blockedUntil > now ? 'blocked' : p.backoff.level > 0 ? 'backoff'
      : slot.inFlight > 0 ? 'active' : slot.queued > 0 ? 'waiting' : 'idle';
    const eff = p.effectiveDelay(s, now);
    const at = p.autothrottle(s);
    return [
      slot.key, state, slot.inFlight, p.concurrency(s), at.enabled ? at.target : null, round(eff.delay), eff.cause as DelayCause,
      slot.queued > 0 && !paused ? Math.round(Math.max(now, slot.readyAt)) : null, f.lastLatency,
      f.latencyCount > 0 ? round(f.latencySum / f.latencyCount) : null,
      f.requests + slot.inFlight, f.s2xx, f.s3xx, f.s4xx, f.s5xx, f.s429, f.failures, p.backoff.level, slot.queued, f.bytes,
      p.pinDelay, p.pinConcurrency,
    ];
  }

  stats(): CrawlStatsWire {
    let inFlight = 0;
    let queued = 0;
    for (const s of this.slots) {
      inFlight += s.inFlight;
      queued += s.queued;
    }
    if (this.ended) inFlight = queued = 0;
    return {
      status: this.status, requests: this.responses + this.failures + inFlight, responses: this.responses, failures: this.failures,
      byStatus: { ...this.byStatus }, bytes: this.bytes, inFlight, queued, slots: Math.max(this.slots.length, this.figures.size), robotsDisallowed: 0,
      startedAt: this.startedAt, finishedAt: this.finishedAt,
    };
  }

  info(): CrawlInfo {
    const s = this.stats();
    return {
      id: this.id, name: this.name, status: this.status, createdAt: this.createdAt, startedAt: this.startedAt, finishedAt: this.finishedAt,
      requests: s.requests, responses: s.responses, failures: s.failures, slots: s.slots, shared: true,
    };
  }
}

/** Every shared crawl this host records, by crawl id (those that ended stay, for their Workers panel, until the host stops). */
export class SharedCrawls {
  private readonly byId = new Map<number, LiveShared>();
  private readonly name: string;
  private closing = false;
  /** Stored crawls being taken up (a second resume meanwhile is refused, not recorded twice). */
  private readonly adopting = new Set<number>();
  private slotTimer: NodeJS.Timeout | null = null;
  private workerTimer: NodeJS.Timeout | null = null;
  private polling = false;

  private constructor(private readonly o: SharedCrawlsOptions, private readonly r: Redis) {
    this.name = o.name ?? `recorder@${hostname()}`;
  }

  /** Connects to the Redis of `o.redis` (checked: a bad URL, a refused password or an old Redis throw SharedCrawlError). */
  static async connect(o: SharedCrawlsOptions): Promise<SharedCrawls> {
    const r = await connectRedis(o.redis, { name: `slotscope console ${o.name ?? `recorder@${hostname()}`}`, log: o.log });
    return new SharedCrawls(o, r);
  }

  /** The live CrawlInfo of a shared crawl of this host, or undefined. */
  info(id: number): CrawlInfo | undefined {
    return this.byId.get(id)?.info();
  }

  /** Whether a shared crawl of this host is still being recorded (not finished or stopped). */
  running(id: number): boolean {
    const c = this.byId.get(id);
    return c !== undefined && !c.ended;
  }

  /** Starts created crawl `id` as a shared crawl: opened in Redis, recorded here, fetched here and by every worker that joins. */
  async start(id: number, config: CrawlConfig, createdAt: number): Promise<CrawlInfo> {
    if (this.closing) refuse('conflict', 'the host is closing');
    const unsupported = sharedUnsupported(config);
    if (unsupported.length > 0) refuse('invalid', `a shared crawl (serve --redis) cannot honour: ${unsupported.join('; ')}`);
    let opened: { sid: string; prefix: string; startedAt: number };
    try {
      await assertNoneOpen(this.r);
      opened = await openShared(this.r, config, id, this.o.db, this.name);
    } catch (e) {
      if (e instanceof SharedCrawlError) refuse('conflict', e.message, 'id');
      throw e;
    }
    // The row says where the crawl lives, so a restarted host resumes it there and nowhere else.
    this.o.writer.updateCrawl(id, { status: 'running', startedAt: opened.startedAt, shared: { sid: opened.sid, redis: shownUrl(this.o.redis) } });
    const c = await this.attach(id, config, createdAt, opened.startedAt, opened.sid, 'running');
    this.o.log(`crawl ${id}: shared crawl ${opened.sid} open in Redis; workers join with: slotscope worker --redis URL`);
    this.o.listChanged();
    return c.info();
  }

  /** Records shared crawl `sid` (crawl `id` of the history) here and fetches for it: its recorder, this host's worker, its live figures. */
  private async attach(id: number, config: CrawlConfig, createdAt: number, startedAt: number, sid: string, status: CrawlStatus,
    /** Before the recorder reads anything: a crawl taken up counts what is recorded already. */
    before?: (c: LiveShared) => Promise<void>): Promise<LiveShared> {
    const prefix = crawlPrefix(sid);
    const rr = await connectRedis(this.o.redis, { name: `slotscope ${this.name} recorder`, log: this.o.log });
    const wr = await connectRedis(this.o.redis, { name: `slotscope ${this.name} fetcher`, log: this.o.log });
    let live: LiveShared | null = null;
    const recorder = new Recorder(rr, prefix, this.o.writer, id, config.settings, this.o.log, (rec) => live && this.recorded(live, rec),
      // A worker lost: said to every open console at once, as the workers' own warnings are.
      (e) => this.o.emit('warning', { crawlId: id, event: e }));
    const worker = new SharedWorker({ redis: wr, prefix, name: this.name, log: this.o.log });
    const c = (live = new LiveShared(id, config.name, createdAt, startedAt, sid, new SharedControl(this.r, prefix), config, recorder, rr, worker));
    c.status = status;
    try {
      await before?.(c);
    } catch (e) {
      closeRedis(rr);
      closeRedis(wr);
      throw e;
    }
    this.byId.set(id, c);
    const fetching = worker.run().catch((e: unknown) => this.o.log(`${this.name}: stopped fetching: ${(e as Error).message}`)).finally(() => closeRedis(wr));
    c.recorderDone = recorder.run(() => c.pausing).then(
      (end) => this.ended(c, end, fetching),
      (e: unknown) => {
        this.o.log(`shared crawl ${sid} (crawl ${id}): the recorder failed: ${(e as Error).message}`);
        return this.ended(c, 'failed', fetching);
      },
    );
    this.arm();
    return c;
  }

  /**
   * The shared crawl of stored crawl `row` in this Redis: its id and status there, or null when this
   * Redis does not have it (flushed, or not the Redis it was opened in). Found as `crawl --resume ID
   * --redis` finds it (by database file and crawl id), and checked to be this database's crawl.
   */
  private async find(row: CrawlDetail): Promise<{ sid: string; status: SharedStatus } | null> {
    const key = dbKey(this.o.db, row.id);
    const candidates = [await this.r.hget(BY_DB_KEY, key), row.shared?.sid ?? null];
    for (const sid of candidates) {
      if (sid === null) continue;
      const [db, status] = await this.r.hmget(`${crawlPrefix(sid)}meta`, 'db', 'status');
      if (db === key && status !== null && Object.hasOwn(STATUS, status)) return { sid, status: status as SharedStatus };
    }
    return null;
  }

  /**
   * At start-up: every paused or interrupted crawl of the history that is open in this Redis (its
   * workers perhaps still attached, still fetching if this host was killed) is recorded here again,
   * shown as shared with its workers, and steered like one started here. Returns the ids taken up.
   */
  async adoptOpen(rows: readonly CrawlDetail[]): Promise<number[]> {
    const taken: number[] = [];
    for (const row of rows) {
      if (row.status !== 'paused' && row.status !== 'interrupted' && row.status !== 'running') continue;
      if (this.byId.has(row.id)) continue;
      try {
        const found = await this.find(row);
        if (found === null) continue;
        const refused = await this.adopt(row, found);
        if (refused !== null) this.o.log(`crawl ${row.id}: shared crawl ${found.sid} not taken up: ${refused}`);
        else taken.push(row.id);
      } catch (e) {
        this.o.log(`crawl ${row.id}: could not look for its shared crawl in Redis: ${(e as Error).message}`);
      }
    }
    if (taken.length > 0) this.o.listChanged();
    return taken;
  }

  /** Takes up shared crawl `found` of stored crawl `row` (see adoptOpen); a reason when it cannot. */
  private async adopt(row: CrawlDetail, found: { sid: string; status: SharedStatus }): Promise<string | null> {
    const P = crawlPrefix(found.sid);
    const parsed = parseCrawlConfig({ ...(row.config as object), settings: JSON.parse((await this.r.hget(`${P}meta`, 'settings')) ?? '{}') });
    if (!parsed.ok) return `its stored config no longer validates: ${parsed.errors.map((e) => e.message).join('; ')}`;
    const live = found.status === 'running' || found.status === 'paused' || found.status === 'starting';
    if (live) {
      // Workers fetch the one crawl ss:open names: another one open there keeps this one waiting.
      const open = await this.r.get(OPEN_KEY);
      if (open !== null && open !== found.sid && ['running', 'paused', 'starting'].includes((await this.r.hget(`${crawlPrefix(open)}meta`, 'status')) ?? '')) {
        return `another shared crawl (${open}) is open in this Redis; a Redis holds one open shared crawl at a time`;
      }
      await this.r.set(OPEN_KEY, found.sid);
    }
    const status = STATUS[found.status];
    await this.attach(row.id, parsed.config, row.createdAt, row.startedAt ?? row.createdAt, found.sid, status, (c) => this.countRecorded(c));
    this.o.writer.updateCrawl(row.id, { status, ...(row.shared === null ? { shared: { sid: found.sid, redis: shownUrl(this.o.redis) } } : {}) });
    this.o.log(`crawl ${row.id}: shared crawl ${found.sid} found in Redis (${found.status}); recorded here again`);
    return null;
  }

  /** A crawl taken up counts from what is recorded already (the recorder's summary, the figures and the slot table's). */
  private async countRecorded(c: LiveShared): Promise<void> {
    await this.o.writer.flush({ wait: true }).catch(() => undefined);
    await c.recorder.loadTotals();
    const reader = openHistoryReader(this.o.db);
    try {
      const sum = reader.crawlSummary(c.id);
      c.responses += sum.responses;
      c.failures += sum.failures;
      for (const [k, n] of Object.entries(sum.by_status)) c.byStatus[k] = (c.byStatus[k] ?? 0) + n;
      for (const s of reader.slotSummaries(c.id)) {
        countStored(c.figure(s.slot), s);
        c.bytes += s.bytes;
      }
    } finally {
      reader.close();
    }
  }

  /**
   * Resume of a stored crawl marked shared that this host does not record (Redis was unreachable at
   * start-up, or flushed): taken up and resumed if this Redis has it; otherwise refused, never resumed
   * in one process beside workers that may still fetch it.
   */
  async resumeStored(row: CrawlDetail): Promise<CrawlInfo> {
    if (this.closing) refuse('conflict', 'the host is closing');
    const where = shownUrl(this.o.redis);
    if (row.status !== 'paused' && row.status !== 'interrupted') {
      refuse('conflict', `crawl ${row.id} is a ${row.status} shared crawl; the console starts new shared crawls only: continue this one with \`slotscope crawl --db FILE --resume ${row.id} --redis URL\`, or duplicate it`, 'id');
    }
    const found = await this.find(row).catch((e: unknown) => refuse('conflict', `crawl ${row.id} is a shared crawl; the Redis at ${where} cannot be read: ${(e as Error).message}`, 'id'));
    if (found === null) {
      // The same Redis flushed (or its data lost), or another Redis than the one it was opened in.
      const elsewhere = row.shared !== null && row.shared.redis !== where;
      return refuse('conflict', `crawl ${row.id} is a shared crawl, but the Redis at ${where} ${elsewhere ? `does not have it (it was opened in the Redis at ${row.shared!.redis})` : 'no longer has it (flushed, or its data lost)'}. It is not resumed in one process: that would be a second client beside any worker still fetching it. Start serve with the Redis that holds it, or duplicate the crawl to crawl again`, 'id');
    }
    if (this.adopting.has(row.id) || this.byId.has(row.id)) refuse('conflict', `crawl ${row.id} is already being resumed`, 'id');
    this.adopting.add(row.id);
    try {
      const refused = await this.adopt(row, found);
      if (refused !== null) refuse('conflict', `crawl ${row.id}: ${refused}`, 'id');
    } finally {
      this.adopting.delete(row.id);
    }
    const c = this.byId.get(row.id)!;
    this.o.listChanged();
    if (c.status === 'paused') await this.setStatus(c, 'running');
    return c.info();
  }

  private recorded(c: LiveShared, rec: StreamedRecord): void {
    c.add(rec);
    if (rec.changes && rec.changes.length > 0) this.o.emit('settings.changed', { crawlId: c.id, changes: rec.changes });
    for (const e of rec.events ?? []) if (e.kind === 'warning') this.o.emit('warning', { crawlId: c.id, event: e });
  }

  /** The recorder returned: the crawl's final row, its last slot rows and status. */
  private async ended(c: LiveShared, status: CrawlStatus, fetching: Promise<unknown>): Promise<void> {
    c.worker?.leave();
    await fetching;
    closeRedis(c.recorderRedis);
    if (status === 'paused') {
      // The host is closing: the crawl stays paused in Redis, to be continued with `crawl --resume ID --redis URL`.
      this.o.writer.updateCrawl(c.id, { status: 'paused' });
      return;
    }
    c.ended = true;
    c.status = status;
    c.finishedAt = Date.now();
    const s = c.stats();
    this.o.writer.updateCrawl(c.id, {
      status, finishedAt: c.finishedAt, settings: c.recorder.settings,
      summary: {
        crawl_id: c.id, requests: s.requests, responses: s.responses, by_status: s.byStatus, failures: s.failures, slots: s.slots,
        seconds: (c.finishedAt - c.startedAt) / 1000, workers: { ...c.recorder.workers },
      },
    });
    try {
      if ((await this.r.get('ss:open')) === c.sid) await this.r.del('ss:open');
      await this.readWorkers(c);
    } catch {
      /* Redis is gone: the crawl's row is what matters */
    }
    await this.o.writer.flush().catch(() => undefined);
    if (this.closing) return;
    const rows = c.slots.map((sl) => c.tuple(sl, Date.now()));
    if (rows.length > 0) this.o.emit('slots.update', { crawlId: c.id, rows, now: Date.now() });
    this.o.emit('crawl.status', { crawlId: c.id, stats: c.stats() });
    this.o.listChanged();
  }

  /** The polling timers run while a shared crawl is being recorded. */
  private arm(): void {
    this.slotTimer ??= setInterval(() => void this.pollSlots(), SLOTS_MS);
    this.workerTimer ??= setInterval(() => void this.pollWorkers(), WORKERS_MS);
    this.slotTimer.unref();
    this.workerTimer.unref();
  }

  private disarm(): void {
    if (this.slotTimer) clearInterval(this.slotTimer);
    if (this.workerTimer) clearInterval(this.workerTimer);
    this.slotTimer = this.workerTimer = null;
  }

  private async pollSlots(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      let any = false;
      for (const c of this.byId.values()) {
        if (c.ended) continue;
        any = true;
        await this.readSlots(c).catch(() => undefined);
        const now = Date.now();
        const out: SlotTuple[] = [];
        for (const row of c.rows) {
          const prev = c.lastRows.get(row[0]);
          if (!prev || prev.some((v, i) => v !== row[i])) {
            c.lastRows.set(row[0], row);
            out.push(row);
          }
        }
        if (out.length > 0) this.o.emit('slots.update', { crawlId: c.id, rows: out, now });
      }
      if (!any) this.disarm();
    } finally {
      this.polling = false;
    }
  }

  private async readSlots(c: LiveShared): Promise<void> {
    const [slots, settings] = await Promise.all([c.control.slots(), c.control.settings()]);
    const now = Date.now();
    if (Object.keys(settings).length > 0) {
      const r = applySettings(settings, c.config.settings);
      if (r.ok) c.settings = r.settings;
    }
    c.slots = slots;
    c.rows = slots.map((s) => c.tuple(s, now));
  }

  private async pollWorkers(): Promise<void> {
    for (const c of this.byId.values()) {
      if (c.ended) continue;
      try {
        const st = await c.control.status();
        if (st !== null && !c.ended) {
          const status = STATUS[st];
          if (status !== c.status && (status === 'running' || status === 'paused')) {
            c.status = status;
            this.o.writer.updateCrawl(c.id, { status });
            this.o.listChanged();
          }
        }
        await this.readWorkers(c);
      } catch {
        continue;
      }
      this.o.emit('crawl.status', { crawlId: c.id, stats: c.stats() });
      this.o.emit('workers.update', { crawlId: c.id, workers: c.workers, now: Date.now() });
    }
  }

  /** The workers as Redis has them, with responses per second from the last readings. */
  private async readWorkers(c: LiveShared): Promise<void> {
    const list = await c.control.workers();
    const now = Date.now();
    c.workers = list.map((w) => {
      const seen = c.readings.get(w.name) ?? [];
      seen.push({ t: now, n: w.responses });
      while (seen.length > 2 && now - seen[0]!.t > RATE_SPAN_MS) seen.shift();
      c.readings.set(w.name, seen);
      const first = seen[0]!;
      const rate = seen.length < 2 || now - first.t <= 0 ? null : round(((w.responses - first.n) * 1000) / (now - first.t), 2);
      return {
        name: w.name, host: w.host, pid: w.pid, alive: w.alive, inFlight: w.alive ? w.inFlight : 0, concurrency: w.concurrency,
        responses: w.responses, responsesPerSecond: w.alive ? rate : 0, lastSeen: w.lastSeen, startedAt: w.startedAt,
      };
    });
  }

  private row(c: LiveShared, key: string): SlotTuple {
    return c.rows.find((r) => r[0] === key) ?? refuse('not-found', `slot ${JSON.stringify(key)} does not exist in crawl ${c.id}`, 'slot');
  }

  /** A per-slot action on every worker (under the slot's lock in Redis), recorded once; the row read again. */
  private async slotAction(c: LiveShared, slot: string, act: (ctl: SharedControl) => Promise<ChangeRecord[]>): Promise<SlotTuple> {
    if (c.ended) refuse('conflict', `crawl ${c.id} is ${c.status}`, 'id');
    if ((await this.r.sismember(`${c.control.prefix}slots`, slot)) !== 1) {
      const key = JSON.stringify(slot.length > 100 ? `${slot.slice(0, 97)}...` : slot);
      refuse('not-found', `slot ${key} does not exist in crawl ${c.id} (the crawl has never had a request for it)`, 'slot');
    }
    let changes: ChangeRecord[];
    try {
      changes = await act(c.control);
    } catch (e) {
      if (e instanceof RangeError) refuse('invalid', e.message);
      throw e;
    }
    const made = changes.filter((ch) => JSON.stringify(ch.oldValue) !== JSON.stringify(ch.newValue));
    for (const ch of made) this.o.writer.recordChange(c.id, ch);
    if (made.length > 0) this.o.emit('settings.changed', { crawlId: c.id, changes: made });
    await this.readSlots(c);
    return this.row(c, slot);
  }

  /** Sets the shared crawl's status for every worker (they read it within 200 ms), journaled once. */
  private async setStatus(c: LiveShared, to: 'running' | 'paused' | 'stopped'): Promise<void> {
    if (c.ended) refuse('conflict', `crawl ${c.id} is ${c.status}`, 'id');
    const t = Date.now();
    const was = c.status;
    try {
      await c.control.setStatus(to);
    } catch (e) {
      refuse('conflict', `crawl ${c.id}: ${(e as Error).message}`, 'id');
    }
    if (to === 'stopped') {
      if (was === 'running' || was === 'paused') this.o.journal(c.id, t, 'stopped', null, 'user');
      return;
    }
    if (to === was) return;
    c.status = to;
    this.o.writer.updateCrawl(c.id, { status: to });
    this.o.journal(c.id, t, 'paused', to === 'running', to === 'paused');
    this.o.emit('crawl.status', { crawlId: c.id, stats: c.stats() });
    this.o.listChanged();
    await this.readSlots(c).catch(() => undefined);
  }

  /**
   * Handles `method` when it addresses a shared crawl of this host: a promise of its result, or
   * undefined for the core's own handler (reads of the history answer like any crawl's).
   */
  route<M extends Method>(method: M, p: Params<M>): Promise<Result<M>> | undefined {
    const ref = p as { id?: unknown; crawlId?: unknown };
    const id = typeof ref.id === 'number' ? ref.id : typeof ref.crawlId === 'number' ? ref.crawlId : undefined;
    if (id === undefined) return undefined;
    const c = this.byId.get(id);
    if (!c) return undefined;
    if (c.ended && method === 'crawls.delete') {
      // Deleted like any stored crawl; its workers are forgotten with it.
      this.byId.delete(id);
      return undefined;
    }
    if (c.ended && c.status === 'stopped' && method === 'crawls.resume') {
      return Promise.reject(new AppRefusal({
        code: 'conflict', field: 'id',
        message: `crawl ${id} is a stopped shared crawl; the console starts new shared crawls only: continue this one with \`slotscope crawl --db FILE --resume ${id} --redis URL\`, or duplicate it`,
      }));
    }
    const handler = (this.handlers as Partial<Record<Method, (c: LiveShared, p: unknown) => unknown>>)[method];
    // An ended shared crawl answers like any stored crawl, but for its workers.
    if (!handler || (c.ended && method !== 'crawls.workers')) return undefined;
    return Promise.resolve().then(() => handler(c, p) as Result<M>);
  }

  private readonly handlers: { [M in Method]?: (c: LiveShared, p: Params<M>) => Result<M> | Promise<Result<M>> } = {
    'crawls.start': (c) => refuse('conflict', `crawl ${c.id} is already ${c.status}`, 'id'),
    'crawls.delete': (c) => refuse('conflict', `crawl ${c.id} is ${c.status} (a shared crawl); stop it before deleting it`, 'id'),
    'crawls.pause': async (c) => {
      await this.setStatus(c, 'paused');
      return c.info();
    },
    'crawls.resume': async (c) => {
      await this.setStatus(c, 'running');
      return c.info();
    },
    'crawls.stop': async (c) => {
      await this.setStatus(c, 'stopped');
      // Every worker cancels its requests in flight; the recorder ends once they are recorded.
      await Promise.race([c.recorderDone, new Promise((r) => setTimeout(r, 10_000))]);
      return c.info();
    },
    'crawls.stats': (c) => c.stats(),
    'crawls.workers': (c) => ({ workers: c.workers, now: Date.now() }),
    'settings.get': (c) => c.settings,
    'settings.update': async (c, p) => {
      const at = Date.now();
      const base = c.settings;
      const check = applySettings(p.changes, base);
      if (!check.ok) refuse('invalid', check.errors.map((e) => e.message).join('\n'), check.errors[0]?.setting);
      const next = check as { settings: Settings; changed: readonly (keyof Settings)[] };
      const unsupported = sharedUnsupported({ ...c.config, settings: next.settings });
      if (unsupported.length > 0) refuse('invalid', `a shared crawl cannot honour: ${unsupported.join('; ')}. Nothing was changed.`, next.changed[0]);
      const r = await c.control.updateSettings(p.changes);
      if (!r.ok) refuse('invalid', r.errors.map((e) => e.message).join('\n'), r.errors[0]?.setting);
      const done = r as { settings: Settings; changed: readonly (keyof Settings)[] };
      const changes: ChangeRecord[] = done.changed.map((name) => ({ t: at, slot: null, setting: name, source: 'user', oldValue: base[name], newValue: done.settings[name] }));
      for (const ch of changes) this.o.writer.recordChange(c.id, ch);
      c.settings = done.settings;
      this.o.writer.updateCrawl(c.id, { settings: done.settings });
      if (changes.length > 0) this.o.emit('settings.changed', { crawlId: c.id, changes });
      return { changed: done.changed, at };
    },
    'slots.pause': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.pauseSlot(p.slot, true)]),
    'slots.resume': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.pauseSlot(p.slot, false)]),
    'slots.pinDelay': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.pinDelay(p.slot, p.seconds)]),
    'slots.pinConcurrency': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.pinConcurrency(p.slot, p.value)]),
    'slots.clearPins': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.pinDelay(p.slot, null), await ctl.pinConcurrency(p.slot, null)]),
    'slots.resetBackoff': (c, p) => this.slotAction(c, p.slot, async (ctl) => [await ctl.resetBackoff(p.slot)]),
    'slots.snapshot': async (c) => {
      await this.readSlots(c).catch(() => undefined);
      return { columns: SLOT_COLUMNS, rows: c.rows, now: Date.now() };
    },
    'slots.queue': async (c, p) => {
      // The slot's queue in Redis, in the order workers take it (lowest score first).
      const key = `${c.control.prefix}q:${p.slot}`;
      const [queued, raw] = await Promise.all([this.r.zcard(key), this.r.zrange(key, '0', String((p.limit ?? 200) - 1))]);
      const items = raw.map((json) => JSON.parse(json) as QueuedInRedis).map((q) => ({ url: q.u, depth: q.d, retries: q.t, priority: q.p, queuedAt: q.e || null }));
      return { slot: p.slot, queued, items, live: true, now: Date.now() };
    },
  };

  /**
   * The host is closing: every shared crawl being recorded is paused for every worker (as `crawl
   * --redis` does on Ctrl-C), the requests in flight recorded (5 s at most), and saved paused.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.disarm();
    const live = [...this.byId.values()].filter((c) => !c.ended);
    await Promise.all(live.map(async (c) => {
      c.pausing = true;
      try {
        await this.r.hset(`${c.control.prefix}meta`, 'status', 'paused');
      } catch {
        /* Redis is gone */
      }
      await Promise.race([c.recorderDone, new Promise((r) => setTimeout(r, 5000))]);
      if (!c.ended) this.o.writer.updateCrawl(c.id, { status: 'paused' });
      c.worker?.leave();
      closeRedis(c.recorderRedis);
    }));
    closeRedis(this.r);
  }
}
