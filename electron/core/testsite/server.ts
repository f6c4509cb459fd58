// The local test site: a real HTTP server on loopback that plays many hosts with scripted
// latency, errors, rate limits and robots rules, for the crawler's demo, tests and benchmarks.

import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { planBody, type BodyPlan } from './bodies';
import { parseScenario, type HostSpec, type RateLimitHeaders, type Scenario, type ScenarioInput } from './scenario';
import { streamRandom, type Random } from './random';
import {
  disallowRules,
  linkableRules,
  pageIndex,
  renderDisallowedPage,
  renderPage,
  renderStatusPage,
  robotsText,
  ruleMatcher,
} from './pages';
import { RequestLog, type LogEntry, type LogMark } from './request-log';

/** Options of `startTestSite`. */
export interface TestSiteOptions {
  /** File to write the request log to, one JSON line per request (truncated at start). */
  readonly log?: string;
  /** Keep log entries in memory, in `TestSite.log`. */
  readonly keepLog?: boolean;
  /**
   * When a host's own 127.x address cannot be bound (macOS only routes 127.0.0.1 by default),
   * serve it on the shared 127.0.0.1 listener instead of failing. Default false.
   */
  readonly loopbackFallback?: boolean;
}

/** One bound listener. */
export interface TestSiteListener {
  readonly address: string;
  readonly port: number;
  /** Host names it serves. */
  readonly hosts: readonly string[];
}

/** A running test site. */
export interface TestSite {
  /**
   * Host → base URL without a trailing slash. A host alone on its own address gets
   * `http://127.0.0.2:PORT` (usable as is); a host on a shared listener gets
   * `http://name:PORT`, to be used with `resolve`.
   */
  readonly hosts: Readonly<Record<string, string>>;
  /** Host → loopback address serving it, for a curl-like `--resolve` map. */
  readonly resolve: Readonly<Record<string, string>>;
  /** Host → port of the listener serving it. */
  readonly ports: Readonly<Record<string, number>>;
  readonly listeners: readonly TestSiteListener[];
  /** The validated scenario being served. */
  readonly scenario: Scenario;
  /** `http://name:PORT` of a host (name based: pair it with `resolve`). Throws for an unknown host. */
  origin(host: string): string;
  /** Request log entries in arrival order of their responses (only with `keepLog`). */
  readonly log: LogEntry[];
  /**
   * When the log's clock started, epoch ms on this process's monotonic clock
   * (`performance.timeOrigin + performance.now()`): an entry arrived at `startedAt + t`.
   */
  readonly startedAt: number;
  /**
   * Every Retry-After block the host announced (rate limit or quota refusals that reached the
   * client), in sending order: `from` = when the refusal was sent, `to` = from + Retry-After
   * seconds, both in ms since the start like the log's `t`. Throws for an unknown host.
   */
  blocks(host: string): BlockInterval[];
  /** How many requests the host was serving, integrated over time since the start. Throws for an unknown host. */
  inFlightStats(host: string): InFlightStats;
  /** Stops listening, drops every connection (hanging ones too), flushes the log. Idempotent. */
  close(): Promise<void>;
}

/** One announced Retry-After block, in ms since the site started. */
export interface BlockInterval {
  readonly from: number;
  readonly to: number;
}

/** Concurrency a host saw (every request counts from arrival until its response is sent or dropped). */
export interface InFlightStats {
  /** Time-weighted mean of requests in flight over the time the host served at least one. */
  readonly mean: number;
  /** Most requests in flight at once. */
  readonly max: number;
  /** Requests that arrived (each one observes in_flight). */
  readonly samples: number;
}

/** A fully prepared answer: status, flat header list, body. */
interface Canned {
  readonly status: number;
  readonly headers: readonly string[];
  readonly body: Buffer;
}

interface PageVariants {
  readonly plain: Canned;
  readonly gzip: Canned | null;
}

type Override =
  | { readonly kind: 'reset' }
  | { readonly kind: 'hang' }
  | { readonly kind: 'send'; readonly answer: Canned }
  | { readonly kind: 'big'; readonly size: number; readonly headers: readonly string[] }
  | { readonly kind: 'body'; readonly plan: BodyPlan };

interface RateState {
  readonly requests: number;
  readonly windowMs: number;
  /** Arrival times of the last `requests` admitted requests (a ring, oldest at `head`). */
  readonly ring: Float64Array;
  head: number;
  count: number;
  readonly answer: Canned;
}

interface QuotaState {
  readonly units: number;
  readonly windowMs: number;
  /** Index of the current fixed window (t / windowMs) and the units it used. */
  window: number;
  used: number;
  readonly exact: ReadonlyMap<string, number>;
  /** Prefix rules (`/api/*` → `/api/`), longest first. */
  readonly prefixes: readonly (readonly [string, number])[];
  readonly costHeader: string | null;
  readonly answer: Canned;
}

interface SoftState {
  /** Requests served normally before the block (Infinity: no such rule). */
  readonly after: number;
  /** Smallest polite gap between arrivals (0: no such rule). */
  readonly minGap: number;
  seen: number;
  last: number;
  readonly answer: Canned;
}

/** Per-host limits that keep state or set per-response headers (rate limit, quota, soft block). */
interface Policy {
  readonly rate: RateState | null;
  readonly rateHeaders: RateLimitHeaders;
  /** Retry-After seconds of a rate refusal; -1 = no header. */
  readonly retryAfter: number;
  readonly httpDate: boolean;
  readonly block: boolean;
  readonly quota: QuotaState | null;
  readonly soft: SoftState | null;
}

interface HostRuntime {
  readonly name: string;
  readonly spec: HostSpec;
  inFlight: number;
  /** In-flight integral: last change (performance.now ms), sum of in_flight·dt, busy time, peak, arrivals. */
  since: number;
  area: number;
  busy: number;
  peak: number;
  arrivals: number;
  /** Announced Retry-After blocks as flat from, to pairs (ms since start), and the latest end. */
  readonly blocks: number[];
  blockUntil: number;
  readonly base: number;
  readonly jitter: number;
  readonly perInflight: number;
  readonly jitterRandom: Random;
  readonly statusRandom: Random;
  /** Cumulative probabilities and their answers. */
  readonly statusCuts: readonly number[];
  readonly statusAnswers: readonly Canned[];
  /** Null when the host has no rate limit, quota or soft block: the lean path. */
  readonly policy: Policy | null;
  readonly robots: Canned;
  /** Answer of the first `robotsFailsLeft` robots.txt requests (`robots.fail_times`). */
  readonly robotsFail: Canned | null;
  robotsFailsLeft: number;
  readonly overrides: ReadonlyMap<string, Override>;
  /** Precomputed pages (index → variants), or null when the site is too big to keep in memory. */
  readonly pages: (PageVariants | undefined)[] | null;
  readonly extraHeaders: readonly string[];
  readonly notFound: Canned;
  readonly homeLinks: readonly string[];
  readonly disallowed: ((path: string) => boolean) | null;
}

interface ListenerRuntime {
  readonly address: string;
  readonly byName: Map<string, HostRuntime>;
  /** The one host that asked for this address, served to requests whose Host is the bare IP. */
  addressHost: HostRuntime | undefined;
  server: Server | null;
  port: number;
}

/** Bytes of page bodies precomputed per site; bigger sites render pages on each request. */
const PRECOMPUTE_BUDGET = 64 * 1024 * 1024;
const BIG_CHUNK = 64 * 1024;
const HTML = 'text/html; charset=utf-8';
const SHARED_ADDRESS = '127.0.0.1';

// Flags of an answer that needs more than its canned headers (see `deliverWith`).
const BLOCKED = 1;
const SOFT = 2;
const RATE_REFUSAL = 4;
const QUOTA_REFUSAL = 8;

/** Flat header list with a later name replacing an earlier one (scenario headers beat defaults). */
function mergeHeaders(headers: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i].toLowerCase();
    for (let j = 0; j < out.length; j += 2) {
      if (out[j].toLowerCase() === name) {
        out.splice(j, 2);
        break;
      }
    }
    out.push(headers[i], headers[i + 1]);
  }
  return out;
}

function canned(status: number, body: Buffer, headers: readonly string[]): Canned {
  return { status, body, headers: [...mergeHeaders(headers), 'Content-Length', String(body.length)] };
}

function statusAnswer(status: number, extra: readonly string[]): Canned {
  const body = status === 204 || status === 304 ? Buffer.alloc(0) : Buffer.from(renderStatusPage(status, STATUS_CODES[status] ?? 'Status'));
  return canned(status, body, ['Content-Type', HTML, ...extra]);
}

function flatHeaders(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers).flat();
}

function buildHost(name: string, spec: HostSpec, seed: number, budget: { left: number }): HostRuntime {
  const extra = flatHeaders(spec.headers);
  const rules = disallowRules(spec.robots);
  const homeLinks = linkableRules(rules);

  const overrides = new Map<string, Override>();
  for (const p of spec.reset) overrides.set(p, { kind: 'reset' });
  for (const p of spec.hang) overrides.set(p, { kind: 'hang' });
  for (const [p, r] of Object.entries(spec.redirects)) {
    const body = Buffer.from(renderStatusPage(r.status, STATUS_CODES[r.status] ?? 'Redirect'));
    overrides.set(p, { kind: 'send', answer: canned(r.status, body, ['Location', r.to, 'Content-Type', HTML, ...extra]) });
  }
  for (const [p, size] of Object.entries(spec.big)) {
    overrides.set(p, { kind: 'big', size, headers: [...mergeHeaders(['Content-Type', HTML, ...extra]), 'Content-Length', String(size)] });
  }
  for (const [p, body] of Object.entries(spec.bodies)) {
    // robots.txt answers without the host's extra headers, as the generated one does.
    overrides.set(p, { kind: 'body', plan: planBody(body, p === '/robots.txt' ? [] : extra) });
  }

  let robots: Canned;
  let robotsFail: Canned | null = null;
  const plainText = ['Content-Type', 'text/plain; charset=utf-8'];
  if (spec.robots) {
    const r = spec.robots;
    const failText = `${r.status} ${STATUS_CODES[r.status] ?? ''}\n`;
    if (r.fail_times !== undefined) {
      // Fails a few times, then serves the rules: the status text first, the body with 200 after.
      robotsFail = canned(r.status, Buffer.from(failText), plainText);
      robots = canned(200, Buffer.from(robotsText(r)), plainText);
    } else {
      const text = r.body !== undefined || r.status === 200 ? robotsText(r) : failText;
      robots = canned(r.status, Buffer.from(text), plainText);
    }
  } else {
    robots = statusAnswer(404, []);
  }

  const statusCuts: number[] = [];
  const statusAnswers: Canned[] = [];
  let cumulative = 0;
  for (const [code, p] of Object.entries(spec.statuses)) {
    if (p <= 0) continue;
    cumulative += p;
    statusCuts.push(cumulative);
    statusAnswers.push(statusAnswer(Number(code), extra));
  }

  const host: HostRuntime = {
    name,
    spec,
    inFlight: 0,
    since: 0,
    area: 0,
    busy: 0,
    peak: 0,
    arrivals: 0,
    blocks: [],
    blockUntil: -Infinity,
    base: spec.latency_ms.base,
    jitter: spec.latency_ms.jitter,
    perInflight: spec.latency_ms.per_inflight,
    jitterRandom: streamRandom(seed, name, 'jitter'),
    statusRandom: streamRandom(seed, name, 'statuses'),
    statusCuts,
    statusAnswers,
    policy: buildPolicy(spec, extra),
    robots,
    robotsFail,
    robotsFailsLeft: spec.robots?.fail_times ?? 0,
    overrides,
    pages: null,
    extraHeaders: extra,
    notFound: statusAnswer(404, extra),
    homeLinks,
    disallowed: ruleMatcher(rules),
  };
  const estimate = spec.pages * spec.page_bytes * (spec.gzip ? 1.5 : 1);
  if (estimate <= budget.left) {
    budget.left -= estimate;
    const pages: PageVariants[] = [];
    for (let i = 0; i < spec.pages; i++) pages.push(renderVariants(host, seed, i));
    (host as { pages: PageVariants[] | null }).pages = pages;
  }
  return host;
}

function buildPolicy(spec: HostSpec, extra: readonly string[]): Policy | null {
  const rl = spec.rate_limit;
  const q = spec.quota;
  const sb = spec.soft_block;
  if (!rl && !q && !sb) return null;
  const httpDate = rl?.retry_after_format === 'http-date';
  let rate: RateState | null = null;
  if (rl) {
    // An HTTP-date Retry-After depends on the clock: `deliverWith` adds it when sending.
    const headers = rl.retry_after === null || httpDate ? extra : ['Retry-After', String(rl.retry_after), ...extra];
    rate = {
      requests: rl.requests,
      windowMs: rl.per_seconds * 1000,
      ring: new Float64Array(rl.requests),
      head: 0,
      count: 0,
      answer: statusAnswer(rl.status, headers),
    };
  }
  let quota: QuotaState | null = null;
  if (q) {
    const exact = new Map<string, number>();
    const prefixes: [string, number][] = [];
    for (const [key, cost] of Object.entries(q.costs)) {
      if (key.endsWith('*')) prefixes.push([key.slice(0, -1), cost]);
      else exact.set(key, cost);
    }
    prefixes.sort((a, b) => b[0].length - a[0].length);
    quota = {
      units: q.units,
      windowMs: q.per_seconds * 1000,
      window: 0,
      used: 0,
      exact,
      prefixes,
      costHeader: q.cost_header ?? null,
      answer: statusAnswer(q.status, extra),
    };
  }
  let soft: SoftState | null = null;
  if (sb) {
    soft = {
      after: sb.after ?? Infinity,
      minGap: sb.min_gap_ms ?? 0,
      seen: 0,
      last: -Infinity,
      answer: canned(200, Buffer.from(sb.body), ['Content-Type', HTML, ...extra]),
    };
  }
  return {
    rate,
    rateHeaders: rl?.headers ?? 'none',
    retryAfter: rl?.retry_after ?? -1,
    httpDate,
    block: rl?.block_while_retry_after ?? false,
    quota,
    soft,
  };
}

/** Cost of a request under a quota: its exact path, else its longest prefix rule, else 1. */
function costOf(quota: QuotaState, path: string): number {
  const exact = quota.exact.get(path);
  if (exact !== undefined) return exact;
  for (const [prefix, cost] of quota.prefixes) if (path.startsWith(prefix)) return cost;
  return 1;
}

/** Admits an arrival into a rate window whose check passed. */
function admit(rate: RateState, arrival: number): void {
  if (rate.count < rate.requests) {
    rate.ring[(rate.head + rate.count) % rate.requests] = arrival;
    rate.count++;
  } else {
    rate.ring[rate.head] = arrival;
    rate.head = (rate.head + 1) % rate.requests;
  }
}

/**
 * Rate-limit header values at `arrival`: requests still admitted in the window, and ms until
 * the oldest admitted arrival leaves it (the next slot to free; 0 when the window is empty).
 */
function rateStanding(rate: RateState, arrival: number): { remaining: number; resetMs: number } {
  const cutoff = arrival - rate.windowMs;
  let lo = 0;
  let hi = rate.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rate.ring[(rate.head + mid) % rate.requests] > cutoff) hi = mid;
    else lo = mid + 1;
  }
  const inWindow = rate.count - lo;
  const resetMs = inWindow === 0 ? 0 : rate.ring[(rate.head + lo) % rate.requests] - cutoff;
  return { remaining: rate.requests - inWindow, resetMs: Math.max(0, resetMs) };
}

/** IMF-fixdate (`Wed, 21 Oct 2026 07:28:00 GMT`) of an epoch-ms time, rounded up to the whole second. */
function httpDate(epochMs: number): string {
  return new Date(Math.ceil(epochMs / 1000) * 1000).toUTCString();
}

/** Moves a host's in-flight integral up to `now` (call before in_flight changes). */
function advance(host: HostRuntime, now: number): void {
  const n = host.inFlight;
  if (n > 0) {
    const dt = now - host.since;
    host.area += n * dt;
    host.busy += dt;
  }
  host.since = now;
}

/** A request is done with the host (answered, reset, dropped). */
function leave(host: HostRuntime): void {
  advance(host, performance.now());
  host.inFlight--;
}

function renderVariants(host: HostRuntime, seed: number, index: number): PageVariants {
  const { spec, name } = host;
  const html = renderPage({
    host: name,
    index,
    pages: spec.pages,
    pageBytes: spec.page_bytes,
    seed,
    extraLinks: index === 0 ? host.homeLinks : undefined,
  });
  const body = Buffer.from(html);
  const vary = spec.gzip ? ['Vary', 'Accept-Encoding'] : [];
  const plain = canned(200, body, ['Content-Type', HTML, ...vary, ...host.extraHeaders]);
  const gzip = spec.gzip
    ? canned(200, gzipSync(body), ['Content-Type', HTML, 'Content-Encoding', 'gzip', ...vary, ...host.extraHeaders])
    : null;
  return { plain, gzip };
}

/** Host name of a Host header: lower-case, port and trailing dot removed. */
function hostOf(header: string | undefined): string {
  if (!header) return '';
  let end = header.length;
  if (header.charCodeAt(0) === 91 /* [ */) {
    const close = header.indexOf(']');
    if (close > 0) end = close + 1;
  } else {
    const colon = header.indexOf(':');
    if (colon >= 0) end = colon;
  }
  if (header.charCodeAt(end - 1) === 46 /* . */) end--;
  return header.slice(0, end).toLowerCase();
}

function listen(server: Server, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen({ host: address, port }, () => {
      server.off('error', onError);
      const bound = server.address();
      resolve(typeof bound === 'object' && bound ? bound.port : port);
    });
  });
}

/**
 * Starts serving a scenario (a parsed `Scenario` or raw input, validated here either way).
 * Resolves once every listener is bound; rejects with `ScenarioError` for an invalid scenario
 * or with the bind error (`EADDRINUSE`, `EADDRNOTAVAIL` …) after closing what was opened.
 */
export async function startTestSite(scenario: Scenario | ScenarioInput, options: TestSiteOptions = {}): Promise<TestSite> {
  const parsed = parseScenario(scenario);
  const log = await RequestLog.open(options.log, options.keepLog ?? false);
  const budget = { left: PRECOMPUTE_BUDGET };
  const runtimes = new Map<string, HostRuntime>();
  for (const [name, spec] of Object.entries(parsed.hosts)) runtimes.set(name, buildHost(name, spec, parsed.seed, budget));

  let closed = false;
  let t0 = performance.now();

  // Answers a request once its latency has passed. Also the zero-latency hot path.
  const deliver = (host: HostRuntime, res: ServerResponse, answer: Canned, t: number, url: string, inFlight: number): void => {
    leave(host);
    if (closed) return;
    const alive = !res.req.socket.destroyed;
    if (alive) {
      res.writeHead(answer.status, answer.headers as string[]);
      res.end(answer.body);
    }
    if (log.active) log.add(t, host.name, url, inFlight, alive ? answer.status : 0);
  };

  // `deliver` for an answer of a host policy: per-response headers, a Retry-After to announce, a log mark.
  const deliverWith = (
    host: HostRuntime,
    res: ServerResponse,
    answer: Canned,
    t: number,
    url: string,
    inFlight: number,
    extra: string[] | null,
    flags: number,
  ): void => {
    leave(host);
    if (closed) return;
    const alive = !res.req.socket.destroyed;
    if (alive) {
      let headers = answer.headers as string[];
      if (extra !== null) headers = headers.concat(extra);
      if ((flags & (RATE_REFUSAL | QUOTA_REFUSAL)) !== 0) headers = announce(host, t, flags, headers);
      res.writeHead(answer.status, headers);
      res.end(answer.body);
    }
    const mark: LogMark | undefined = (flags & BLOCKED) !== 0 ? 'blocked' : (flags & SOFT) !== 0 ? 'soft_blocked' : undefined;
    if (log.active) log.add(t, host.name, url, inFlight, alive ? answer.status : 0, mark);
  };

  // Records the Retry-After block a refusal announces as it is sent, and adds the clock-dependent header.
  const announce = (host: HostRuntime, t: number, flags: number, headers: string[]): string[] => {
    const policy = host.policy!;
    const sent = performance.now() - t0;
    let seconds: number;
    if ((flags & RATE_REFUSAL) !== 0) {
      seconds = policy.retryAfter;
      if (seconds < 0) return headers;
      if (policy.httpDate) headers = headers.concat('Retry-After', httpDate(Date.now() + seconds * 1000));
    } else {
      const windowMs = policy.quota!.windowMs;
      seconds = Math.max(0, Math.ceil(((Math.floor(t / windowMs) + 1) * windowMs - sent) / 1000));
      headers = headers.concat('Retry-After', String(seconds));
    }
    const to = sent + seconds * 1000;
    const from = Math.round(sent * 1000) / 1000;
    host.blocks.push(from, from + seconds * 1000);
    if (to > host.blockUntil) host.blockUntil = to;
    return headers;
  };

  const reset = (host: HostRuntime, req: IncomingMessage, t: number, url: string, inFlight: number): void => {
    leave(host);
    req.socket.destroy();
    if (!closed && log.active) log.add(t, host.name, url, inFlight, 0);
  };

  const stream = (host: HostRuntime, req: IncomingMessage, res: ServerResponse, o: Override & { kind: 'big' }, t: number, url: string, inFlight: number): void => {
    if (closed || req.socket.destroyed) {
      leave(host);
      if (!closed && log.active) log.add(t, host.name, url, inFlight, 0);
      return;
    }
    res.once('close', () => {
      leave(host);
      if (log.active) log.add(t, host.name, url, inFlight, 200);
    });
    res.writeHead(200, o.headers as string[]);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const chunk = Buffer.alloc(Math.min(BIG_CHUNK, Math.max(o.size, 1)), 0x20);
    let left = o.size;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          if (left > 0) res.once('drain', pump);
          else res.end();
          return;
        }
      }
      res.end();
    };
    pump();
  };

  // A scripted body: its parts written in order, each repeated as planned, with backpressure.
  const sendBody = (host: HostRuntime, req: IncomingMessage, res: ServerResponse, plan: BodyPlan, t: number, url: string, inFlight: number): void => {
    if (closed || req.socket.destroyed) {
      leave(host);
      if (!closed && log.active) log.add(t, host.name, url, inFlight, 0);
      return;
    }
    res.once('close', () => {
      leave(host);
      if (log.active) log.add(t, host.name, url, inFlight, res.writableFinished ? plan.status : 0);
    });
    res.writeHead(plan.status, plan.headers as string[]);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    let part = 0;
    let left = plan.parts.length > 0 ? plan.parts[0].times : 0;
    const pump = (): void => {
      while (part < plan.parts.length) {
        if (left === 0) {
          part++;
          left = part < plan.parts.length ? plan.parts[part].times : 0;
          continue;
        }
        left--;
        if (!res.write(plan.parts[part].bytes)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  };

  const handle = (listener: ListenerRuntime, req: IncomingMessage, res: ServerResponse): void => {
    const arrival = performance.now();
    const url = req.url ?? '/';
    const name = hostOf(req.headers.host);
    const host = listener.byName.get(name) ?? (name === listener.address ? listener.addressHost : undefined);
    if (host === undefined) {
      res.writeHead(unknownHost.status, unknownHost.headers as string[]);
      res.end(unknownHost.body);
      if (log.active) log.add(arrival - t0, name, url, 1, 404);
      return;
    }
    advance(host, arrival);
    const inFlight = ++host.inFlight;
    if (inFlight > host.peak) host.peak = inFlight;
    host.arrivals++;
    const t = arrival - t0;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);

    let delay = host.base + host.perInflight * (inFlight - 1);
    if (host.jitter > 0) delay += host.jitter * (2 * host.jitterRandom() - 1);

    const override = host.overrides.get(path);
    if (override !== undefined) {
      switch (override.kind) {
        case 'hang':
          res.once('close', () => {
            leave(host);
            if (log.active) log.add(t, host.name, url, inFlight, 0);
          });
          return;
        case 'reset':
          if (delay > 0) setTimeout(reset, delay, host, req, t, url, inFlight).unref();
          else reset(host, req, t, url, inFlight);
          return;
        case 'big':
          if (delay > 0) setTimeout(stream, delay, host, req, res, override, t, url, inFlight).unref();
          else stream(host, req, res, override, t, url, inFlight);
          return;
        case 'body':
          if (delay > 0) setTimeout(sendBody, delay, host, req, res, override.plan, t, url, inFlight).unref();
          else sendBody(host, req, res, override.plan, t, url, inFlight);
          return;
        case 'send':
          if (delay > 0) setTimeout(deliver, delay, host, res, override.answer, t, url, inFlight).unref();
          else deliver(host, res, override.answer, t, url, inFlight);
          return;
      }
    }

    let answer: Canned;
    if (path === '/robots.txt') {
      if (host.robotsFailsLeft > 0) {
        host.robotsFailsLeft--;
        answer = host.robotsFail!;
      } else answer = host.robots;
    } else if (host.policy !== null) {
      servePolicy(host, host.policy, req, res, path, url, arrival, t, inFlight, delay);
      return;
    } else {
      answer = content(host, req, path);
    }
    if (delay > 0) setTimeout(deliver, delay, host, res, answer, t, url, inFlight).unref();
    else deliver(host, res, answer, t, url, inFlight);
  };

  // What a request for `path` gets when no limit stands in the way: a random status, the page, or a 404.
  const content = (host: HostRuntime, req: IncomingMessage, path: string): Canned => {
    if (host.statusCuts.length > 0) {
      const u = host.statusRandom();
      for (let i = 0; i < host.statusCuts.length; i++) {
        if (u < host.statusCuts[i]) return host.statusAnswers[i];
      }
    }
    const index = pageIndex(path, host.spec.pages);
    if (index >= 0) {
      const variants = host.pages ? host.pages[index]! : renderVariants(host, parsed.seed, index);
      const ae = req.headers['accept-encoding'];
      return variants.gzip !== null && ae !== undefined && ae.includes('gzip') ? variants.gzip : variants.plain;
    }
    if (host.disallowed !== null && host.disallowed(path)) {
      return canned(200, Buffer.from(renderDisallowedPage(host.name, path)), ['Content-Type', HTML, ...host.extraHeaders]);
    }
    return host.notFound;
  };

  // A request under the host's limits (robots.txt and per-path overrides are outside them): an
  // announced block, then the rate limit, then the quota, then the soft block decide.
  const servePolicy = (
    host: HostRuntime,
    policy: Policy,
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    url: string,
    arrival: number,
    t: number,
    inFlight: number,
    delay: number,
  ): void => {
    const { rate, quota, soft } = policy;
    let softHit = false;
    if (soft !== null) {
      soft.seen++;
      softHit = soft.seen > soft.after || arrival - soft.last < soft.minGap;
      soft.last = arrival;
    }
    const cost = quota === null ? 1 : costOf(quota, path);
    let answer: Canned | undefined;
    let flags = 0;
    if (policy.block && t < host.blockUntil) {
      answer = rate!.answer;
      flags = BLOCKED | RATE_REFUSAL;
    } else if (rate !== null && rate.count >= rate.requests && rate.ring[rate.head] > arrival - rate.windowMs) {
      answer = rate.answer;
      flags = RATE_REFUSAL;
    } else {
      if (quota !== null) {
        const window = Math.floor(t / quota.windowMs);
        if (window !== quota.window) {
          quota.window = window;
          quota.used = 0;
        }
        if (quota.used + cost > quota.units) {
          answer = quota.answer;
          flags = QUOTA_REFUSAL;
        } else quota.used += cost;
      }
      if (answer === undefined) {
        if (rate !== null) admit(rate, arrival);
        if (softHit) {
          answer = soft!.answer;
          flags = SOFT;
        } else answer = content(host, req, path);
      }
    }
    let extra: string[] | null = null;
    if (policy.rateHeaders !== 'none' && rate !== null) {
      const standing = rateStanding(rate, arrival);
      let { remaining, resetMs } = standing;
      if ((flags & BLOCKED) !== 0) {
        remaining = 0;
        resetMs = Math.max(resetMs, host.blockUntil - t);
      }
      extra =
        policy.rateHeaders === 'ratelimit'
          ? ['RateLimit-Limit', String(rate.requests), 'RateLimit-Remaining', String(remaining), 'RateLimit-Reset', String(Math.ceil(resetMs / 1000))]
          : [
              'X-RateLimit-Limit',
              String(rate.requests),
              'X-RateLimit-Remaining',
              String(remaining),
              'X-RateLimit-Reset',
              String(Math.ceil((Date.now() + resetMs) / 1000)),
            ];
    }
    if (quota !== null && quota.costHeader !== null) (extra ??= []).push(quota.costHeader, String(cost));
    if (extra === null && flags === 0) {
      if (delay > 0) setTimeout(deliver, delay, host, res, answer, t, url, inFlight).unref();
      else deliver(host, res, answer, t, url, inFlight);
    } else if (delay > 0) setTimeout(deliverWith, delay, host, res, answer, t, url, inFlight, extra, flags).unref();
    else deliverWith(host, res, answer, t, url, inFlight, extra, flags);
  };

  const unknownHost = statusAnswer(404, []);

  // Group hosts by the address that serves them; hosts without one share 127.0.0.1.
  const listeners = new Map<string, ListenerRuntime>();
  const listenerFor = (address: string): ListenerRuntime => {
    let l = listeners.get(address);
    if (!l) {
      l = { address, byName: new Map(), addressHost: undefined, server: null, port: 0 };
      listeners.set(address, l);
    }
    return l;
  };
  for (const host of runtimes.values()) listenerFor(host.spec.address ?? SHARED_ADDRESS).byName.set(host.name, host);
  for (const l of listeners.values()) {
    const own = [...l.byName.values()].filter((h) => h.spec.address === l.address);
    l.addressHost = own.length === 1 ? own[0] : undefined;
  }

  const makeServer = (l: ListenerRuntime): Server => {
    const server = createServer((req, res) => handle(l, req, res));
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 70_000;
    return server;
  };
  // Open connections, so close() can wait for their 'close' events (and the log lines of the
  // requests they drop): the server's own 'close' can fire before the sockets have closed.
  const sockets = new Set<Socket>();
  const socketsClosed = (): Promise<unknown> =>
    Promise.all([...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve))));
  const closeServer = (server: Server): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  try {
    // Own addresses first, so a failed one can still fall back to the shared listener.
    const ordered = [...listeners.values()].sort((a, b) => Number(a.address === SHARED_ADDRESS) - Number(b.address === SHARED_ADDRESS));
    for (const l of ordered) {
      const server = makeServer(l);
      try {
        l.port = await listen(server, l.address, parsed.port);
        l.server = server;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (!(options.loopbackFallback && code === 'EADDRNOTAVAIL' && l.address !== SHARED_ADDRESS)) throw err;
        listeners.delete(l.address);
        const shared = listenerFor(SHARED_ADDRESS);
        for (const [name, host] of l.byName) shared.byName.set(name, host);
        if (!ordered.includes(shared)) ordered.push(shared);
      }
    }
  } catch (err) {
    await Promise.all([...listeners.values()].flatMap((l) => (l.server ? [closeServer(l.server)] : [])));
    await socketsClosed();
    await log.close().catch(() => undefined);
    throw err;
  }
  t0 = performance.now();

  const hosts: Record<string, string> = {};
  const resolve: Record<string, string> = {};
  const ports: Record<string, number> = {};
  const listenerList: TestSiteListener[] = [];
  for (const l of listeners.values()) {
    listenerList.push({ address: l.address, port: l.port, hosts: [...l.byName.keys()] });
    for (const name of l.byName.keys()) {
      hosts[name] = l.addressHost?.name === name ? `http://${l.address}:${l.port}` : `http://${name}:${l.port}`;
      resolve[name] = l.address;
      ports[name] = l.port;
    }
  }

  const unknown = (host: string): Error =>
    new Error(`test site: unknown host ${JSON.stringify(host)} (known: ${Object.keys(ports).join(', ')})`);
  const runtimeOf = (host: string): HostRuntime => {
    const h = runtimes.get(host.toLowerCase());
    if (h === undefined) throw unknown(host);
    return h;
  };

  let closing: Promise<void> | null = null;
  return {
    hosts,
    resolve,
    ports,
    listeners: listenerList,
    scenario: parsed,
    log: log.entries,
    startedAt: performance.timeOrigin + t0,
    origin(host: string): string {
      const name = host.toLowerCase();
      if (!Object.hasOwn(ports, name)) throw unknown(host);
      return `http://${name}:${ports[name]}`;
    },
    blocks(host: string): BlockInterval[] {
      const pairs = runtimeOf(host).blocks;
      const out: BlockInterval[] = [];
      for (let i = 0; i < pairs.length; i += 2) out.push({ from: pairs[i], to: pairs[i + 1] });
      return out;
    },
    inFlightStats(host: string): InFlightStats {
      const h = runtimeOf(host);
      let { area, busy } = h;
      if (h.inFlight > 0) {
        const dt = performance.now() - h.since;
        area += h.inFlight * dt;
        busy += dt;
      }
      return { mean: busy > 0 ? area / busy : 0, max: h.peak, samples: h.arrivals };
    },
    close(): Promise<void> {
      closing ??= (async () => {
        await Promise.all([...listeners.values()].map((l) => closeServer(l.server!)));
        // Let the 'close' handlers of dropped requests log before the log shuts.
        await socketsClosed();
        closed = true;
        await log.close();
      })();
      return closing;
    },
  };
}
