// The test site's scenario file: what each simulated host serves and how badly it behaves.
// Validated once here, with errors naming the field, the value and what is allowed.

/** Response-time model of one host, in milliseconds. */
export interface LatencySpec {
  /** Fixed delay before the response headers are sent. */
  readonly base: number;
  /** Uniform noise added to `base`: a value in [-jitter, +jitter]. */
  readonly jitter: number;
  /** Extra delay per other request this host is serving at arrival (an overloadable server). */
  readonly per_inflight: number;
}

/** Sliding-window rate limit of one host. */
export interface RateLimitSpec {
  /** Requests admitted per window; the next ones get `status`. */
  readonly requests: number;
  /** Window length in seconds. */
  readonly per_seconds: number;
  /** Status of refused requests (default 429). */
  readonly status: number;
  /** Value of the `Retry-After` header in seconds; null sends no header. */
  readonly retry_after: number | null;
  /** How `Retry-After` is written: delta seconds (absent, the default) or an IMF-fixdate HTTP date. */
  readonly retry_after_format?: RetryAfterFormat;
  /** Rate-limit headers on every response the limit sees, admitted or refused; absent = none. */
  readonly headers?: RateLimitHeaders;
  /** While an announced Retry-After block lasts, refuse every request and log it `blocked: true`. */
  readonly block_while_retry_after?: boolean;
}

/** `seconds`: `Retry-After: 2`; `http-date`: `Retry-After: Wed, 21 Oct 2026 07:28:00 GMT`. */
export type RetryAfterFormat = 'seconds' | 'http-date';

/**
 * `ratelimit`: `RateLimit-Limit/-Remaining/-Reset` (reset in seconds from now);
 * `x-ratelimit`: `X-RateLimit-Limit/-Remaining/-Reset` (reset in epoch seconds).
 */
export type RateLimitHeaders = 'none' | 'ratelimit' | 'x-ratelimit';

/** Fixed-window budget of cost units (windows start when the site starts). */
export interface QuotaSpec {
  /** Units admitted per window; a request whose cost would exceed them gets `status`. */
  readonly units: number;
  /** Window length in seconds. */
  readonly per_seconds: number;
  /** Status of refused requests (default 429); they carry `Retry-After` until the next window. */
  readonly status: number;
  /** Header telling each response its cost; absent = none. */
  readonly cost_header?: string;
  /** Path → cost (default 1); a key ending in `*` is a prefix, the longest matching one wins. */
  readonly costs: Readonly<Record<string, number>>;
}

/** A quiet punishment: a small 200 page instead of the real one. */
export interface SoftBlockSpec {
  /** Soft-block every request after this many requests to the host. */
  readonly after?: number;
  /** Soft-block a request arriving less than this many ms after the previous one. */
  readonly min_gap_ms?: number;
  /** Body of the soft-block page. */
  readonly body: string;
}

/** What `/robots.txt` answers. */
export interface RobotsSpec {
  /** Status of `/robots.txt` (default 200). */
  readonly status: number;
  /** Raw body; when absent the body is generated from the fields below. */
  readonly body?: string;
  /** `Crawl-delay:` line, in seconds. */
  readonly crawl_delay?: number;
  /** `Disallow:` rules (paths; `*` and a trailing `$` as in robots.txt). */
  readonly disallow: readonly string[];
  /** `Allow:` rules. */
  readonly allow: readonly string[];
  /** Answer `status` to the first this-many requests, then the robots body with 200. */
  readonly fail_times?: number;
}

/** A scripted redirect. */
export interface RedirectSpec {
  /** `Location` header: a path on the same host or an absolute URL. */
  readonly to: string;
  /** 301 (default), 302, 303, 307 or 308. */
  readonly status: number;
}

/** Content-Encoding of a scripted body. */
export type BodyEncoding = 'identity' | 'gzip' | 'deflate' | 'br';

/**
 * A scripted body served at one path (hostile or unusual content: a huge page, a page of deeply
 * nested elements, a gzip bomb, a big robots.txt, a body in another charset). The body is
 * `head`, then `fill` repeated, then `tail`; it is generated while it is sent, so a body of
 * gigabytes costs the site no memory, and a compressed one is built from one compressed block of
 * `fill` repeated (a gzip bomb of 1 GiB is about 1 MB on the wire).
 */
export interface BodySpec {
  /** Sent first. */
  readonly head: string;
  /** Repeated after `head` (whole repetitions only) until the body reaches `bytes`; default a space. */
  readonly fill: string;
  /** Sent last. */
  readonly tail: string;
  /** Size of the body before compression, in bytes: head + tail + as many whole `fill` as fit. */
  readonly bytes: number;
  /** `head`, `fill` and `tail` are base64 bytes rather than text (for bodies in other charsets). */
  readonly base64: boolean;
  /** Content-Encoding to send (`identity`: none). */
  readonly encoding: BodyEncoding;
  /** Content-Type header; "" sends none. */
  readonly content_type: string;
  readonly status: number;
  /** Send Content-Length (default); false sends the body chunked, its size unknown until its end. */
  readonly content_length: boolean;
}

/** One simulated host, with every default filled in. */
export interface HostSpec {
  /** Loopback address (127.x.x.x) of a listener of its own; absent = the shared 127.0.0.1 listener. */
  readonly address?: string;
  /** Number of linked pages: `/` and `/page/1` … `/page/N-1`. */
  readonly pages: number;
  /** Approximate body size of each page in bytes. */
  readonly page_bytes: number;
  readonly latency_ms: LatencySpec;
  /** Status code → probability that a request is answered with it instead of the page. */
  readonly statuses: Readonly<Record<string, number>>;
  readonly rate_limit?: RateLimitSpec;
  /** Absent: `/robots.txt` is a 404. */
  readonly robots?: RobotsSpec;
  /** Extra headers on every response of this host except `/robots.txt`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Path → redirect. */
  readonly redirects: Readonly<Record<string, RedirectSpec>>;
  /** Gzip page bodies when the request accepts gzip. */
  readonly gzip: boolean;
  /** Path → size in bytes of a streamed body. */
  readonly big: Readonly<Record<string, number>>;
  /** Path → a scripted body (`/robots.txt` too: it then replaces the robots answer). */
  readonly bodies: Readonly<Record<string, BodySpec>>;
  /** Paths that never answer until the client gives up or the server closes. */
  readonly hang: readonly string[];
  /** Paths whose socket is destroyed without a response. */
  readonly reset: readonly string[];
  readonly quota?: QuotaSpec;
  readonly soft_block?: SoftBlockSpec;
  readonly description?: string;
}

/** A validated scenario (the output of `parseScenario`; also valid input to it). */
export interface Scenario {
  /** Lower-case host name → host. */
  readonly hosts: Readonly<Record<string, HostSpec>>;
  /** 0 = a random port per listener; otherwise every listener binds this port. */
  readonly port: number;
  /** Seed of every random draw (jitter, statuses, filler text). */
  readonly seed: number;
  readonly description?: string;
}

/** Input form of a host: every field optional. */
export interface HostInput {
  readonly address?: string;
  readonly pages?: number;
  readonly page_bytes?: number;
  /** A number is shorthand for `{ base: n }`. */
  readonly latency_ms?: number | Partial<LatencySpec>;
  readonly statuses?: Readonly<Record<string, number>>;
  readonly rate_limit?: {
    readonly requests: number;
    readonly per_seconds?: number;
    readonly status?: number;
    readonly retry_after?: number | null;
    readonly retry_after_format?: RetryAfterFormat;
    readonly headers?: RateLimitHeaders;
    readonly block_while_retry_after?: boolean;
  };
  readonly robots?: {
    readonly status?: number;
    readonly body?: string;
    readonly crawl_delay?: number;
    readonly disallow?: readonly string[];
    readonly allow?: readonly string[];
    readonly fail_times?: number;
  };
  readonly headers?: Readonly<Record<string, string | number>>;
  /** A string is shorthand for `{ to: s, status: 301 }`. */
  readonly redirects?: Readonly<Record<string, string | { readonly to: string; readonly status?: number }>>;
  readonly gzip?: boolean;
  readonly big?: Readonly<Record<string, number>>;
  readonly bodies?: Readonly<Record<string, BodyInput>>;
  readonly hang?: readonly string[];
  readonly reset?: readonly string[];
  readonly quota?: {
    readonly units: number;
    readonly per_seconds?: number;
    readonly status?: number;
    readonly cost_header?: string;
    readonly costs?: Readonly<Record<string, number>>;
  };
  /** Exactly one of `after` and `min_gap_ms`. */
  readonly soft_block?: {
    readonly after?: number;
    readonly min_gap_ms?: number;
    readonly body?: string;
  };
  readonly description?: string;
}

/** Input form of a scripted body: every field optional. */
export interface BodyInput {
  readonly head?: string;
  readonly fill?: string;
  readonly tail?: string;
  readonly bytes?: number;
  readonly base64?: boolean;
  readonly encoding?: BodyEncoding;
  readonly content_type?: string;
  readonly status?: number;
  readonly content_length?: boolean;
}

/** Input form of a scenario (the JSON file). */
export interface ScenarioInput {
  readonly hosts: Readonly<Record<string, HostInput>>;
  readonly port?: number;
  readonly seed?: number;
  readonly description?: string;
}

/** Defaults of a host's optional fields. */
export const HOST_DEFAULTS = { pages: 20, page_bytes: 1000 } as const;

/** Thrown by `parseScenario`; `issues` holds one line per invalid field. */
export class ScenarioError extends Error {
  /** One message per problem, each starting with the field path. */
  readonly issues: readonly string[];

  constructor(issues: readonly string[]) {
    super(`invalid test-site scenario:\n  ${issues.join('\n  ')}`);
    this.name = 'ScenarioError';
    this.issues = issues;
  }
}

const HOST_FIELDS = [
  'address',
  'pages',
  'page_bytes',
  'latency_ms',
  'statuses',
  'rate_limit',
  'robots',
  'headers',
  'redirects',
  'gzip',
  'big',
  'bodies',
  'hang',
  'reset',
  'quota',
  'soft_block',
  'description',
] as const;
const TOP_FIELDS = ['hosts', 'port', 'seed', 'description'] as const;
const LATENCY_FIELDS = ['base', 'jitter', 'per_inflight'] as const;
const RATE_FIELDS = ['requests', 'per_seconds', 'status', 'retry_after', 'retry_after_format', 'headers', 'block_while_retry_after'] as const;
const RETRY_AFTER_FORMATS = ['seconds', 'http-date'] as const;
const RATE_LIMIT_HEADERS = ['none', 'ratelimit', 'x-ratelimit'] as const;
/** Header names each `rate_limit.headers` style sets on its own. */
const RATE_HEADER_NAMES: Readonly<Record<RateLimitHeaders, readonly string[]>> = {
  none: [],
  ratelimit: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  'x-ratelimit': ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
};
const QUOTA_FIELDS = ['units', 'per_seconds', 'status', 'cost_header', 'costs'] as const;
const SOFT_BLOCK_FIELDS = ['after', 'min_gap_ms', 'body'] as const;
/** Body of a soft-block page when the scenario gives none. */
export const SOFT_BLOCK_BODY = '<!doctype html>\n<html><head><title>please slow down</title></head><body><p>please slow down</p></body></html>\n';
const ROBOTS_FIELDS = ['status', 'body', 'crawl_delay', 'disallow', 'allow', 'fail_times'] as const;
const REDIRECT_FIELDS = ['to', 'status'] as const;
const BODY_FIELDS = ['head', 'fill', 'tail', 'bytes', 'base64', 'encoding', 'content_type', 'status', 'content_length'] as const;
const BODY_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'] as const;
/** Content-Type of a scripted body when the scenario gives none. */
export const BODY_CONTENT_TYPE = 'text/html; charset=utf-8';
/** Largest brotli body: brotli is compressed whole when the site starts, not block by block. */
const MAX_BR_BYTES = 64 * 1024 * 1024;
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
/** Headers the server owns: a scenario setting them would break the message framing. */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'content-encoding', 'keep-alive']);
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_PAGES = 10_000_000;
const MAX_PAGE_BYTES = 50_000_000;
const MAX_BIG_BYTES = 1e12;

interface NumberRule {
  readonly int?: boolean;
  readonly min?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  readonly max?: number;
}

/** Collects issues while walking the input. */
class Checker {
  readonly issues: string[] = [];

  reject(path: string, value: unknown, allowed: string): void {
    this.issues.push(`${path}: ${show(value)} is not allowed (${allowed})`);
  }

  missing(path: string, allowed: string): void {
    this.issues.push(`${path}: is required (${allowed})`);
  }

  object(path: string, value: unknown, fields: readonly string[] | null): Record<string, unknown> | undefined {
    if (!isPlainObject(value)) {
      this.reject(path, value, 'an object');
      return undefined;
    }
    if (fields) {
      for (const key of Object.keys(value)) {
        if (!fields.includes(key)) this.issues.push(`${child(path, key)}: is not a known field (allowed: ${fields.join(', ')})`);
      }
    }
    return value;
  }

  number(path: string, value: unknown, rule: NumberRule): number | undefined {
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!rule.int || Number.isSafeInteger(value)) &&
      (rule.min === undefined || value >= rule.min) &&
      (rule.above === undefined || value > rule.above) &&
      (rule.max === undefined || value <= rule.max);
    if (ok) return value as number;
    this.reject(path, value, describe(rule));
    return undefined;
  }

  string(path: string, value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    this.reject(path, value, 'a string');
    return undefined;
  }

  boolean(path: string, value: unknown): boolean | undefined {
    if (typeof value === 'boolean') return value;
    this.reject(path, value, 'true or false');
    return undefined;
  }

  oneOf<T extends string>(path: string, value: unknown, options: readonly T[]): T | undefined {
    if (options.includes(value as T)) return value as T;
    this.reject(path, value, `one of ${options.map((o) => JSON.stringify(o)).join(', ')}`);
    return undefined;
  }

  /** A response header name the scenario may set (not one the server owns for the framing). */
  headerName(path: string, name: unknown, what = 'a header name'): string | undefined {
    if (typeof name !== 'string' || !HEADER_NAME.test(name)) {
      this.issues.push(`${path}: ${show(name)} is not allowed as ${what} (letters, digits and !#$%&'*+.^_\`|~-)`);
      return undefined;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      this.issues.push(`${path}: ${show(name)} is not allowed as ${what} (the server sets ${[...RESERVED_HEADERS].join(', ')} itself)`);
      return undefined;
    }
    return name;
  }

  /** A request path used for exact routing: starts with `/`, no query, fragment or spaces. */
  routePath(path: string, value: unknown): string | undefined {
    if (typeof value === 'string' && /^\/[^\s?#]*$/.test(value)) return value;
    this.reject(path, value, 'a path starting with "/", without "?", "#" or spaces');
    return undefined;
  }

  pathList(path: string, value: unknown): string[] {
    if (!Array.isArray(value)) {
      this.reject(path, value, 'an array of paths');
      return [];
    }
    const out: string[] = [];
    value.forEach((item, i) => {
      const p = this.routePath(`${path}[${i}]`, item);
      if (p !== undefined) out.push(p);
    });
    return out;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  let text: string;
  try {
    text = typeof value === 'number' ? String(value) : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function child(path: string, key: string): string {
  const name = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return path === '' ? name.replace(/^\./, '') : `${path}${name}`;
}

/** Path of an entry in a map whose keys are data (status codes, header names, paths). */
function entry(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

function describe(rule: NumberRule): string {
  const kind = rule.int ? 'an integer' : 'a number';
  if (rule.min !== undefined && rule.max !== undefined) return `${kind} from ${rule.min} to ${rule.max}`;
  if (rule.above !== undefined) return `${kind} > ${rule.above}`;
  if (rule.min !== undefined) return `${kind} >= ${rule.min}`;
  if (rule.max !== undefined) return `${kind} <= ${rule.max}`;
  return kind;
}

function parseAddress(c: Checker, path: string, value: unknown): string | undefined {
  const allowed = 'a loopback IPv4 address 127.x.x.x';
  if (typeof value !== 'string') {
    c.reject(path, value, allowed);
    return undefined;
  }
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (!m || m[1] !== '127' || m.slice(1).some((o) => Number(o) > 255 || (o.length > 1 && o.startsWith('0')))) {
    c.reject(path, value, allowed);
    return undefined;
  }
  return value;
}

function parseLatency(c: Checker, path: string, value: unknown): LatencySpec {
  const out = { base: 0, jitter: 0, per_inflight: 0 };
  if (typeof value === 'number') {
    out.base = c.number(path, value, { min: 0 }) ?? 0;
    return out;
  }
  if (!isPlainObject(value)) {
    c.reject(path, value, 'a number >= 0 or an object with base, jitter, per_inflight');
    return out;
  }
  const o = c.object(path, value, LATENCY_FIELDS) ?? {};
  for (const key of LATENCY_FIELDS) {
    if (o[key] !== undefined) out[key] = c.number(child(path, key), o[key], { min: 0 }) ?? 0;
  }
  return out;
}

function parseStatuses(c: Checker, path: string, value: unknown): Record<string, number> {
  const o = c.object(path, value, null);
  const out: Record<string, number> = {};
  if (!o) return out;
  let sum = 0;
  for (const [key, p] of Object.entries(o)) {
    const code = Number(key);
    if (!/^\d{3}$/.test(key) || code < 200 || code > 599) {
      c.issues.push(`${entry(path, key)}: ${show(key)} is not allowed as a key (a status code from 200 to 599)`);
      continue;
    }
    const prob = c.number(entry(path, key), p, { min: 0, max: 1 });
    if (prob === undefined) continue;
    out[key] = prob;
    sum += prob;
  }
  if (sum > 1 + 1e-9) c.reject(path, value, `probabilities adding up to at most 1, these add up to ${Number(sum.toFixed(6))}`);
  return out;
}

function parseRateLimit(c: Checker, path: string, value: unknown): RateLimitSpec | undefined {
  const o = c.object(path, value, RATE_FIELDS);
  if (!o) return undefined;
  let requests: number | undefined;
  if (o.requests === undefined) c.missing(child(path, 'requests'), 'an integer >= 1');
  else requests = c.number(child(path, 'requests'), o.requests, { int: true, min: 1 });
  const perSeconds = o.per_seconds === undefined ? 1 : c.number(child(path, 'per_seconds'), o.per_seconds, { above: 0 });
  const status = o.status === undefined ? 429 : c.number(child(path, 'status'), o.status, { int: true, min: 400, max: 599 });
  let retryAfter: number | null | undefined = null;
  if (o.retry_after === undefined) retryAfter = Math.ceil(perSeconds ?? 1);
  else if (o.retry_after !== null) {
    retryAfter = c.number(child(path, 'retry_after'), o.retry_after, { int: true, min: 0 });
  }
  const out: { -readonly [K in keyof RateLimitSpec]: RateLimitSpec[K] } = {
    requests: requests ?? 1,
    per_seconds: perSeconds ?? 1,
    status: status ?? 429,
    retry_after: retryAfter ?? null,
  };
  // Defaults stay absent, so a scenario without the newer fields parses to what it always did.
  if (o.retry_after_format !== undefined) {
    const format = c.oneOf(child(path, 'retry_after_format'), o.retry_after_format, RETRY_AFTER_FORMATS);
    if (format === 'http-date' && retryAfter === null) {
      c.reject(child(path, 'retry_after_format'), format, 'only with a retry_after: retry_after null sends no Retry-After');
    } else if (format === 'http-date') out.retry_after_format = format;
  }
  if (o.headers !== undefined) {
    const headers = c.oneOf(child(path, 'headers'), o.headers, RATE_LIMIT_HEADERS);
    if (headers !== undefined && headers !== 'none') out.headers = headers;
  }
  if (o.block_while_retry_after !== undefined) {
    if (c.boolean(child(path, 'block_while_retry_after'), o.block_while_retry_after)) out.block_while_retry_after = true;
  }
  if (requests === undefined || perSeconds === undefined || status === undefined || retryAfter === undefined) return undefined;
  return out;
}

/** A `quota.costs` key: a route path, or a prefix ending in `*`. */
const COST_KEY = /^\/[^\s?#*]*\*?$/;

function parseQuota(c: Checker, path: string, value: unknown): QuotaSpec | undefined {
  const o = c.object(path, value, QUOTA_FIELDS);
  if (!o) return undefined;
  let units: number | undefined;
  if (o.units === undefined) c.missing(child(path, 'units'), 'an integer >= 1');
  else units = c.number(child(path, 'units'), o.units, { int: true, min: 1 });
  const perSeconds = o.per_seconds === undefined ? 1 : c.number(child(path, 'per_seconds'), o.per_seconds, { above: 0 });
  const status = o.status === undefined ? 429 : c.number(child(path, 'status'), o.status, { int: true, min: 400, max: 599 });
  const quota: { -readonly [K in keyof QuotaSpec]: QuotaSpec[K] } = { units: units ?? 1, per_seconds: perSeconds ?? 1, status: status ?? 429, costs: {} };
  if (o.cost_header !== undefined) {
    const name = c.headerName(child(path, 'cost_header'), o.cost_header);
    if (name !== undefined && name.toLowerCase() === 'retry-after') {
      c.reject(child(path, 'cost_header'), name, 'a header name other than Retry-After, which the quota sets itself');
    } else if (name !== undefined) quota.cost_header = name;
  }
  if (o.costs !== undefined) {
    const costs = c.object(child(path, 'costs'), o.costs, null) ?? {};
    const costPath = child(path, 'costs');
    // A cost above the units could never be admitted: surely a typo.
    const rule: NumberRule = units === undefined ? { int: true, min: 0 } : { int: true, min: 0, max: units };
    for (const [key, cost] of Object.entries(costs)) {
      if (!COST_KEY.test(key)) {
        c.reject(`${entry(costPath, key)} (key)`, key, 'a path starting with "/", or a prefix ending in "*", without "?", "#" or spaces');
        continue;
      }
      const n = c.number(entry(costPath, key), cost, rule);
      if (n !== undefined) (quota.costs as Record<string, number>)[key] = n;
    }
  }
  if (units === undefined || perSeconds === undefined || status === undefined) return undefined;
  return quota;
}

function parseSoftBlock(c: Checker, path: string, value: unknown): SoftBlockSpec | undefined {
  const o = c.object(path, value, SOFT_BLOCK_FIELDS);
  if (!o) return undefined;
  const soft: { -readonly [K in keyof SoftBlockSpec]: SoftBlockSpec[K] } = { body: SOFT_BLOCK_BODY };
  if ((o.after === undefined) === (o.min_gap_ms === undefined)) {
    c.reject(path, value, 'exactly one of after and min_gap_ms');
    return undefined;
  }
  let ok = true;
  if (o.after !== undefined) {
    const after = c.number(child(path, 'after'), o.after, { int: true, min: 0 });
    if (after === undefined) ok = false;
    else soft.after = after;
  }
  if (o.min_gap_ms !== undefined) {
    const gap = c.number(child(path, 'min_gap_ms'), o.min_gap_ms, { above: 0 });
    if (gap === undefined) ok = false;
    else soft.min_gap_ms = gap;
  }
  if (o.body !== undefined) {
    const body = c.string(child(path, 'body'), o.body);
    if (body === undefined) ok = false;
    else soft.body = body;
  }
  return ok ? soft : undefined;
}

function parseRules(c: Checker, path: string, value: unknown): string[] {
  if (!Array.isArray(value)) {
    c.reject(path, value, 'an array of robots.txt paths');
    return [];
  }
  const out: string[] = [];
  value.forEach((item, i) => {
    if (typeof item === 'string' && /^([/*][^\s]*)?$/.test(item)) out.push(item);
    else c.reject(`${path}[${i}]`, item, 'a path starting with "/" or "*", or "" (no spaces)');
  });
  return out;
}

function parseRobots(c: Checker, path: string, value: unknown): RobotsSpec | undefined {
  const o = c.object(path, value, ROBOTS_FIELDS);
  if (!o) return undefined;
  const status = o.status === undefined ? 200 : c.number(child(path, 'status'), o.status, { int: true, min: 200, max: 599 });
  const robots: { -readonly [K in keyof RobotsSpec]: RobotsSpec[K] } = {
    status: status ?? 200,
    disallow: o.disallow === undefined ? [] : parseRules(c, child(path, 'disallow'), o.disallow),
    allow: o.allow === undefined ? [] : parseRules(c, child(path, 'allow'), o.allow),
  };
  if (o.body !== undefined) {
    const body = c.string(child(path, 'body'), o.body);
    if (body !== undefined) robots.body = body;
  }
  if (o.crawl_delay !== undefined) {
    const delay = c.number(child(path, 'crawl_delay'), o.crawl_delay, { min: 0 });
    if (delay !== undefined) robots.crawl_delay = delay;
  }
  if (o.fail_times !== undefined) {
    const times = c.number(child(path, 'fail_times'), o.fail_times, { int: true, min: 0 });
    if (times !== undefined && status === 200) {
      c.reject(child(path, 'fail_times'), times, 'only with a robots.status other than 200: the status of the failing answers');
    } else if (times !== undefined) robots.fail_times = times;
  }
  return robots;
}

function parseHeaders(c: Checker, path: string, value: unknown): Record<string, string> {
  const o = c.object(path, value, null);
  const out: Record<string, string> = {};
  if (!o) return out;
  for (const [name, v] of Object.entries(o)) {
    const p = entry(path, name);
    if (c.headerName(p, name) === undefined) continue;
    if ((typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) && !/[\r\n\0]/.test(String(v))) {
      out[name] = String(v);
    } else {
      c.reject(p, v, 'a string or number without line breaks');
    }
  }
  return out;
}

function parseRedirects(c: Checker, path: string, value: unknown): Record<string, RedirectSpec> {
  const o = c.object(path, value, null);
  const out: Record<string, RedirectSpec> = {};
  if (!o) return out;
  const target = (p: string, v: unknown): string | undefined => {
    if (typeof v === 'string' && v.length > 0 && !/[\s]/.test(v)) return v;
    c.reject(p, v, 'a non-empty path or URL without spaces');
    return undefined;
  };
  for (const [from, v] of Object.entries(o)) {
    const p = entry(path, from);
    if (c.routePath(`${p} (key)`, from) === undefined) continue;
    if (typeof v === 'string') {
      const to = target(p, v);
      if (to !== undefined) out[from] = { to, status: 301 };
      continue;
    }
    if (!isPlainObject(v)) {
      c.reject(p, v, 'a path or URL, or an object { to, status }');
      continue;
    }
    c.object(p, v, REDIRECT_FIELDS);
    const to = v.to === undefined ? (c.missing(child(p, 'to'), 'a path or URL'), undefined) : target(child(p, 'to'), v.to);
    let status: number | undefined = 301;
    if (v.status !== undefined) {
      status = REDIRECT_STATUSES.includes(v.status as number) ? (v.status as number) : undefined;
      if (status === undefined) c.reject(child(p, 'status'), v.status, REDIRECT_STATUSES.join(', '));
    }
    if (to !== undefined && status !== undefined) out[from] = { to, status };
  }
  return out;
}

function parseBig(c: Checker, path: string, value: unknown): Record<string, number> {
  const o = c.object(path, value, null);
  const out: Record<string, number> = {};
  if (!o) return out;
  for (const [p, size] of Object.entries(o)) {
    if (c.routePath(`${entry(path, p)} (key)`, p) === undefined) continue;
    const n = c.number(entry(path, p), size, { int: true, min: 0, max: MAX_BIG_BYTES });
    if (n !== undefined) out[p] = n;
  }
  return out;
}

/** Length in bytes of a body part given as text or base64. */
function partBytes(text: string, base64: boolean): number {
  return base64 ? Buffer.from(text, 'base64').length : Buffer.byteLength(text);
}

function parseBody(c: Checker, path: string, value: unknown): BodySpec | undefined {
  const o = c.object(path, value, BODY_FIELDS);
  if (!o) return undefined;
  let ok = true;
  const base64 = o.base64 === undefined ? false : c.boolean(child(path, 'base64'), o.base64);
  if (base64 === undefined) ok = false;
  const part = (key: 'head' | 'fill' | 'tail', fallback: string): string => {
    if (o[key] === undefined) return fallback;
    const text = c.string(child(path, key), o[key]);
    if (text === undefined) {
      ok = false;
      return fallback;
    }
    if (base64 && !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
      c.reject(child(path, key), text, 'base64 text (base64 is true)');
      ok = false;
    }
    return text;
  };
  const head = part('head', '');
  const fill = part('fill', base64 ? 'IA==' : ' ');
  const tail = part('tail', '');
  const fillBytes = partBytes(fill, base64 ?? false);
  if (ok && fillBytes === 0) {
    c.reject(child(path, 'fill'), fill, 'at least one byte');
    ok = false;
  }
  const edges = partBytes(head, base64 ?? false) + partBytes(tail, base64 ?? false);
  let bytes = edges;
  if (o.bytes !== undefined) {
    const n = c.number(child(path, 'bytes'), o.bytes, { int: true, min: edges, max: MAX_BIG_BYTES });
    if (n === undefined) ok = false;
    else bytes = n;
  }
  const encoding = o.encoding === undefined ? 'identity' : c.oneOf(child(path, 'encoding'), o.encoding, BODY_ENCODINGS);
  if (encoding === undefined) ok = false;
  else if (encoding === 'br' && bytes > MAX_BR_BYTES) {
    c.reject(child(path, 'bytes'), bytes, `at most ${MAX_BR_BYTES} with encoding "br" (compressed whole; gzip and deflate have no limit)`);
    ok = false;
  }
  let contentType: string = BODY_CONTENT_TYPE;
  if (o.content_type !== undefined) {
    const ct = c.string(child(path, 'content_type'), o.content_type);
    if (ct === undefined || /[\r\n\0]/.test(ct)) {
      if (ct !== undefined) c.reject(child(path, 'content_type'), ct, 'a header value without line breaks');
      ok = false;
    } else contentType = ct;
  }
  const status = o.status === undefined ? 200 : c.number(child(path, 'status'), o.status, { int: true, min: 200, max: 599 });
  if (status === undefined) ok = false;
  const contentLength = o.content_length === undefined ? true : c.boolean(child(path, 'content_length'), o.content_length);
  if (contentLength === undefined) ok = false;
  if (!ok) return undefined;
  return {
    head,
    fill,
    tail,
    bytes,
    base64: base64!,
    encoding: encoding!,
    content_type: contentType,
    status: status!,
    content_length: contentLength!,
  };
}

function parseBodies(c: Checker, path: string, value: unknown): Record<string, BodySpec> {
  const o = c.object(path, value, null);
  const out: Record<string, BodySpec> = Object.create(null) as Record<string, BodySpec>;
  if (!o) return out;
  for (const [p, v] of Object.entries(o)) {
    if (c.routePath(`${entry(path, p)} (key)`, p) === undefined) continue;
    const body = parseBody(c, entry(path, p), v);
    if (body) out[p] = body;
  }
  return out;
}

function parseHost(c: Checker, path: string, value: unknown): HostSpec | undefined {
  const o = c.object(path, value, HOST_FIELDS);
  if (!o) return undefined;
  const host: { -readonly [K in keyof HostSpec]: HostSpec[K] } = {
    pages: HOST_DEFAULTS.pages,
    page_bytes: HOST_DEFAULTS.page_bytes,
    latency_ms: { base: 0, jitter: 0, per_inflight: 0 },
    statuses: {},
    headers: {},
    redirects: {},
    gzip: false,
    big: {},
    bodies: {},
    hang: [],
    reset: [],
  };
  const at = (key: string): string => child(path, key);
  if (o.address !== undefined) host.address = parseAddress(c, at('address'), o.address);
  if (host.address === undefined) delete host.address;
  if (o.pages !== undefined) host.pages = c.number(at('pages'), o.pages, { int: true, min: 0, max: MAX_PAGES }) ?? host.pages;
  if (o.page_bytes !== undefined) {
    host.page_bytes = c.number(at('page_bytes'), o.page_bytes, { int: true, min: 0, max: MAX_PAGE_BYTES }) ?? host.page_bytes;
  }
  if (o.latency_ms !== undefined) host.latency_ms = parseLatency(c, at('latency_ms'), o.latency_ms);
  if (o.statuses !== undefined) host.statuses = parseStatuses(c, at('statuses'), o.statuses);
  if (o.rate_limit !== undefined) {
    const rl = parseRateLimit(c, at('rate_limit'), o.rate_limit);
    if (rl) host.rate_limit = rl;
  }
  if (o.robots !== undefined) {
    const robots = parseRobots(c, at('robots'), o.robots);
    if (robots) host.robots = robots;
  }
  if (o.headers !== undefined) host.headers = parseHeaders(c, at('headers'), o.headers);
  if (o.redirects !== undefined) host.redirects = parseRedirects(c, at('redirects'), o.redirects);
  if (o.gzip !== undefined) host.gzip = c.boolean(at('gzip'), o.gzip) ?? false;
  if (o.big !== undefined) host.big = parseBig(c, at('big'), o.big);
  if (o.bodies !== undefined) host.bodies = parseBodies(c, at('bodies'), o.bodies);
  if (o.hang !== undefined) host.hang = c.pathList(at('hang'), o.hang);
  if (o.reset !== undefined) host.reset = c.pathList(at('reset'), o.reset);
  if (o.quota !== undefined) {
    const quota = parseQuota(c, at('quota'), o.quota);
    if (quota) host.quota = quota;
  }
  if (o.soft_block !== undefined) {
    const soft = parseSoftBlock(c, at('soft_block'), o.soft_block);
    if (soft) host.soft_block = soft;
  }
  if (o.description !== undefined) {
    const d = c.string(at('description'), o.description);
    if (d !== undefined) host.description = d;
  }
  // One behaviour per path: the per-path overrides must not overlap.
  const owner = new Map<string, string>();
  const claim = (p: string, field: string): void => {
    const prev = owner.get(p);
    if (prev && prev !== field) {
      c.issues.push(`${at(field)}: ${show(p)} is not allowed (already listed under ${prev}; one behaviour per path)`);
    } else owner.set(p, field);
  };
  for (const p of host.reset) claim(p, 'reset');
  for (const p of host.hang) claim(p, 'hang');
  for (const p of Object.keys(host.redirects)) claim(p, 'redirects');
  for (const p of Object.keys(host.big)) claim(p, 'big');
  for (const p of Object.keys(host.bodies)) claim(p, 'bodies');
  // Headers the limits set per response must not also come from `headers`: they would repeat.
  const rl = host.rate_limit;
  const dynamic = new Map<string, string>();
  for (const name of RATE_HEADER_NAMES[rl?.headers ?? 'none']) dynamic.set(name.toLowerCase(), 'rate_limit.headers');
  if (rl?.retry_after_format === 'http-date') dynamic.set('retry-after', 'rate_limit.retry_after_format');
  if (host.quota) dynamic.set('retry-after', 'quota');
  if (host.quota?.cost_header !== undefined) dynamic.set(host.quota.cost_header.toLowerCase(), 'quota.cost_header');
  for (const name of Object.keys(host.headers)) {
    const by = dynamic.get(name.toLowerCase());
    if (by) c.issues.push(`${entry(at('headers'), name)}: ${show(name)} is not allowed as a header name (${by} sets it on each response)`);
  }
  if (rl?.block_while_retry_after && rl.retry_after === null && !host.quota) {
    c.reject(child(at('rate_limit'), 'block_while_retry_after'), true, 'only when a Retry-After is sent: retry_after is null and there is no quota');
  }
  return host;
}

/**
 * Validates a scenario (parsed JSON or a `ScenarioInput` literal) and fills in defaults.
 * Idempotent: a `Scenario` passes through unchanged in meaning.
 * @throws ScenarioError listing every invalid field as `path: value is not allowed (what is)`.
 */
export function parseScenario(json: unknown): Scenario {
  const c = new Checker();
  if (!isPlainObject(json)) {
    c.reject('scenario', json, 'an object');
    throw new ScenarioError(c.issues);
  }
  const top = c.object('', json, TOP_FIELDS) ?? {};
  // No prototype: a host named __proto__ or constructor is a plain key, never dropped or inherited.
  const hosts: Record<string, HostSpec> = Object.create(null) as Record<string, HostSpec>;
  if (top.hosts === undefined) c.missing('hosts', 'an object mapping host names to hosts');
  else {
    const raw = c.object('hosts', top.hosts, null);
    if (raw) {
      if (Object.keys(raw).length === 0) c.reject('hosts', raw, 'at least one host');
      for (const [key, value] of Object.entries(raw)) {
        const path = `hosts[${JSON.stringify(key)}]`;
        const name = key.toLowerCase();
        if (!HOST_NAME.test(name)) {
          c.issues.push(`${path}: ${show(key)} is not allowed as a host name (letters, digits, "-", "_" and dots, like "alpha.test")`);
          continue;
        }
        if (Object.hasOwn(hosts, name)) {
          c.issues.push(`${path}: ${show(key)} is not allowed (host names are case-insensitive and ${show(name)} is already defined)`);
          continue;
        }
        const host = parseHost(c, path, value);
        if (host) hosts[name] = host;
      }
    }
  }
  const port = top.port === undefined ? 0 : c.number('port', top.port, { int: true, min: 0, max: 65535 });
  const seed = top.seed === undefined ? 1 : c.number('seed', top.seed, { int: true });
  let description: string | undefined;
  if (top.description !== undefined) description = c.string('description', top.description);
  if (c.issues.length > 0) throw new ScenarioError(c.issues);
  const scenario: { -readonly [K in keyof Scenario]: Scenario[K] } = { hosts, port: port ?? 0, seed: seed ?? 1 };
  if (description !== undefined) scenario.description = description;
  return scenario;
}
