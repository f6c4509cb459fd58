// One crawl: seeds and followed links through robots.txt, the frontier and the scheduler to the
// downloader, with every response fed back to the throttle and reported to the sinks (the store).

import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { applySettings, validateDelayPin, type Settings, type SettingsResult } from '../../../shared/settings';
import type { ChangeRecord, ChangeSource, CrawlStatus, EventRecord, ResponseRecord, SlotChange } from '../../../shared/types';
import type { CrawlStatsWire } from '../../../shared/contract';
import { createRealClock, type Clock } from '../clock';
import { describeSeedError, type CrawlConfig } from './crawl-config';
import { Downloader, type DownloadRequest, type DownloadResult } from './downloader';
import { asUrl, Frontier, hostOf, Interner, parseSeedUrl, type PageUrl } from './frontier';
import { decodeText, isHtml, LinkScanner, type CharsetChoice } from './links';
import { NO_META, type CrawlRequest } from './request';
import { parseRobots, robotsAllows, robotsOutcome, type RobotsRules } from './robots';
import { costOf, Scheduler } from './scheduler';
import type { Slot } from './slot';
import { resetBackoff } from './throttle/backoff';
import { throttleStep, type ThrottleDecision } from './throttle/step';
import { recordDebugLine } from '../../../shared/debug-line';
import { WarningWatch } from './warnings';
import { addScopes, loadThrottlingManager, ruleScopes, type ScopeSet, type ThrottlingManager } from './scopes';
import { restoreSlot, type FrontierSink, type SavedCrawl } from './resume';
import {
  charsetNote, crawlDelayRule, followUps, headerValue, isRetryable, responseRecord, ROBOTS_MAX_BYTES, ROBOTS_PRIORITY, ROBOTS_RETRIES,
} from './outcome';

/** Where the crawl reports what happens; the store and the hosts subscribe here. */
export interface CrawlSinks {
  onResponse?(r: ResponseRecord): void;
  onChange?(c: ChangeRecord): void;
  onEvent?(e: EventRecord): void;
  onStatus?(status: CrawlStatus): void;
  /** The crawl's settings after a change was applied (kept with the crawl so a resumed crawl keeps it). */
  onSettings?(settings: Settings): void;
  /** The frontier, for crash-safe resume. */
  onFrontier?: FrontierSink;
}

export interface CrawlerOptions {
  readonly config: CrawlConfig;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly sinks?: CrawlSinks;
  /** Idle slots are cleaned up after this many ms (keeping their learned delay). */
  readonly idleSlotMs?: number;
}

/** A crawl's figures, as the contract sends them. */
export type CrawlStats = CrawlStatsWire;

const NO_SCOPES: readonly string[] = [];
/** Seeds queued per event-loop turn (a few ms of work); shorter lists are queued at once, as before. */
const SEED_CHUNK = 1000;

/** The THROTTLING_MANAGER plug-in's word on a response: backoff feedback or not, and the actual quota cost. */
interface PluginVerdict {
  readonly backoff?: boolean;
  readonly cost?: unknown;
}

interface OriginRobots {
  state: 'fetching' | 'ready';
  rules: RobotsRules | null;
  attempts: number;
  waiting: CrawlRequest[];
}

export class Crawler {
  readonly config: CrawlConfig;
  private settings: Settings;
  private readonly clock: Clock;
  private readonly sinks: CrawlSinks;
  private readonly scheduler: Scheduler;
  private readonly downloader: Downloader;
  private readonly frontier: Frontier;
  private readonly robots = new Map<string, OriginRobots>();
  private readonly ipCache = new Map<string, string>();
  /**
   * One string per host and per origin for every request of it: each request's URL gives new
   * ones, and a queued request keeps its own until it starts (memory, and GC copying at intake).
   */
  private readonly hosts = new Interner();
  private readonly origins = new Interner();
  private parked = 0;
  private statusValue: CrawlStatus = 'created';
  private startedAt: number | null = null;
  private finishedAt: number | null = null;
  private requests = 0;
  private responses = 0;
  private failures = 0;
  private bytes = 0;
  private robotsDisallowed = 0;
  private readonly byStatus = new Map<number, number>();
  /** The frontier sink (crash-safe resume) and the next page's acceptance number. */
  private readonly fs: FrontierSink | null;
  private nextSeq = 0;
  /**
   * Seeds canonicalised but not yet queued, and the next one to queue: a long seed list is
   * queued SEED_CHUNK at a time, one chunk per event-loop turn, so dispatch starts after the
   * first chunk and the loop is never blocked by the whole list.
   */
  private seedBacklog: PageUrl[] = [];
  private seedNext = 0;
  private resolveDone!: (s: CrawlStats) => void;
  /** Resolves when the crawl has finished or stopped and nothing is in flight. */
  readonly done: Promise<CrawlStats>;

  constructor(o: CrawlerOptions) {
    this.config = o.config;
    this.settings = o.config.settings;
    this.clock = o.clock ?? createRealClock();
    this.sinks = o.sinks ?? {};
    this.fs = this.sinks.onFrontier ?? null;
    this.frontier = new Frontier(o.config.follow);
    this.downloader = new Downloader({
      clock: this.clock,
      resolve: o.config.resolve,
      userAgent: this.settings.USER_AGENT,
      connectionsPerOrigin: maxSlotConcurrency(this.settings),
    });
    this.scheduler = new Scheduler({
      settings: this.settings,
      clock: this.clock,
      random: o.random,
      idleSlotMs: o.idleSlotMs,
      start: (req, slot) => this.startDownload(req, slot),
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.warnings = new WarningWatch((code, slot, text) => this.warnOnce(code, slot, text));
  }

  private readonly warnings: WarningWatch;
  /** The latest settings change no request has started under yet (see firstUse). */
  private settingsUnused: { readonly t: number; readonly changed: readonly string[] } | null = null;

  /**
   * Records when a dispatch decision first used changed settings: the first request started
   * after the change (an 'info' event 'settings-in-use'; data: changedAt, changed, afterMs).
   */
  private firstUse(slot: Slot): void {
    const c = this.settingsUnused!;
    this.settingsUnused = null;
    const afterMs = slot.lastStart - c.t;
    this.event('info', 'settings-in-use', slot.key,
      `first request started under the change of ${c.changed.join(', ')}, ${afterMs.toFixed(1)} ms after it`,
      { changedAt: c.t, changed: c.changed, afterMs });
  }

  get status(): CrawlStatus {
    return this.statusValue;
  }

  get currentSettings(): Settings {
    return this.settings;
  }

  /** Queues the seeds and starts dispatching. */
  start(): void {
    if (this.statusValue !== 'created') return;
    this.startedAt = this.clock.now();
    this.setStatus('running');
    this.warnings.checkSettings(this.settings);
    for (const e of this.config.seedErrors) {
      this.event('warning', 'seed-line', null, `skipped ${describeSeedError(e)}: ${JSON.stringify(e.text.trim())}`);
    }
    this.queueSeeds();
  }

  /** Canonicalises every seed (the seed hosts scope link following), then queues the first chunk. */
  private queueSeeds(): void {
    const seeds: PageUrl[] = [];
    for (const seed of this.config.seeds) {
      const u = parseSeedUrl(seed);
      if (!u) continue;
      seeds.push(u);
      this.frontier.addSeedHost(hostOf(u));
    }
    this.seedBacklog = seeds;
    this.seedNext = 0;
    this.seedChunk();
  }

  private readonly seedChunk = (): void => {
    const backlog = this.seedBacklog;
    const end = Math.min(backlog.length, this.seedNext + SEED_CHUNK);
    while (this.seedNext < end) this.addPage(backlog[this.seedNext++]!, 0, 0, NO_META);
    if (this.seedNext < backlog.length) {
      this.clock.defer(this.seedChunk);
    } else {
      this.seedBacklog = [];
      this.seedNext = 0;
    }
    this.checkDone();
  };

  /** Seeds still waiting to be queued. */
  private get seedsWaiting(): number {
    return this.seedBacklog.length - this.seedNext;
  }

  /**
   * Continues a crawl from its saved frontier (crash-safe resume) instead of its seeds: URLs seen
   * before are not queued again, pending ones are, slots get their learned state back. robots.txt
   * is fetched again, once per origin. `paused` starts it paused.
   */
  startFrom(saved: SavedCrawl, o: { paused?: boolean } = {}): void {
    if (this.statusValue !== 'created') return;
    this.startedAt = saved.startedAt ?? this.clock.now();
    this.requests = saved.totals.requests;
    this.responses = saved.totals.responses;
    this.failures = saved.totals.failures;
    this.bytes = saved.totals.bytes;
    for (const [k, v] of Object.entries(saved.totals.byStatus)) this.byStatus.set(Number(k), v);
    for (const s of saved.slots) restoreSlot(this.scheduler.slot(s.key), s);
    for (const url of saved.seen) this.frontier.markSeen(url);
    this.frontier.accepted = saved.accepted;
    this.nextSeq = saved.nextSeq;
    if (o.paused) this.scheduler.pause();
    this.setStatus(o.paused ? 'paused' : 'running');
    this.warnings.checkSettings(this.settings);
    this.event('info', 'resumed', null,
      `resumed with ${saved.pending.length} URLs to fetch` +
        (saved.wasInFlight > 0 ? ` (${saved.wasInFlight} were in flight when the previous run ended; fetched again once)` : ''));
    for (const url of saved.givenUp) {
      this.event('error', 'interrupted-twice', null,
        `gave up on ${url}: it was in flight at two interrupted runs (it may crash the crawler); not fetched again`);
    }
    for (const p of saved.pending) {
      const u = parseSeedUrl(p.url);
      if (!u) continue;
      this.frontier.markSeen(u);
      const req = this.makeRequest(u, p.depth, p.priority, p.meta, p.redirects, false, p.seq);
      this.admit(p.retries > 0 ? { ...req, retries: p.retries } : req);
    }
    // Seeds the previous run never queued (it ended during seed intake); seen ones are skipped.
    this.queueSeeds();
  }

  /** In-flight requests finish; nothing new starts. */
  pause(): void {
    if (this.statusValue !== 'running') return;
    this.scheduler.pause();
    this.setStatus('paused');
  }

  resume(): void {
    if (this.statusValue !== 'paused') return;
    this.setStatus('running');
    this.scheduler.resume();
    this.checkDone();
  }

  /** Cancels in-flight requests (recorded as cancelled) and ends the crawl. */
  stop(): Promise<CrawlStats> {
    if (this.statusValue === 'finished' || this.statusValue === 'stopped') return this.done;
    this.scheduler.pause();
    this.setStatus('stopped');
    const dropped = this.scheduler.drain().length + this.seedsWaiting;
    this.seedBacklog = [];
    this.seedNext = 0;
    if (dropped > 0) this.event('info', 'stopped-queue', null, `crawl stopped with ${dropped} requests still queued`);
    this.downloader.cancelAll('crawl stopped');
    this.checkDone();
    return this.done;
  }

  /**
   * Validates a change set whole and applies it to the next dispatch decision, recording one
   * change per setting. Nothing is applied when any value is refused.
   */
  updateSettings(patch: unknown, source: ChangeSource = 'user'): SettingsResult {
    const r = applySettings(patch, this.settings);
    if (!r.ok) return r;
    const before = this.settings;
    this.settings = r.settings;
    this.scheduler.setSettings(r.settings);
    if (before.USER_AGENT !== r.settings.USER_AGENT) this.downloader.setUserAgent(r.settings.USER_AGENT);
    this.downloader.ensureConnections(maxSlotConcurrency(r.settings));
    this.warnings.checkSettings(r.settings);
    this.sinks.onSettings?.(r.settings);
    const t = this.clock.now();
    for (const name of r.changed) {
      this.sinks.onChange?.({ t, slot: null, setting: name, source, oldValue: before[name], newValue: r.settings[name] });
    }
    if (r.changed.length > 0) this.settingsUnused = { t, changed: r.changed };
    return r;
  }

  /** Per-slot controls (SPEC 6). Unknown slots are created so a pin can precede the first request. */
  pauseSlot(key: string, paused = true): void {
    const slot = this.scheduler.slot(key);
    if (slot.paused === paused) return;
    slot.paused = paused;
    this.slotChange(slot, 'paused', !paused, paused);
    this.scheduler.reschedule(slot);
  }

  pinDelay(key: string, pin: number | null): void {
    const seconds = validateDelayPin(pin);
    const slot = this.scheduler.slot(key);
    const old = slot.pinDelay;
    slot.pinDelay = seconds;
    this.slotChange(slot, 'pin_delay', old, seconds);
    this.scheduler.reschedule(slot);
  }

  pinConcurrency(key: string, n: number | null): void {
    if (n !== null && !(Number.isInteger(n) && n >= 1)) throw new RangeError(`concurrency pin: ${n} is not allowed (a whole number >= 1, or null to clear)`);
    const slot = this.scheduler.slot(key);
    const old = slot.pinConcurrency;
    slot.pinConcurrency = n;
    if (n !== null) this.downloader.ensureConnections(n);
    this.slotChange(slot, 'pin_concurrency', old, n);
    this.scheduler.reschedule(slot);
  }

  /** Forgets a slot's backoff level, rampup memory and Retry-After block (the user's call). */
  resetBackoff(key: string): void {
    const slot = this.scheduler.slot(key);
    const old = { level: slot.backoff.level, blockedUntil: slot.backoff.blockedUntil || null };
    resetBackoff(slot.backoff);
    slot.rampup.wMax = 0;
    slot.rampup.startedAt = NaN;
    slot.rampup.cutAt = -Infinity;
    slot.rampup.margin = 0;
    slot.rampup.span = 1;
    this.slotChange(slot, 'backoff_reset', old, { level: 0, blockedUntil: null });
    this.scheduler.reschedule(slot);
  }

  /** The crawl's clock time, epoch ms. */
  get now(): number {
    return this.clock.now();
  }

  clearPins(key: string): void {
    this.pinDelay(key, null);
    this.pinConcurrency(key, null);
  }

  slot(key: string): Slot | undefined {
    return this.scheduler.existingSlot(key);
  }

  /** Whether the crawl has this slot, a long-idle one included (its actions wake it). */
  hasSlot(key: string): boolean {
    return this.scheduler.knows(key);
  }

  /** The first `limit` requests waiting in a slot's queue, in the order the slot will start them, and how many wait in all. */
  queueOf(key: string, limit: number): { readonly queued: number; readonly items: readonly CrawlRequest[] } {
    const slot = this.scheduler.existingSlot(key);
    if (!slot) return { queued: 0, items: [] };
    const items: CrawlRequest[] = [];
    for (const r of slot.queue) {
      if (items.length >= limit) break;
      items.push(r);
    }
    return { queued: slot.queue.size, items };
  }

  slots(): IterableIterator<Slot> {
    return this.scheduler.allSlots();
  }

  stats(): CrawlStats {
    return {
      status: this.statusValue,
      requests: this.requests,
      responses: this.responses,
      failures: this.failures,
      byStatus: Object.fromEntries([...this.byStatus].map(([k, v]) => [String(k), v])),
      bytes: this.bytes,
      inFlight: this.scheduler.inFlight,
      queued: this.scheduler.queued + this.parked + this.seedsWaiting,
      slots: this.scheduler.slotCount,
      robotsDisallowed: this.robotsDisallowed,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
    };
  }

  /**
   * Releases timers and connections. By default a crawl still going is stopped first; with
   * `{ stop: false }` (quitting the app) it keeps its status, e.g. paused, to be resumed later.
   */
  async close(o: { stop?: boolean } = {}): Promise<void> {
    const going = this.statusValue !== 'finished' && this.statusValue !== 'stopped' && this.statusValue !== 'created';
    if (going && o.stop !== false) await this.stop();
    // Requests still in flight when quitting are cancelled (recorded as such, and queued again in the frontier).
    this.downloader.cancelAll('crawl closed');
    this.scheduler.close();
    await this.downloader.close();
  }

  // -------------------------------------------------------------------------------------------

  private setStatus(s: CrawlStatus): void {
    this.statusValue = s;
    this.sinks.onStatus?.(s);
  }

  private event(kind: EventRecord['kind'], code: string, slot: string | null, text: string, data?: unknown): void {
    this.sinks.onEvent?.({ t: this.clock.now(), slot, kind, code, text, data });
  }

  private slotChange(slot: Slot, setting: SlotChange, oldValue: unknown, newValue: unknown): void {
    this.sinks.onChange?.({ t: this.clock.now(), slot: slot.key, setting, source: 'user', oldValue, newValue });
  }

  /** Slot key (SPEC 5.1 default scope): meta.download_slot, else the host, or its IP with CONCURRENT_REQUESTS_PER_IP. */
  private slotKeyFor(host: string, meta: Readonly<Record<string, unknown>>): string {
    const explicit = meta.download_slot;
    if (typeof explicit === 'string') return explicit;
    if (this.settings.CONCURRENT_REQUESTS_PER_IP > 0) return this.ipOf(host);
    return host;
  }

  /** The host's IP when known (resolve map or an earlier lookup); the host until then, as Scrapy does. */
  private ipOf(host: string): string {
    if (isIP(host)) return host;
    const fixed = this.config.resolve[host];
    if (fixed) return fixed;
    const cached = this.ipCache.get(host);
    if (cached) return cached;
    this.ipCache.set(host, host);
    dnsLookup(host, (err, address) => {
      if (!err && address) this.ipCache.set(host, address);
    });
    return host;
  }

  /** Loads the THROTTLING_MANAGER plug-in, if one is set; call before start(). */
  async prepare(baseDir?: string): Promise<void> {
    const path = this.settings.THROTTLING_MANAGER;
    if (path) this.plugin = await loadThrottlingManager(path, baseDir);
  }

  private plugin: ThrottlingManager | null = null;

  /** The request's scopes beyond its slot: meta.throttling_scopes, the config's rules, the plug-in. */
  private scopesFor(u: PageUrl, slotKey: string, meta: Record<string, unknown>, depth: number): ScopeSet | null {
    const rules = this.config.scopeRules;
    if (meta.throttling_scopes === undefined && rules.length === 0 && !this.plugin) return null;
    const set: ScopeSet = { keys: [], costs: null };
    addScopes(set, meta.throttling_scopes);
    if (rules.length > 0) ruleScopes(rules, asUrl(u), set);
    if (this.plugin?.getScopes) {
      try {
        addScopes(set, this.plugin.getScopes({ url: u.href, method: 'GET', meta, depth }));
      } catch (e) {
        this.warnOnce('plugin-error', null, `THROTTLING_MANAGER getScopes failed (${(e as Error)?.message ?? e}); ` +
          `the request is kept with its other scopes. Fix the plug-in; this is reported once.`);
      }
    }
    const i = set.keys.indexOf(slotKey);
    if (i >= 0) set.keys.splice(i, 1);
    return set;
  }

  private makeRequest(u: PageUrl, depth: number, priority: number, meta: Record<string, unknown>, redirects: number, robots: boolean, seq = -1): CrawlRequest {
    const host = this.hosts.get(hostOf(u));
    const slotKey = this.slotKeyFor(host, meta);
    const scopes = robots ? null : this.scopesFor(u, slotKey, meta, depth);
    const url = u.href;
    const origin = this.origins.get(u.origin);
    return {
      retries: 0,
      scopeKeys: scopes?.keys ?? NO_SCOPES,
      costs: scopes?.costs ?? null,
      quotaWindows: null,
      url,
      origin,
      // The request target (as requestTarget gives it): the URL after its origin.
      path: url.slice(origin.length),
      host,
      method: 'GET',
      depth,
      priority,
      meta,
      redirects,
      robots,
      enqueuedAt: 0,
      slotKey,
      lane: -1,
      seq,
    };
  }

  /** A page URL from a seed or a link: de-duplicated, counted against the page limit, then robots-checked. */
  private addPage(u: PageUrl, depth: number, priority: number, meta: Record<string, unknown>): void {
    if (this.frontier.pageLimitReached) return;
    if (!this.frontier.markSeen(u)) return;
    this.frontier.accepted++;
    const req = this.makeRequest(u, depth, priority, meta, 0, false, this.nextSeq++);
    this.fs?.queued(req);
    this.admit(req);
  }

  /** Queues a request once robots.txt of its origin is known (fetching it first, through the same throttle). */
  private admit(req: CrawlRequest): void {
    if (!this.settings.ROBOTSTXT_OBEY || req.robots) {
      this.scheduler.enqueue(req);
      this.warnings.checkDelayed(this.scheduler.queued + this.parked, this.settings);
      return;
    }
    let r = this.robots.get(req.origin);
    if (!r) {
      r = { state: 'fetching', rules: null, attempts: 0, waiting: [] };
      this.robots.set(req.origin, r);
      this.fetchRobots(req.origin);
    }
    if (r.state === 'fetching') {
      r.waiting.push(req);
      this.parked++;
      this.warnings.checkDelayed(this.scheduler.queued + this.parked, this.settings);
      return;
    }
    this.admitChecked(req, r.rules);
  }

  private admitChecked(req: CrawlRequest, rules: RobotsRules | null): void {
    if (robotsAllows(rules, req.url, this.settings.USER_AGENT)) {
      this.scheduler.enqueue(req);
      this.warnings.checkDelayed(this.scheduler.queued + this.parked, this.settings);
    } else {
      this.robotsDisallowed++;
      this.fs?.done(req);
      this.event('info', 'robots-disallowed', req.slotKey, `forbidden by robots.txt: ${req.url}`);
    }
  }

  private fetchRobots(origin: string): void {
    const u = new URL('/robots.txt', origin);
    this.scheduler.enqueue(this.makeRequest(u, 0, ROBOTS_PRIORITY, NO_META, 0, true));
  }

  private robotsAnswered(req: CrawlRequest, res: DownloadResult): void {
    const r = this.robots.get(req.origin);
    if (!r || r.state !== 'fetching') return;
    r.attempts++;
    const outcome = robotsOutcome(res.status);
    if (outcome === 'retry' && r.attempts < ROBOTS_RETRIES) {
      // RFC 9309: 5xx or unreachable means "try again later"; the slot's delay spaces the retries.
      this.event('warning', 'robots-retry', req.slotKey,
        `robots.txt of ${req.origin} failed (${res.status ?? res.errorKind}); retrying (attempt ${r.attempts + 1} of ${ROBOTS_RETRIES})`);
      this.fetchRobots(req.origin);
      return;
    }
    let rules: RobotsRules | null = null;
    if (outcome === 'parse' && res.body) {
      let text = this.decodeBody(req, res, false);
      if (res.truncated) {
        // A line cut by the limit is not a rule: only whole lines count.
        text = text.slice(0, text.lastIndexOf('\n') + 1);
        this.event('warning', 'robots-truncated', req.slotKey,
          `robots.txt of ${req.origin} is larger than ${ROBOTS_MAX_BYTES} bytes (decompressed); only the rules in its first ${ROBOTS_MAX_BYTES} bytes ` +
          'were read and are obeyed (RFC 9309 2.5), the rest was not downloaded');
      }
      rules = parseRobots(req.origin, text, this.settings.USER_AGENT);
    } else if (outcome === 'parse' && res.decodeError !== null) {
      this.event('warning', 'decode-failed', req.slotKey, `robots.txt of ${req.origin}: ${res.decodeError}; crawling it as if it allowed everything`);
    } else if (outcome === 'retry') {
      this.event('warning', 'robots-unavailable', req.slotKey,
        `robots.txt of ${req.origin} unavailable after ${ROBOTS_RETRIES} attempts (${res.status ?? res.errorKind}); crawling it as if it allowed everything`);
    }
    if (rules) this.applyCrawlDelay(req, rules);
    r.state = 'ready';
    r.rules = rules;
    const waiting = r.waiting;
    r.waiting = [];
    this.parked -= waiting.length;
    for (const w of waiting) this.admitChecked(w, rules);
  }

  /** SPEC 5.5: a valid Crawl-delay makes the slot's floor min(Crawl-delay, cap) and its concurrency 1. */
  private applyCrawlDelay(req: CrawlRequest, rules: RobotsRules): void {
    const s = this.settings;
    const slot = this.scheduler.slot(req.slotKey);
    const rule = crawlDelayRule(rules, s, slot.scope(s), slot.key, req.origin);
    if (!rule) return;
    if (rule.warning) this.warnOnce(rule.warning.code, slot.key, rule.warning.text);
    if (rule.delay === null) return;
    const old = slot.crawlDelay;
    slot.crawlDelay = rule.delay;
    this.sinks.onChange?.({ t: this.clock.now(), slot: slot.key, setting: 'crawl_delay', source: 'robots', oldValue: old, newValue: rule.delay });
    this.scheduler.reschedule(slot);
  }

  private readonly warned = new Set<string>();

  /** A warning once per cause (code and slot), SPEC 5.6. */
  private warnOnce(code: string, slot: string | null, text: string): void {
    const key = `${code}\u0000${slot ?? ''}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.event('warning', code, slot, text);
  }

  private startDownload(req: CrawlRequest, slot: Slot): void {
    this.requests++;
    if (this.settingsUnused) this.firstUse(slot);
    if (this.fs !== null && !req.robots) this.fs.started(req);
    // A request refused at once is still a recorded failure, through completed (on the next
    // turn), not a request in flight forever.
    const begin = slot.lastStart;
    this.downloader.fetch(
      this.downloadRequest(req, slot),
      (res) => {
        this.sizeWarning(req, slot, res);
        this.completed(req, slot, res);
      },
      (t) => {
        slot.paceSent(begin, t);
        this.scheduler.sent(req, slot, t);
      },
    );
  }

  /**
   * What the downloader is asked for: robots.txt is kept up to ROBOTS_MAX_BYTES; a page's body is
   * read as it arrives by a link scanner when its links will be followed, else only counted.
   */
  private downloadRequest(req: CrawlRequest, slot: Slot): DownloadRequest {
    const s = this.settings;
    return {
      origin: req.origin, path: req.path, method: req.method, timeout: s.DOWNLOAD_TIMEOUT, maxSize: s.DOWNLOAD_MAXSIZE,
      keepBody: req.robots, keepLimit: ROBOTS_MAX_BYTES, startedAt: slot.lastStart, notBefore: slot.lastStart,
      sink: this.mayScanLinks(req) ? (status, headers, drained) => this.linkSink(req, status, headers, drained) : undefined,
    };
  }

  /**
   * Whether a page's links could be followed (what linkSink decides from its headers then): not
   * robots.txt, nor a page under follow scope none or at the depth limit (the rules are fixed for
   * the crawl), which then costs no sink at all.
   */
  private mayScanLinks(req: CrawlRequest): boolean {
    const rules = this.frontier.rules;
    return !req.robots && rules.scope !== 'none' && req.depth + 1 <= rules.maxDepth;
  }

  /** A link scanner for a 2xx HTML page whose links the follow rules take (decided when its headers arrive), else null. */
  private linkSink(req: CrawlRequest, status: number, headers: Readonly<Record<string, string | string[]>>, drained: () => void): LinkScanner | null {
    if (status < 200 || status >= 300 || this.statusValue === 'stopped') return null;
    const contentType = headerValue(headers, 'content-type');
    const rules = this.frontier.rules;
    if (!isHtml(contentType) || rules.scope === 'none' || req.depth + 1 > rules.maxDepth || this.frontier.pageLimitReached) return null;
    return new LinkScanner(req.url, contentType, drained);
  }

  /** DOWNLOAD_WARNSIZE: one warning per response whose body is larger once decompressed (Scrapy's warnsize). */
  private sizeWarning(req: CrawlRequest, slot: Slot, res: DownloadResult): void {
    const warn = this.settings.DOWNLOAD_WARNSIZE;
    const size = Math.max(res.decodedBytes, res.bytes);
    if (warn <= 0 || size <= warn) return;
    const wire = res.decodedBytes > res.bytes ? ` from ${res.bytes} bytes received` : '';
    this.event('warning', 'download-warnsize', slot.key,
      `${req.url}: body ${res.errorKind === 'maxsize' ? 'stopped at' : 'of'} ${size} bytes${wire} is larger than DOWNLOAD_WARNSIZE (${warn} bytes)`);
  }

  private completed(req: CrawlRequest, slot: Slot, res: DownloadResult): void {
    const s = this.settings;
    const inFlight = slot.inFlight;
    const verdict = this.pluginVerdict(req, res);
    const cancelled = res.errorKind === 'cancelled';
    // The one throttle step decides the slot's delays; its decision is what the row records.
    const d = this.step(slot, req, res, inFlight, verdict);
    if (res.status !== null) {
      this.responses++;
      this.byStatus.set(res.status, (this.byStatus.get(res.status) ?? 0) + 1);
      slot.responses++;
      slot.byClass[Math.min(5, Math.floor(res.status / 100))]++;
      if (res.status === 429) slot.s429++;
      if (res.latency !== null) {
        slot.latencySum += res.latency;
        slot.latencyCount++;
        slot.lastLatency = res.latency;
      }
    } else {
      this.failures++;
      slot.failures++;
    }
    this.bytes += res.bytes;
    slot.bytes += res.bytes;
    if (!cancelled) {
      for (const key of req.scopeKeys) {
        const scope = this.scheduler.slot(key);
        this.step(scope, req, res, scope.inFlight, verdict);
      }
    }
    this.scheduler.finish(req, slot);
    if (!req.robots) this.warnings.onResponse(slot, res, inFlight, s);
    const contentType = headerValue(res.headers, 'content-type');
    const record = responseRecord(req, slot.key, res, inFlight, d, contentType);
    this.sinks.onResponse?.(record);
    // AUTOTHROTTLE_DEBUG: the line is a rendering of the record, as the debug-log export renders it.
    if (d.adjusted && s.AUTOTHROTTLE_DEBUG) {
      this.sinks.onEvent?.({ t: record.t, slot: slot.key, kind: 'debug', code: 'autothrottle', text: recordDebugLine(record) });
    }
    if (res.errorKind !== null && !cancelled) {
      this.event('error', res.errorKind, slot.key, `${req.url}: ${res.errorKind}: ${res.errorMessage}`);
    }

    if (req.robots) this.robotsAnswered(req, res);
    else if (!cancelled && this.statusValue !== 'stopped' && isRetryable(res, this.settings)) this.retry(req, slot, res);
    else {
      // The frontier mark comes with the response (and any links found): one synchronous run,
      // so the history writer commits them in one transaction.
      if (cancelled) this.fs?.requeued(req);
      else this.fs?.done(req);
      if (res.status !== null && this.statusValue !== 'stopped') this.followUp(req, slot, res, contentType);
    }
    this.checkDone();
  }

  /**
   * One scope's throttle step for a response; records what it changed (its changes and notes, at the
   * response's time) and, when the actual cost settled the scope's quota, lets its waiting requests try again.
   */
  private step(scope: Slot, req: CrawlRequest, res: DownloadResult, inFlight: number, verdict: PluginVerdict | null): ThrottleDecision {
    const windowStart = req.quotaWindows?.[scope.key];
    const d = throttleStep(scope, {
      t: res.endedAt, startedAt: res.startedAt, status: res.status, errorKind: res.errorKind, latency: res.latency,
      inFlight, meta: req.meta, backoff: verdict?.backoff, headers: res.headers, url: req.url, cost: verdict?.cost,
      quota: windowStart === undefined ? undefined : { windowStart, expected: costOf(req, scope.key) },
    }, this.settings);
    const t = res.endedAt;
    for (const c of d.changes) this.sinks.onChange?.({ t, slot: scope.key, setting: c.setting, source: c.source, oldValue: c.oldValue, newValue: c.newValue });
    for (const n of d.notes) this.sinks.onEvent?.({ t, slot: scope.key, kind: 'info', code: n.code, text: n.text });
    if (d.quotaSettled) this.scheduler.reschedule(scope);
    return d;
  }

  /** The plug-in's getResponseBackoff: backoff true/false overrides the status rule; cost settles quotas. */
  private pluginVerdict(req: CrawlRequest, res: DownloadResult): PluginVerdict | null {
    const fn = this.plugin?.getResponseBackoff;
    if (!fn) return null;
    try {
      const v = fn({ url: req.url, status: res.status, errorKind: res.errorKind, headers: res.headers ?? {}, scopes: [req.slotKey, ...req.scopeKeys] });
      if (typeof v === 'boolean') return { backoff: v };
      if (v && typeof v === 'object') {
        const o = v as { backoff?: unknown; cost?: unknown };
        return { backoff: typeof o.backoff === 'boolean' ? o.backoff : undefined, cost: o.cost };
      }
    } catch (e) {
      this.warnOnce('plugin-error', null, `THROTTLING_MANAGER getResponseBackoff failed (${(e as Error)?.message ?? e}); ` +
        'the response is judged by its status. Fix the plug-in; this is reported once.');
    }
    return null;
  }

  /** A retry, up to RETRY_TIMES, at RETRY_PRIORITY_ADJUST; a request given up is an error naming it and why (never dropped silently). */
  private retry(req: CrawlRequest, slot: Slot, res: DownloadResult): void {
    const s = this.settings;
    if (req.retries >= s.RETRY_TIMES) {
      this.fs?.done(req);
      this.event('error', 'retries-exhausted', slot.key,
        `gave up on ${req.url} after ${req.retries + 1} attempts (last: ${res.status ?? `${res.errorKind}: ${res.errorMessage}`}; RETRY_TIMES ${s.RETRY_TIMES})`);
      return;
    }
    const again = { ...req, retries: req.retries + 1, priority: req.priority + s.RETRY_PRIORITY_ADJUST, enqueuedAt: 0, lane: -1, quotaWindows: null };
    this.fs?.requeued(again);
    this.scheduler.enqueue(again);
  }

  /** Redirects and links: each page through addPage (de-duplicated, counted, robots-checked). */
  private followUp(req: CrawlRequest, slot: Slot, res: DownloadResult, contentType: string | null): void {
    const { pages, notes } = followUps(req, slot.key, res, contentType, this.frontier, this.markSeen);
    if (pages.length === 0 && notes.length === 0) return;
    for (const n of notes) {
      if (n.once) this.warnOnce(n.code, slot.key, n.text);
      else this.event(n.kind, n.code, slot.key, n.text);
    }
    for (const p of pages) {
      if (p.redirects > 0) {
        // A redirect's target was marked seen by followUps; it is queued past the page limit, as a page's continuation.
        const next = this.makeRequest(p.url, p.depth, p.priority, p.meta, p.redirects, false, this.nextSeq++);
        this.fs?.queued(next);
        this.admit(next);
      } else this.addPage(p.url, p.depth, p.priority, p.meta);
    }
  }

  /** A redirect's target is new (de-duplication); one function for every response. */
  private readonly markSeen = (u: URL): boolean => this.frontier.markSeen(u);

  /** A charset label nobody knows: the body was decoded as UTF-8 instead, said once per slot. */
  private charsetWarning(req: CrawlRequest, slot: string, charset: CharsetChoice): void {
    const n = charsetNote(req.url, charset);
    if (n) this.warnOnce(n.code, slot, n.text);
  }

  /** A kept body (robots.txt) as text, decoded with its declared charset (Content-Type, and <meta> for HTML). */
  private decodeBody(req: CrawlRequest, res: DownloadResult, html: boolean): string {
    if (!res.body) return '';
    const { text, charset } = decodeText(res.body, headerValue(res.headers, 'content-type'), html);
    this.charsetWarning(req, req.slotKey, charset);
    return text;
  }

  private checkDone(): void {
    if (this.statusValue === 'finished' || this.finishedAt !== null) return;
    if (this.statusValue !== 'running' && this.statusValue !== 'stopped') return;
    if (this.scheduler.inFlight > 0 || this.downloader.inFlight > 0) return;
    if (this.statusValue === 'running' && (this.scheduler.queued > 0 || this.parked > 0 || this.seedsWaiting > 0)) return;
    this.finishedAt = this.clock.now();
    if (this.statusValue === 'running') this.setStatus('finished');
    this.scheduler.close();
    this.resolveDone(this.stats());
  }
}

/** The most requests any one slot may have in flight under these settings. */
function maxSlotConcurrency(s: Settings): number {
  let n = Math.max(s.CONCURRENT_REQUESTS_PER_DOMAIN, s.CONCURRENT_REQUESTS_PER_IP);
  for (const o of Object.values(s.DOWNLOAD_SLOTS)) n = Math.max(n, o.concurrency ?? 0);
  for (const o of Object.values(s.THROTTLING_SCOPES)) n = Math.max(n, o.concurrency ?? 0);
  return n;
}
