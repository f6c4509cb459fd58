// A fetcher of a shared crawl (issue 18): takes requests from Redis as leases, fetches them with the
// engine's downloader, runs the engine's throttle step on the slot's state under a lock, and
// commits the result (the slot's state, the response's records, its links) in one atomic script.
// Every site sees one polite client: each start is reserved in Redis against Redis's clock.

import type { Redis } from 'ioredis';
import { hostname } from 'node:os';
import { applySettings, type Settings } from '../../../shared/settings';
import type { ChangeRecord, EventRecord, ResponseRecord } from '../../../shared/types';
import { createRealClock, realNow } from '../clock';
import { parseCrawlConfig, type CrawlConfig } from '../engine/crawl-config';
import { Downloader, type DownloadRequest, type DownloadResult } from '../engine/downloader';
import { canonicalKey, Frontier, hostOf, parseCrawlUrl, requestTarget } from '../engine/frontier';
import { decodeText, isHtml, LinkScanner } from '../engine/links';
import {
  crawlDelayRule, followUps, headerValue, isRetryable, responseRecord, ROBOTS_MAX_BYTES, ROBOTS_PRIORITY, ROBOTS_RETRIES, type FollowNote,
} from '../engine/outcome';
import type { CrawlRequest } from '../engine/request';
import { compactRobots, parseRobots, robotsAllows, robotsOutcome, type RobotsRules } from '../engine/robots';
import { throttleStep } from '../engine/throttle/step';
import { recordDebugLine } from '../../../shared/debug-line';
import type { SlotPolicy } from '../engine/throttle/policy';
import { decodePolicy, encodePolicy, smallestGapMs } from './policy-codec';
import { isConnectionError, script, SharedCrawlError } from './redis';

/** How long a worker's heartbeat keeps it alive; it beats every third of this. */
export const HEARTBEAT_TTL_MS = 3000;
/** A slot lock older than this is free again (a worker that died holding it). */
const LOCK_MS = 5000;
/** robots.txt of an origin another worker is fetching: its page is asked for again after this. */
const ROBOTS_WAIT_MS = 50;

/** A request as it waits in a slot's queue in Redis. */
export interface QueuedRequest {
  readonly u: string;
  readonly d: number;
  readonly p: number;
  readonly m: Record<string, unknown>;
  readonly r: number;
  readonly t: number;
  /** When it was queued, Redis's clock (ms). */
  readonly e: number;
}

/** What a worker streams to the recorder for one response (or an event outside one). */
export interface StreamedRecord {
  readonly w: string;
  readonly resp?: ResponseRecord;
  readonly changes?: readonly ChangeRecord[];
  readonly events?: readonly EventRecord[];
}

/** Links a worker remembers handing to Redis (about 100 B each: 20 MB at most). */
export const HANDED_OVER_MAX = 200_000;

/** Settings a shared crawl cannot honour yet, refused by name when it is created. */
export function sharedUnsupported(c: CrawlConfig): string[] {
  const s = c.settings;
  const out: string[] = [];
  if (s.DOWNLOAD_DELAY_PER_SLOT > 0) out.push(`DOWNLOAD_DELAY_PER_SLOT ${s.DOWNLOAD_DELAY_PER_SLOT} (allowed in a shared crawl: 0)`);
  if (s.CONCURRENT_REQUESTS_PER_IP > 0) out.push(`CONCURRENT_REQUESTS_PER_IP ${s.CONCURRENT_REQUESTS_PER_IP} (allowed in a shared crawl: 0; slots are hosts)`);
  if (s.THROTTLING_MANAGER) out.push('THROTTLING_MANAGER (a plug-in; allowed in a shared crawl: none)');
  if (Object.values(s.THROTTLING_SCOPES).some((x) => x.quota !== undefined)) out.push('THROTTLING_SCOPES quotas (allowed in a shared crawl: none)');
  if (c.scopeRules.length > 0) out.push('scope rules (a request in several scopes; allowed in a shared crawl: none)');
  return out;
}

/** The 7 values of one request for the ADD and COMMIT scripts. */
export function addArgs(slot: string, canon: string, q: QueuedRequest, fresh: SlotPolicy, s: Settings): (string | number)[] {
  // A new slot's policy is a fresh one ('' decodes to it): only its concurrency and gap are sent.
  return [slot, canon, q.p, JSON.stringify(q), '', fresh.concurrency(s), smallestGapMs(fresh, s).toFixed(3)];
}

/** The slot of a page: meta.download_slot, else its host (a shared crawl's slots are hosts). */
export function slotOf(u: URL, meta: Readonly<Record<string, unknown>>): string {
  return typeof meta.download_slot === 'string' ? meta.download_slot : hostOf(u);
}

interface Reserved {
  readonly slot: string;
  readonly token: string;
  readonly q: QueuedRequest;
  readonly policy: string;
  readonly score: string;
  readonly now: number;
  /** In flight on the slot with this one, at its reservation. */
  readonly inflight: number;
  /** The state version when the slot's gap draws nothing ('det'): the start is already committed, unlocked. */
  readonly det: number;
  /** The slot's state version this worker's start wrote, and that state: its end may commit without the lock while it holds. */
  version?: number;
  started?: SlotPolicy;
  /** When the reservation's reply came, on this process's clock (realNow). */
  readonly at: number;
  /** When its request went onto the wire, on Redis's clock (the pacing windows count it from then). */
  sentAt?: number;
}

export interface SharedWorkerOptions {
  readonly redis: Redis;
  /** The crawl's key prefix (crawlPrefix). */
  readonly prefix: string;
  readonly name: string;
  /** Requests this worker has in flight at most; default the crawl's CONCURRENT_REQUESTS. */
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
  readonly random?: () => number;
}

/** Figures of one worker, as its heartbeat publishes them. */
export interface WorkerInfo {
  readonly name: string;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: number;
  readonly lastSeen: number;
  readonly inFlight: number;
  readonly responses: number;
  readonly concurrency: number;
}

export class SharedWorker {
  private readonly r: Redis;
  private readonly P: string;
  readonly name: string;
  private readonly log: (line: string) => void;
  private readonly random: () => number;
  private config!: CrawlConfig;
  private settings!: Settings;
  private settingsV = '';
  private frontier!: Frontier;
  private downloader!: Downloader;
  private concurrency = 1;
  private status = '';
  private readonly robots = new Map<string, RobotsRules | null>();
  private readonly active = new Set<{ cancel(reason?: string): void }>();
  /** Redis clock minus this process's clock (ms), from the round trip with the smallest delay. */
  private offset = 0;
  private offsetRtt = Infinity;
  private offsetAt = 0;
  private wake: (() => void) | null = null;
  private redisDown = false;
  private stopped = false;
  inFlight = 0;
  /**
   * Responses whose commit is on its way to Redis. They no longer count against this worker's
   * concurrency (requests on the wire, as in a one-process crawl): the next reservation overlaps
   * the commit's round trip. Their slots still count them in flight until the commit lands, so a
   * host's own limit is kept. At most the concurrency of them wait at once.
   */
  private committing = 0;
  responses = 0;
  readonly startedAt = Date.now();
  private hbTimer: NodeJS.Timeout | null = null;

  constructor(private readonly o: SharedWorkerOptions) {
    this.r = o.redis;
    this.P = o.prefix;
    this.name = o.name;
    this.log = o.log ?? (() => undefined);
    this.random = o.random ?? Math.random;
  }

  /** Reads the crawl's definition and live settings from Redis. */
  private async loadMeta(): Promise<void> {
    const [config, settings, v, status] = await this.r.hmget(`${this.P}meta`, 'config', 'settings', 'settingsV', 'status');
    if (config === null || settings === null) throw new Error(`the shared crawl at ${this.P} has no definition in Redis`);
    const parsed = parseCrawlConfig({ ...(JSON.parse(config) as object), settings: JSON.parse(settings) });
    if (!parsed.ok) throw new Error(`the shared crawl's definition does not validate: ${parsed.errors.map((e) => e.message).join('; ')}`);
    this.config = parsed.config;
    this.settings = parsed.config.settings;
    this.settingsV = v ?? '';
    this.status = status ?? '';
    this.frontier = new Frontier(parsed.config.follow);
    for (const seed of parsed.config.seeds) {
      const u = parseCrawlUrl(seed);
      if (u) this.frontier.addSeedHost(hostOf(u));
    }
  }

  /** The live settings and status (a change from the console reaches the worker within this poll). */
  private async pollMeta(): Promise<void> {
    const [status, v, settings] = await this.r.hmget(`${this.P}meta`, 'status', 'settingsV', 'settings');
    this.status = status ?? '';
    if (v !== null && v !== this.settingsV && settings !== null) {
      const r = applySettings(JSON.parse(settings), this.config.settings);
      if (r.ok) {
        this.settings = r.settings;
        if (r.changed.includes('USER_AGENT')) this.downloader.setUserAgent(r.settings.USER_AGENT);
      } else this.log(`${this.name}: the crawl's new settings do not validate here: ${r.errors.map((e) => e.message).join('; ')}`);
      this.settingsV = v;
    }
  }

  private info(): string {
    const i: WorkerInfo = {
      name: this.name, host: hostname(), pid: process.pid, startedAt: this.startedAt, lastSeen: Date.now() + this.offset,
      inFlight: this.inFlight, responses: this.responses, concurrency: this.concurrency,
    };
    return JSON.stringify(i);
  }

  private async heartbeat(): Promise<void> {
    try {
      const r = await script(this.r, 'ssHeartbeat', [this.P, this.name, HEARTBEAT_TTL_MS, this.info()]);
      if (r === 2) this.log(`${this.name}: its heartbeat was late and it had been counted dead; its leases went to other workers (the responses it still gets are recorded with a warning)`);
    } catch {
      // Redis is unreachable: RESERVE refuses a worker without a heartbeat, so nothing starts.
    }
  }

  private leaving = false;

  /** Starts no more requests; run() returns once those in flight are recorded. */
  leave(): void {
    this.leaving = true;
    this.wake?.();
  }

  /** Joins the crawl and fetches until it is finished or stopped (or the worker leaves). */
  async run(): Promise<'finished' | 'stopped' | 'left'> {
    await this.loadMeta();
    this.concurrency = this.o.concurrency ?? this.settings.CONCURRENT_REQUESTS;
    this.downloader = new Downloader({
      clock: createRealClock(), resolve: this.config.resolve, userAgent: this.settings.USER_AGENT,
      connectionsPerOrigin: Math.max(this.settings.CONCURRENT_REQUESTS_PER_DOMAIN, 1),
    });
    // A name still alive may be a process that just died (its heartbeat lives up to HEARTBEAT_TTL_MS): wait that long.
    let joined = -1;
    for (const until = Date.now() + HEARTBEAT_TTL_MS + 1000; ;) {
      joined = Number(await script(this.r, 'ssJoin', [this.P, this.name, HEARTBEAT_TTL_MS, this.info()]));
      if (joined >= 0 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (joined < 0) throw new SharedCrawlError(`a worker named ${this.name} is already fetching for this crawl; give each worker its own --name`);
    if (joined > 0) this.log(`${this.name}: ${joined} requests an earlier process named ${this.name} had in flight went back to the queue`);
    this.hbTimer = setInterval(() => void this.heartbeat(), HEARTBEAT_TTL_MS / 3);
    let lastPoll = 0;
    try {
      for (;;) {
        if (this.leaving) break;
        const t = Date.now();
        try {
          if (t - lastPoll >= 200) {
            await this.pollMeta();
            lastPoll = t;
          }
          if (this.status === 'finished') break;
          if (this.status === 'stopped') {
            for (const h of this.active) h.cancel('crawl stopped');
            if (this.inFlight === 0 && this.committing === 0) break;
            await this.sleep(50);
            continue;
          }
          if (this.redisDown) {
            await this.reconcile();
            this.redisDown = false;
            this.log(`${this.name}: Redis answers again; fetching`);
          }
          let waitMs = 20;
          if (this.status === 'running' && this.room() > 0) {
            const got = await this.reserve(this.room());
            if (got.count > 0) continue;
            if (got.queued === 0 && got.leases === 0) {
              if ((await script(this.r, 'ssFinish', [this.P])) === 1) continue;
            }
            if (got.nextDue !== null) waitMs = Math.max(1, Math.min(20, got.nextDue - got.now));
          }
          await this.sleep(waitMs);
        } catch (e) {
          if (!isConnectionError(e)) throw e;
          if (!this.redisDown) this.log(`${this.name}: Redis is unreachable (${(e as Error).message}); no request starts until it is back`);
          this.redisDown = true;
          await this.sleep(200);
        }
      }
      while (this.inFlight > 0 || this.committing > 0) await this.sleep(20);
      if (this.leaving) return 'left';
      return this.status === 'stopped' ? 'stopped' : 'finished';
    } finally {
      this.stopped = true;
      if (this.hbTimer) clearInterval(this.hbTimer);
      // Gone cleanly: its name is free at once (its row stays, not alive, in the Workers panel).
      await this.r.multi().del(`${this.P}hb:${this.name}`).hset(`${this.P}left`, this.name, String(Date.now() + this.offset)).exec().catch(() => undefined);
      await this.downloader.close().catch(() => undefined);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  /** Takes the Redis clock's reading `redisNow` (ms) seen between local times t0 and t1. */
  private clockSample(redisNow: number, t0: number, t1: number): void {
    const rtt = t1 - t0;
    // A fresher sample wins after 10 s, so a drifting clock is followed.
    if (rtt <= this.offsetRtt || t1 - this.offsetAt > 10_000) {
      this.offset = redisNow - (t0 + t1) / 2;
      this.offsetRtt = rtt;
      this.offsetAt = t1;
    }
  }

  /** Lease tokens this worker knows it holds (reserved and not yet committed). */
  private readonly leases = new Set<string>();

  /**
   * After Redis was unreachable: a RESERVE whose reply was lost left leases this worker never learnt
   * of; they go back to the queue (nothing was sent for them).
   */
  private async reconcile(): Promise<void> {
    const held = await this.r.smembers(`${this.P}wl:${this.name}`);
    const orphans = held.filter((t) => !this.leases.has(t));
    if (orphans.length === 0) return;
    const n = Number(await script(this.r, 'ssUnlease', [this.P, ...orphans]));
    if (n > 0) this.log(`${this.name}: ${n} requests reserved as Redis went away (the reply was lost) went back to the queue, unsent`);
  }

  /** Requests asked for by reservations still on their way (they may all come back). */
  private reserving = 0;
  /** A topUp is queued for this turn of the event loop. */
  private topUpQueued = false;

  /** Room for more requests: this worker's concurrency less what is on the wire, committing or asked for. */
  private room(): number {
    return Math.min(this.concurrency - this.inFlight, this.concurrency - this.committing) - this.reserving;
  }

  /**
   * A response freed room: a reservation goes out at once, beside any still on its way, instead of
   * after it (each lane's cycle is a reservation's round trip plus the fetch; serialising the
   * reservations made them the crawl's bottleneck on a fast host).
   */
  private topUp(): void {
    // Once per turn of the event loop: the responses read in one turn share one reservation.
    if (this.topUpQueued) return;
    this.topUpQueued = true;
    setImmediate(() => {
      this.topUpQueued = false;
      if (this.status !== 'running' || this.redisDown || this.stopped || this.leaving) return;
      const n = this.room();
      // Redis gone: the loop's own calls see it and wait; anything else is said.
      if (n > 0) void this.reserve(n).catch((e: unknown) => isConnectionError(e) || this.log(`${this.name}: a reservation failed: ${(e as Error).message}`));
    });
  }

  private async reserve(max: number): Promise<{ count: number; queued: number; leases: number; nextDue: number | null; now: number }> {
    this.reserving += max;
    try {
      return await this.reserveNow(max);
    } finally {
      this.reserving -= max;
    }
  }

  private async reserveNow(max: number): Promise<{ count: number; queued: number; leases: number; nextDue: number | null; now: number }> {
    // The downloader's clock (sub-millisecond), which the offset converts.
    const t0 = realNow();
    const out = (await script(this.r, 'ssReserve', [this.P, this.name, max, LOCK_MS])) as string[];
    const t1 = realNow();
    const now = Number(out[0]);
    this.clockSample(now, t0, t1);
    const got: Reserved[] = [];
    for (let i = 5; i + 6 < out.length; i += 7) {
      got.push({
        slot: out[i]!, token: out[i + 1]!, q: JSON.parse(out[i + 2]!) as QueuedRequest, policy: out[i + 3]!, score: out[i + 4]!, now, at: t1,
        inflight: Number(out[i + 5]), det: out[i + 6] ? Number(out[i + 6]) : 0,
      });
    }
    for (const g of got) {
      this.inFlight++;
      this.leases.add(g.token);
      void this.begin(g).catch((e: unknown) => this.log(`${this.name}: ${g.q.u}: ${(e as Error).message}`));
    }
    return { count: got.length, queued: Number(out[2]), leases: Number(out[3]), nextDue: out[4] ? Number(out[4]) : null, now };
  }

  private request(slot: string, q: QueuedRequest, robots = false): CrawlRequest {
    const u = new URL(q.u);
    return {
      url: q.u, origin: u.origin, path: requestTarget(u), host: hostOf(u), method: 'GET', depth: q.d, priority: q.p, meta: q.m,
      redirects: q.r, retries: q.t, robots, scopeKeys: [], costs: null, quotaWindows: null, enqueuedAt: q.e, slotKey: slot, lane: -1,
    };
  }

  private override(slot: string) {
    return Object.hasOwn(this.settings.DOWNLOAD_SLOTS, slot) ? this.settings.DOWNLOAD_SLOTS[slot] : undefined;
  }

  /** What robots.txt of an origin says: its rules (null: allow all), 'wait' while another worker fetches it, or 'fetch' (ours to fetch). */
  private async robotsFor(origin: string): Promise<RobotsRules | null | 'wait' | 'fetch'> {
    if (this.robots.has(origin)) return this.robots.get(origin)!;
    const text = await this.r.hget(`${this.P}robots`, origin);
    if (text !== null) {
      const rules = text === '' ? null : parseRobots(origin, text, this.settings.USER_AGENT);
      this.robots.set(origin, rules);
      return rules;
    }
    if ((await this.r.hsetnx(`${this.P}robotsclaim`, origin, this.name)) === 1) return 'fetch';
    const holder = await this.r.hget(`${this.P}robotsclaim`, origin);
    // A claim of a worker that died is taken over.
    if (holder !== null && holder !== this.name && (await this.r.exists(`${this.P}hb:${holder}`)) === 0) {
      await this.r.hset(`${this.P}robotsclaim`, origin, this.name);
      return 'fetch';
    }
    return holder === this.name ? 'fetch' : 'wait';
  }

  /** A reserved request: robots.txt first where it is not known, then the start committed, then the fetch. */
  private async begin(g: Reserved): Promise<void> {
    try {
      await this.beginUnchecked(g);
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      // Redis went away before the request was sent: it goes back to its queue once Redis is back.
      await this.release(g, { requeue: true, readyAt: null });
    }
  }

  private async beginUnchecked(g: Reserved): Promise<void> {
    const s = this.settings;
    let req = this.request(g.slot, g.q);
    let robotsFetch = false;
    if (s.ROBOTSTXT_OBEY) {
      const rules = await this.robotsFor(req.origin);
      if (rules === 'wait') return this.release(g, { requeue: true, readyAt: g.now + ROBOTS_WAIT_MS });
      if (rules === 'fetch') {
        robotsFetch = true;
        req = this.request(g.slot, { u: new URL('/robots.txt', req.origin).href, d: 0, p: ROBOTS_PRIORITY, m: {}, r: 0, t: 0, e: g.now }, true);
      } else if (!robotsAllows(rules, req.url, s.USER_AGENT)) {
        const ev: EventRecord = { t: g.now, slot: g.slot, kind: 'info', code: 'robots-disallowed', text: `forbidden by robots.txt: ${req.url}` };
        return this.release(g, { requeue: false, readyAt: g.now, events: [ev] });
      }
    }
    const policy = decodePolicy(g.slot, this.override(g.slot), s, g.policy, g.now);
    let readyAt: number;
    let version: number;
    let sentFree = false;
    if (g.det > 0 && deterministic(policy, s)) {
      // Nothing to draw: RESERVE committed the start (next start = now + the gap); no round trip.
      policy.lastStart = g.now;
      sentFree = smallestGapMs(policy, s) === 0;
      readyAt = policy.gapReadyAt(s);
      version = g.det;
    } else {
      policy.started(g.now, s, this.random);
      readyAt = policy.gapReadyAt(s);
      version = Number(await script(this.r, 'ssStarted', [this.P, g.slot, g.token, encodePolicy(policy), readyAt.toFixed(3),
        policy.paused ? 0 : policy.concurrency(s), smallestGapMs(policy, s).toFixed(3), deterministic(policy, s) ? 1 : 0]));
    }
    g.version = version;
    g.started = policy;
    if (version === 0) {
      // Our lock ran out before the start was committed: nothing is sent; the request goes back.
      return this.release(g, { requeue: true, readyAt: null });
    }
    const gapMs = readyAt - g.now;
    const dl: DownloadRequest = {
      origin: req.origin, path: req.path, method: req.method, timeout: s.DOWNLOAD_TIMEOUT, maxSize: s.DOWNLOAD_MAXSIZE,
      keepBody: req.robots, keepLimit: ROBOTS_MAX_BYTES, startedAt: g.now - this.offset,
      sink: req.robots ? undefined : (status, headers, drained) => this.linkSink(req, status, headers, drained),
    };
    let handle: { cancel(reason?: string): void } | null = null;
    let done = false;
    handle = this.downloader.fetch(
      dl,
      (res) => {
        done = true;
        if (handle) this.active.delete(handle);
        void this.completed(g, req, res, robotsFetch).catch((e: unknown) => this.log(`${this.name}: ${req.url}: ${(e as Error).message}`));
      },
      // A slot without any gap (nothing drawn, none to keep) does not wait for this send: no SENT (RESERVE knew).
      g.det > 0 && gapMs === 0 && sentFree ? undefined : (t) => {
        // Redis's clock at the reservation plus the time since its reply: never before the start,
        // and short of the true send only by the reply's transit.
        g.sentAt = g.now + (t - g.at);
        void script(this.r, 'ssSent', [this.P, g.slot, gapMs.toFixed(3), g.token]).catch(() => undefined);
      },
    );
    if (!done) this.active.add(handle);
  }

  private linkSink(req: CrawlRequest, status: number, headers: Readonly<Record<string, string | string[]>>, drained: () => void): LinkScanner | null {
    if (status < 200 || status >= 300 || this.status === 'stopped') return null;
    const contentType = headerValue(headers, 'content-type');
    const rules = this.frontier.rules;
    if (!isHtml(contentType) || rules.scope === 'none' || req.depth + 1 > rules.maxDepth) return null;
    return new LinkScanner(req.url, contentType, drained);
  }

  /** Locks the slot, runs `compute` on its state, and commits; again when the lock was lost meanwhile. */
  private underLock(slot: string, compute: (policy: SlotPolicy, now: number, inflight: number) => CommitArgs): Promise<void> {
    return editSlot(this.r, this.P, slot, this.settings, this.name, compute, (now, t0, t1) => this.clockSample(now, t0, t1));
  }

  private commit(slot: string, token: string, policy: SlotPolicy, c: CommitArgs): Promise<boolean> {
    return commitSlot(this.r, this.P, slot, token, policy, this.settings, c);
  }

  /** A reserved request that is not sent: back to its queue, or done (robots.txt forbids it). */
  private async release(g: Reserved, o: { requeue: boolean; readyAt: number | null; events?: EventRecord[] }): Promise<void> {
    try {
      const policy = decodePolicy(g.slot, this.override(g.slot), this.settings, g.policy, g.now);
      const c: CommitArgs = {
        lease: g.token, readyAt: o.readyAt ?? undefined, requeue: o.requeue ? g.score : null, adds: [],
        record: o.events ? { w: this.name, events: o.events } : null,
      };
      // The reservation's lock is still ours unless it ran out (then someone else may hold it).
      if (await this.commit(g.slot, g.token, policy, c)) return;
      await this.underLock(g.slot, () => c);
    } finally {
      this.leases.delete(g.token);
      this.inFlight--;
      this.wake?.();
    }
  }

  /** One response: the throttle step on the slot's state, its record, robots.txt or its links, all in one commit. */
  private async completed(g: Reserved, req: CrawlRequest, local: DownloadResult, robotsFetch: boolean): Promise<void> {
    const res: DownloadResult = { ...local, startedAt: local.startedAt + this.offset, endedAt: local.endedAt + this.offset };
    // Off the wire: room for the next request while this one's commit travels.
    this.inFlight--;
    this.committing++;
    this.topUp();
    this.wake?.();
    try {
      // robots.txt's rules are kept in Redis before the commit that puts the waiting page back, so it is judged by them.
      const robots = robotsFetch ? await this.robotsAnswered(req, res) : null;
      let done: CommitArgs | null = null;
      // Nobody touched the slot since this worker's start (its version holds): one round trip, no lock.
      if (g.version && g.started && !this.stopped) {
        const c = this.outcome(g, req, res, robots, g.started, res.endedAt, g.inflight);
        if (await this.commit(g.slot, `=${g.version}`, g.started, c)) done = c;
      }
      if (!done) {
        await this.underLock(g.slot, (policy, now, inflight) => (done = this.outcome(g, req, res, robots, policy, now, inflight)));
      }
      for (const k of (done as CommitArgs | null)?.onceKeys ?? []) this.warned.add(k);
      // Only a saving (Redis de-duplicates): forgotten at HANDED_OVER_MAX, so a long crawl's worker stays bounded.
      if (this.handedOver.size > HANDED_OVER_MAX) this.handedOver.clear();
      for (const k of (done as CommitArgs | null)?.seenKeys ?? []) this.handedOver.add(k);
      if (res.status !== null) this.responses++;
    } finally {
      this.leases.delete(g.token);
      this.committing--;
      this.wake?.();
    }
  }

  private outcome(g: Reserved, req: CrawlRequest, res: DownloadResult, robots: RobotsAnswer | null, policy: SlotPolicy, now: number, inflight: number): CommitArgs {
    const s = this.settings;
    const cancelled = res.errorKind === 'cancelled';
    // As the one-process engine's paceSent: rampup's and header pacing's windows count this request
    // from its send, which the server sees (it can come tens of ms after the start under load).
    if (g.sentAt !== undefined) policy.paceSent(g.now, g.sentAt);
    const d = throttleStep(policy, {
      t: res.endedAt, startedAt: res.startedAt, status: res.status, errorKind: res.errorKind, latency: res.latency,
      inFlight: inflight, meta: req.meta, headers: res.headers, url: req.url,
    }, s);
    const changes: ChangeRecord[] = d.changes.map((c) => ({ t: res.endedAt, slot: g.slot, setting: c.setting, source: c.source, oldValue: c.oldValue, newValue: c.newValue }));
    const events: EventRecord[] = d.notes.map((n) => ({ t: res.endedAt, slot: g.slot, kind: 'info', code: n.code, text: n.text }));
    const contentType = headerValue(res.headers, 'content-type');
    const resp = responseRecord(req, g.slot, res, inflight, d, contentType);
    if (d.adjusted && s.AUTOTHROTTLE_DEBUG) events.push({ t: resp.t, slot: g.slot, kind: 'debug', code: 'autothrottle', text: recordDebugLine(resp) });
    if (res.errorKind !== null && !cancelled) events.push({ t: res.endedAt, slot: g.slot, kind: 'error', code: res.errorKind, text: `${req.url}: ${res.errorKind}: ${res.errorMessage}` });
    const adds: (string | number)[] = [];
    const onceKeys: string[] = [];
    const seenKeys: string[] = [];
    let requeue: string | null = null;
    if (robots) {
      // The page whose reservation fetched robots.txt goes back to its queue, to be judged by it.
      requeue = g.score;
      events.push(...robots.events);
      if (robots.rules) {
        const rule = crawlDelayRule(robots.rules, s, policy.scope(s), req.slotKey, req.origin);
        if (rule?.warning) events.push({ t: res.endedAt, slot: req.slotKey, kind: 'warning', code: rule.warning.code, text: rule.warning.text });
        if (rule && rule.delay !== null) {
          changes.push({ t: res.endedAt, slot: req.slotKey, setting: 'crawl_delay', source: 'robots', oldValue: policy.crawlDelay, newValue: rule.delay });
          policy.crawlDelay = rule.delay;
        }
      }
    } else if (cancelled) {
      requeue = g.score;
    } else if (this.status !== 'stopped' && isRetryable(res, s)) {
      if (req.retries >= s.RETRY_TIMES) {
        events.push({ t: res.endedAt, slot: g.slot, kind: 'error', code: 'retries-exhausted',
          text: `gave up on ${req.url} after ${req.retries + 1} attempts (last: ${res.status ?? `${res.errorKind}: ${res.errorMessage}`}; RETRY_TIMES ${s.RETRY_TIMES})` });
      } else {
        const fresh = decodePolicy(g.slot, this.override(g.slot), s, '', -Infinity);
        adds.push(...addArgs(g.slot, '', { u: req.url, d: req.depth, p: req.priority + s.RETRY_PRIORITY_ADJUST, m: req.meta, r: req.redirects, t: req.retries + 1, e: now }, fresh, s));
      }
    } else if (res.status !== null && this.status !== 'stopped') {
      const { pages, notes } = followUps(req, g.slot, res, contentType, {
        rules: this.frontier.rules, pageLimitReached: false, allowsLink: (u, depth) => this.frontier.allowsLink(u, depth),
      }, () => true);
      for (const n of notes) {
        if (n.once) {
          // Said once per slot (by this worker): remembered once the commit that says it has landed.
          const key = `${n.code}\u0000${g.slot}`;
          if (this.warned.has(key)) continue;
          onceKeys.push(key);
        }
        events.push({ t: res.endedAt, slot: g.slot, kind: n.kind, code: n.code, text: n.text });
      }
      for (const p of pages) {
        const key = canonicalKey(p.url);
        // Redis de-duplicates; a link this worker has already handed over (a committed add) is not sent again.
        if (this.handedOver.has(key)) continue;
        seenKeys.push(key);
        const slot = slotOf(p.url, p.meta);
        // A redirect's target is de-duplicated but not counted against the page limit ('!'): it continues a page.
        adds.push(...addArgs(slot, (p.redirects > 0 ? '!' : '') + key, { u: p.url.href, d: p.depth, p: p.priority, m: p.meta, r: p.redirects, t: 0, e: now }, this.freshPolicy(slot), s));
      }
    }
    return { lease: g.token, requeue, adds, onceKeys, seenKeys, record: req.robots ? { w: this.name, changes, events } : { w: this.name, resp, changes, events } };
  }

  /** Notes said once per slot (per worker: another worker may say one once too). */
  private readonly warned = new Set<string>();
  /** Canonical keys of links this worker's committed adds handed to Redis (which de-duplicates them all). */
  private readonly handedOver = new Set<string>();
  /** A new slot's policy per slot key, under the current settings (its concurrency and gap go with each add). */
  private fresh = new Map<string, SlotPolicy>();
  private freshFor: Settings | null = null;

  private freshPolicy(slot: string): SlotPolicy {
    if (this.freshFor !== this.settings) {
      this.fresh = new Map();
      this.freshFor = this.settings;
    }
    let p = this.fresh.get(slot);
    if (!p) {
      p = decodePolicy(slot, this.override(slot), this.settings, '', -Infinity);
      if (this.fresh.size < 10_000) this.fresh.set(slot, p);
    }
    return p;
  }

  /** robots.txt of an origin answered: its rules kept in Redis for every worker (or the claim given up for a retry). */
  private async robotsAnswered(req: CrawlRequest, res: DownloadResult): Promise<RobotsAnswer> {
    const s = this.settings;
    const t = res.endedAt;
    const outcome = robotsOutcome(res.status);
    const events: EventRecord[] = [];
    if (outcome === 'retry') {
      // The claim is given up; the next page of the origin claims the fetch again, up to ROBOTS_RETRIES.
      const n = await this.r.hincrby(`${this.P}robotsfail`, req.origin, 1);
      if (n >= ROBOTS_RETRIES) {
        await this.r.hset(`${this.P}robots`, req.origin, '');
        this.robots.set(req.origin, null);
        events.push({ t, slot: req.slotKey, kind: 'warning', code: 'robots-unavailable',
          text: `robots.txt of ${req.origin} unavailable after ${ROBOTS_RETRIES} attempts (${res.status ?? res.errorKind}); crawling it as if it allowed everything` });
      } else {
        events.push({ t, slot: req.slotKey, kind: 'warning', code: 'robots-retry',
          text: `robots.txt of ${req.origin} failed (${res.status ?? res.errorKind}); retrying (attempt ${n + 1} of ${ROBOTS_RETRIES})` });
      }
      await this.r.hdel(`${this.P}robotsclaim`, req.origin);
      return { rules: null, events };
    }
    let text = '';
    let rules: RobotsRules | null = null;
    if (outcome === 'parse' && res.body) {
      text = decodeText(res.body, headerValue(res.headers, 'content-type'), false).text;
      if (res.truncated) {
        text = text.slice(0, text.lastIndexOf('\n') + 1);
        events.push({ t, slot: req.slotKey, kind: 'warning', code: 'robots-truncated',
          text: `robots.txt of ${req.origin} is larger than ${ROBOTS_MAX_BYTES} bytes (decompressed); only the rules in its first ${ROBOTS_MAX_BYTES} bytes were read and are obeyed (RFC 9309 2.5), the rest was not downloaded` });
      }
      text = compactRobots(text, s.USER_AGENT);
      rules = parseRobots(req.origin, text, s.USER_AGENT);
    } else if (outcome === 'parse' && res.decodeError !== null) {
      events.push({ t, slot: req.slotKey, kind: 'warning', code: 'decode-failed', text: `robots.txt of ${req.origin}: ${res.decodeError}; crawling it as if it allowed everything` });
    }
    await this.r.hset(`${this.P}robots`, req.origin, text);
    this.robots.set(req.origin, rules);
    return { rules, events };
  }
}

/** What robots.txt said: its rules (null: none, allow all) and the notes for the log. */
interface RobotsAnswer {
  readonly rules: RobotsRules | null;
  readonly events: EventRecord[];
}

let lockSeq = 0;

/**
 * A read-compute-commit of a slot's state (a response's step, a user's pin): locks the slot, runs
 * `compute` (the engine's rules) on its policy, and commits; again when the lock was lost meanwhile.
 * While Redis is unreachable it waits: a response is never dropped.
 */
export async function editSlot(
  r: Redis, P: string, slot: string, settings: Settings, who: string,
  compute: (policy: SlotPolicy, now: number, inflight: number) => CommitArgs,
  clock?: (redisNow: number, t0: number, t1: number) => void,
): Promise<void> {
  const ov = Object.hasOwn(settings.DOWNLOAD_SLOTS, slot) ? settings.DOWNLOAD_SLOTS[slot] : undefined;
  // One token for every attempt: a lock taken just before Redis went away is still ours after.
  const token = `${who}:c${++lockSeq}`;
  for (let attempt = 0; ; attempt++) {
    let got: string[];
    try {
      const t0 = realNow();
      got = (await script(r, 'ssLock', [P, slot, token, LOCK_MS])) as string[];
      if (got.length > 0) clock?.(Number(got[0]), t0, realNow());
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      await new Promise((res) => setTimeout(res, 200));
      continue;
    }
    if (got.length === 0) {
      if (attempt > 2000 && (await r.exists(`${P}s:${slot}`)) === 0) throw new Error(`slot ${slot} does not exist in this shared crawl`);
      await new Promise((res) => setTimeout(res, attempt < 20 ? 1 : 5));
      continue;
    }
    const [now, pol, last, inflight] = [Number(got[0]), got[1]!, got[2]!, Number(got[3])];
    const policy = decodePolicy(slot, ov, settings, pol, last === '' ? -Infinity : Number(last));
    const c = compute(policy, now, inflight);
    if (await commitSlot(r, P, slot, token, policy, settings, c)) return;
  }
}

/** Commits a slot's state under the lock `token`: false when the lock was lost (compute again). */
export async function commitSlot(r: Redis, P: string, slot: string, token: string, policy: SlotPolicy, s: Settings, c: CommitArgs): Promise<boolean> {
  const readyAt = c.readyAt ?? policy.gapReadyAt(s);
  const args: (string | number)[] = [
    P, slot, token, c.lease, encodePolicy(policy), readyAt.toFixed(3), policy.paused ? 0 : policy.concurrency(s), smallestGapMs(policy, s).toFixed(3),
    c.record ? JSON.stringify(c.record) : '', c.adds.length / 7, c.requeue ?? '',
    // The latest start the state was read with: the script moves the next start by any start since.
    c.readyAt === undefined && Number.isFinite(policy.lastStart) ? policy.lastStart.toFixed(3) : '', deterministic(policy, s) ? 1 : 0, ...c.adds,
  ];
  for (;;) {
    try {
      return (await script(r, 'ssCommit', args)) === 1;
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      await new Promise((res) => setTimeout(res, 200));
    }
  }
}

/**
 * Whether a slot's gap draws nothing (no randomization, or no delay to randomize; no rampup, no header pacing): its
 * starts need no draw committed, so RESERVE commits them itself. Its factor is then 1 for good.
 */
function deterministic(p: SlotPolicy, s: Settings): boolean {
  // Rampup and the server's RateLimit pacing place a start by a window of earlier starts, not a gap.
  if (p.rampupParams(s) || p.headerPace !== null) return false;
  if (p.randomization(s) !== false && p.delaySeconds(s) > 0) return false;
  p.gapFactor = 1;
  return true;
}

/** The arguments of one commit of a slot. */
export interface CommitArgs {
  readonly lease: string;
  /** The slot's next start; by default what the policy says. */
  readonly readyAt?: number;
  /** The lease's request goes back to its queue at this score (null: it is done). */
  readonly requeue: string | null;
  readonly adds: (string | number)[];
  readonly record: StreamedRecord | null;
  /** Once-per-slot notes this commit says. */
  readonly onceKeys?: readonly string[];
  /** Links this commit hands over. */
  readonly seenKeys?: readonly string[];
}
