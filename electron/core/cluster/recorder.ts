// The recorder of a shared crawl (issue 18): creates it (in SQLite and in Redis), is the only writer
// of its history, reads what every worker streams (a Redis stream with a consumer group, each entry
// acknowledged only once its rows are committed), notices dead workers and gives their leases back,
// and ends the crawl with its summary. It also fetches, as one more worker, unless told not to.

import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { realpathSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { applySettings, type Settings } from '../../../shared/settings';
import { eventLogLine } from '../../../shared/debug-line';
import type { CrawlStatus, CrawlSummary, EventRecord } from '../../../shared/types';
import { crawlConfigInput, parseCrawlConfig, type CrawlConfig } from '../engine/crawl-config';
import { canonicalKey, parseCrawlUrl } from '../engine/frontier';
import { ResumeError } from '../crawl-runner';
import { openHistoryWriter, type HistoryWriter } from '../store/history-writer';
import { openHistoryReader } from '../store/queries';
import { decodePolicy } from './policy-codec';
import { BY_DB_KEY, connectRedis, crawlPrefix, isConnectionError, newCrawlId, OPEN_KEY, script, SharedCrawlError, shownUrl, type ConnectOptions, closeRedis } from './redis';
import { addArgs, HEARTBEAT_TTL_MS, sharedUnsupported, SharedWorker, slotOf, type StreamedRecord } from './worker';

export const GROUP = 'recorder';
/** Entries read from the stream per batch. */
const BATCH = 1000;
/** Seeds queued per script call. */
const SEED_BATCH = 500;

export interface SharedCrawlOptions {
  /** A new crawl (omit with `resume`). */
  readonly config?: CrawlConfig;
  /** Continue this crawl of `db` (its recorder was killed, or it was paused). */
  readonly resume?: number;
  readonly db: string;
  readonly redis: string;
  readonly redisOptions?: Partial<ConnectOptions>;
  /** This process fetches too (default true). */
  readonly fetch?: boolean;
  /** This process's worker name (default `recorder@<host>`). */
  readonly name?: string;
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
  /** Aborting pauses the shared crawl (every worker stops starting requests) and saves it paused. */
  readonly signal?: AbortSignal;
  /** Called once the crawl is open in Redis, e.g. to start workers from a test. */
  readonly onOpen?: (info: { crawlId: number; sharedId: string; prefix: string }) => void;
}

export interface SharedCrawlResult {
  readonly summary: CrawlSummary & { readonly workers: Readonly<Record<string, number>>; readonly requeued: number };
  readonly status: CrawlStatus;
}

/** The key `crawl --resume ID --redis` (and a restarted `serve --redis`) finds a shared crawl by. */
export function dbKey(db: string, id: number): string {
  let path = resolvePath(db);
  try {
    path = realpathSync(path);
  } catch {
    // a file that does not exist yet keeps its resolved path
  }
  return `${path}#${id}`;
}

/** Creates a shared crawl, or continues one, records it to its end, and returns its summary. */
export async function runSharedCrawl(o: SharedCrawlOptions): Promise<SharedCrawlResult> {
  const log = o.log ?? (() => undefined);
  const name = o.name ?? `recorder@${hostname()}`;
  if (o.config) {
    const refused = sharedUnsupported(o.config);
    if (refused.length > 0) throw new SharedCrawlError(`a shared crawl (--redis) cannot honour: ${refused.join('; ')}`);
  }
  const r = await connectRedis(o.redis, { name: `slotscope ${name}`, log, ...o.redisOptions });
  let writer: HistoryWriter | null = null;
  try {
    writer = await openHistoryWriter(o.db);
    const w = writer;
    let crawlId: number;
    let sid: string;
    let config: CrawlConfig;
    if (o.resume !== undefined) {
      crawlId = o.resume;
      const found = await r.hget(BY_DB_KEY, dbKey(o.db, o.resume));
      const reader = openHistoryReader(o.db);
      const row = reader.getCrawl(o.resume);
      reader.close();
      if (!row) throw new ResumeError(`crawl ${o.resume} does not exist in ${o.db}`);
      if (found === null) throw new ResumeError(`crawl ${o.resume} of ${o.db} is not a shared crawl in the Redis at ${o.redis.replace(/:[^:@/]*@/, ':***@')}`);
      sid = found;
      const P = crawlPrefix(sid);
      const status = await r.hget(`${P}meta`, 'status');
      if (status === null) throw new ResumeError(`shared crawl ${sid} (crawl ${o.resume}) is no longer in Redis`);
      // Finished in Redis while no recorder ran (the workers went on): what they streamed is recorded now.
      if (row.status === 'finished') throw new ResumeError(`crawl ${o.resume} is finished`);
      const parsed = parseCrawlConfig({ ...(row.config as object), settings: JSON.parse((await r.hget(`${P}meta`, 'settings')) ?? '{}') });
      if (!parsed.ok) throw new ResumeError(`crawl ${o.resume} has a stored config that no longer validates: ${parsed.errors.map((e) => e.message).join('; ')}`);
      config = parsed.config;
      const open = await r.get(OPEN_KEY);
      if (open !== null && open !== sid && (await r.hget(`${crawlPrefix(open)}meta`, 'status')) === 'running') {
        throw new SharedCrawlError(`another shared crawl (${open}) is running in this Redis; a Redis holds one open shared crawl at a time`);
      }
      await r.set(OPEN_KEY, sid);
      if (status === 'paused' || status === 'stopped') await r.hset(`${P}meta`, 'status', 'running');
      w.updateCrawl(crawlId, { status: 'running', shared: { sid, redis: shownUrl(o.redis) } });
      log(`crawl ${crawlId}: resumed shared crawl ${sid}`);
    } else {
      config = o.config!;
      await assertNoneOpen(r);
      crawlId = await w.createCrawl(config.name, crawlConfigInput(config), config.settings);
      const opened = await openShared(r, config, crawlId, o.db, name);
      sid = opened.sid;
      w.updateCrawl(crawlId, { status: 'running', startedAt: opened.startedAt, shared: { sid, redis: shownUrl(o.redis) } });
      log(`crawl ${crawlId}: shared crawl ${sid} open in Redis; workers join with: slotscope worker --redis ${o.redis.replace(/:[^:@/]*@/, ':***@')}`);
    }
    const P = crawlPrefix(sid);
    o.onOpen?.({ crawlId, sharedId: sid, prefix: P });
    const rec = new Recorder(r, P, w, crawlId, config.settings, log);
    await rec.loadTotals();
    let worker: SharedWorker | null = null;
    let workerDone: Promise<unknown> = Promise.resolve();
    if (o.fetch !== false) {
      const wr = await connectRedis(o.redis, { name: `slotscope ${name} fetcher`, log, ...o.redisOptions });
      worker = new SharedWorker({ redis: wr, prefix: P, name, concurrency: o.concurrency, log });
      workerDone = worker.run().catch((e: unknown) => log(`${name}: stopped fetching: ${(e as Error).message}`)).finally(() => closeRedis(wr));
    }
    let pausing = false;
    const onAbort = () => {
      pausing = true;
      void r.hset(`${P}meta`, 'status', 'paused').catch(() => undefined);
    };
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    const status = await rec.run(() => pausing);
    await workerDone;
    o.signal?.removeEventListener('abort', onAbort);
    const summary = rec.summary(crawlId, await r.hget(`${P}meta`, 'requeued'));
    if (status === 'paused') {
      w.updateCrawl(crawlId, { status: 'paused' });
    } else {
      w.updateCrawl(crawlId, { status, finishedAt: Date.now(), summary, settings: rec.settings });
      if ((await r.get(OPEN_KEY)) === sid) await r.del(OPEN_KEY);
    }
    await w.flush({ wait: true });
    return { summary, status };
  } finally {
    await writer?.close().catch(() => undefined);
    closeRedis(r);
  }
}

/** Refuses a new shared crawl while another one is open in this Redis (one open shared crawl per Redis). */
export async function assertNoneOpen(r: Redis): Promise<void> {
  const open = await r.get(OPEN_KEY);
  if (open !== null && ['running', 'paused', 'starting'].includes((await r.hget(`${crawlPrefix(open)}meta`, 'status')) ?? '')) {
    throw new SharedCrawlError(`another shared crawl (${open}) is open in this Redis; a Redis holds one open shared crawl at a time (stop it, or use another database number: redis://host:port/1)`);
  }
}

/** Opens crawl `crawlId` of `db` (created in SQLite) in Redis: its definition, its seeds queued, running; workers join it. */
export async function openShared(r: Redis, config: CrawlConfig, crawlId: number, db: string, recorder: string): Promise<{ sid: string; prefix: string; startedAt: number }> {
  const sid = await newCrawlId(r);
  const P = crawlPrefix(sid);
  const started = Date.now();
  await r.hset(`${P}meta`, {
    status: 'starting', config: JSON.stringify(crawlConfigInput(config)), settings: JSON.stringify(config.settings), settingsV: '1',
    queued: '0', accepted: '0', seq: '0', maxPages: Number.isFinite(config.follow.maxPages) ? String(config.follow.maxPages) : '0',
    crawlId: String(crawlId), db: dbKey(db, crawlId), name: config.name, startedAt: String(started), recorder,
  });
  await r.hset(BY_DB_KEY, dbKey(db, crawlId), sid);
  await r.xgroup('CREATE', `${P}rec`, GROUP, '0', 'MKSTREAM');
  await queueSeeds(r, P, config);
  await r.hset(`${P}meta`, 'status', 'running');
  await r.set(OPEN_KEY, sid);
  return { sid, prefix: P, startedAt: started };
}

/** Queues the seeds (each once, de-duplicated like every page) in batches. */
export async function queueSeeds(r: Redis, P: string, config: CrawlConfig): Promise<void> {
  const s = config.settings;
  let args: (string | number)[] = [];
  const flush = async () => {
    if (args.length === 0) return;
    await script(r, 'ssAdd', [P, args.length / 7, ...args]);
    args = [];
  };
  const now = Date.now();
  for (const seed of config.seeds) {
    const u = parseCrawlUrl(seed);
    if (!u) continue;
    const slot = slotOf(u, {});
    const fresh = decodePolicy(slot, Object.hasOwn(s.DOWNLOAD_SLOTS, slot) ? s.DOWNLOAD_SLOTS[slot] : undefined, s, '', -Infinity);
    // The URL is sent as the seed gave it (parseCrawlUrl keeps its query's order); de-duplicated by its canonical key.
    args.push(...addArgs(slot, canonicalKey(u), { u: u.href, d: 0, p: 0, m: {}, r: 0, t: 0, e: now }, fresh, s));
    if (args.length >= SEED_BATCH * 7) await flush();
  }
  await flush();
}

/** Reads the workers' stream into the history (see run); one per shared crawl. */
export class Recorder {
  settings: Settings;
  private settingsV = '';
  private responses = 0;
  private failures = 0;
  private readonly byStatus: Record<string, number> = {};
  private readonly slots = new Set<string>();
  readonly workers: Record<string, number> = {};
  private readonly startedAt = Date.now();
  private connectedSince = Date.now();

  constructor(
    private readonly r: Redis,
    private readonly P: string,
    private readonly w: HistoryWriter,
    private readonly crawlId: number,
    settings: Settings,
    private readonly log: (line: string) => void,
    /** Each record as it is committed (the console's live rows). */
    private readonly onRecord?: (rec: StreamedRecord) => void,
    /** Each event the recorder itself records (a worker lost), once stored: the console's live warnings. */
    private readonly onEvent?: (e: EventRecord) => void,
  ) {
    this.settings = settings;
    r.on('ready', () => void (this.connectedSince = Date.now()));
  }

  /** A resumed recorder counts from what is already recorded. */
  async loadTotals(): Promise<void> {
    const reader = openHistoryReader(this.w.file);
    try {
      const t = reader.crawlSummary(this.crawlId);
      this.responses = t.responses;
      this.failures = t.failures;
      Object.assign(this.byStatus, t.by_status);
    } finally {
      reader.close();
    }
  }

  summary(crawlId: number, requeued: string | null): SharedCrawlResult['summary'] {
    return {
      crawl_id: crawlId, requests: this.responses + this.failures, responses: this.responses, by_status: { ...this.byStatus }, failures: this.failures,
      slots: this.slots.size, seconds: Math.round((Date.now() - this.startedAt)) / 1000, workers: { ...this.workers }, requeued: Number(requeued ?? 0),
    };
  }

  /** Records what the workers stream until the crawl ends (or is paused with `pausing`); returns its end status. */
  async run(pausing: () => boolean): Promise<CrawlStatus> {
    // First what was delivered to a recorder before and not acknowledged (it was killed), then new entries.
    let cursor = '0';
    let lastSweep = 0;
    for (;;) {
      let entries: [string, string[]][] = [];
      try {
        const res = (await this.r.xreadgroup('GROUP', GROUP, 'recorder', 'COUNT', BATCH, 'BLOCK', 200, 'STREAMS', `${this.P}rec`, cursor)) as
          [string, [string, string[]][]][] | null;
        entries = res?.[0]?.[1] ?? [];
        const redelivered = cursor !== '>';
        if (redelivered) cursor = entries.length === 0 ? '>' : entries[entries.length - 1]![0];
        if (entries.length > 0) await this.record(entries, redelivered);
        if (Date.now() - lastSweep >= 1000) {
          lastSweep = Date.now();
          await this.sweep();
          await this.followSettings();
        }
        if (entries.length === 0 && cursor === '>') {
          const status = await this.r.hget(`${this.P}meta`, 'status');
          const leases = await this.r.hlen(`${this.P}leases`);
          const pending = await this.r.xlen(`${this.P}rec`);
          if (pending === 0 && leases === 0) {
            if (status === 'finished' || status === 'stopped') return status;
            if (status === 'paused' && pausing()) return 'paused';
          }
        }
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        // Entries delivered to us just before Redis went away are pending under our name: read them again.
        cursor = '0';
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /** Records a batch, waits for its commit, then acknowledges it (and drops it from the stream). */
  private async record(entries: [string, string[]][], redelivered: boolean): Promise<void> {
    const ids: string[] = [];
    const committed: StreamedRecord[] = [];
    for (const [id, fields] of entries) {
      ids.push(id);
      const json = fields[fields.indexOf('r') + 1];
      if (json === undefined) continue;
      const rec = JSON.parse(json) as StreamedRecord;
      // A redelivered entry was perhaps committed before the recorder was killed: not recorded twice.
      if (redelivered && rec.resp && respondedBefore(this.w.file, this.crawlId, rec.resp.url, rec.resp.startedAt)) continue;
      committed.push(rec);
      if (rec.resp) {
        const resp = rec.resp;
        this.w.recordResponse(this.crawlId, resp);
        this.slots.add(resp.slot);
        if (resp.status !== null) {
          this.responses++;
          this.byStatus[resp.status] = (this.byStatus[resp.status] ?? 0) + 1;
          this.workers[rec.w] = (this.workers[rec.w] ?? 0) + 1;
        } else this.failures++;
      }
      for (const c of rec.changes ?? []) this.w.recordChange(this.crawlId, c);
      for (const e of rec.events ?? []) {
        this.w.recordEvent(this.crawlId, e);
        // Said as a one-process crawl says it: every event but robots.txt's refusals, debug lines with AUTOTHROTTLE_DEBUG.
        if ((e.kind !== 'debug' || this.settings.AUTOTHROTTLE_DEBUG) && e.code !== 'robots-disallowed') this.log(eventLogLine(e));
      }
    }
    // Its rows committed (the buckets, derived from them, keep their own timer: writing them at each of these flushes cost the history worker twice the CPU of the rows).
    await this.w.flush({ wait: true, rows: true });
    if (this.onRecord) for (const rec of committed) this.onRecord(rec);
    // Acknowledged and dropped at once (MULTI): an entry is never left acknowledged but in the stream.
    await this.r.multi().xack(`${this.P}rec`, GROUP, ...ids).xdel(`${this.P}rec`, ...ids).exec();
  }

  /** Dead workers' leases go back to the queues (not in the first seconds after Redis came back: heartbeats catch up). */
  private async sweep(): Promise<void> {
    if (Date.now() - this.connectedSince < HEARTBEAT_TTL_MS * 2) return;
    const out = (await script(this.r, 'ssSweep', [this.P])) as string[];
    const requeued = Number(out[0]);
    for (const dead of out.slice(1)) {
      const e: EventRecord = { t: Date.now(), slot: null, kind: 'warning', code: 'worker-lost',
        text: `worker ${dead} stopped answering (no heartbeat for ${HEARTBEAT_TTL_MS / 1000} s); its requests in flight go back to the queue (${requeued} in all) and are fetched once more` };
      this.w.recordEvent(this.crawlId, e);
      this.log(eventLogLine(e));
      this.onEvent?.(e);
    }
  }

  /** The live settings as the workers use them, kept with the crawl. */
  private async followSettings(): Promise<void> {
    const [v, json] = await this.r.hmget(`${this.P}meta`, 'settingsV', 'settings');
    if (v === null || v === this.settingsV || json === null) return;
    this.settingsV = v;
    const r = applySettings(JSON.parse(json), this.settings);
    if (r.ok) {
      this.settings = r.settings;
      this.w.updateCrawl(this.crawlId, { settings: r.settings });
    }
  }
}

/** Whether the crawl's history has this response already (by URL and start time). */
function respondedBefore(file: string, crawlId: number, url: string, startedAt: number): boolean {
  const reader = openHistoryReader(file);
  try {
    return reader.hasResponse(crawlId, url, startedAt);
  } finally {
    reader.close();
  }
}
