// The one settings schema (SPEC 2): defaults, types, ranges, labels and help, used by the CLI,
// config files, the engine's live changes and the GUI. A change set is validated whole.

/** RANDOMIZE_DOWNLOAD_DELAY / BACKOFF_JITTER: off, a factor f (U[1−f, 1+f]), or a pair (U[1+low, 1+high]). */
export type Randomize = false | number | readonly [number, number];

export interface DownloadSlotOverride {
  readonly concurrency?: number;
  readonly delay?: number;
  readonly randomize_delay?: boolean;
}

export interface ScopeBackoff {
  readonly http_codes?: readonly number[];
  readonly exceptions?: readonly string[];
  readonly delay_factor?: number;
  readonly min_delay?: number;
  readonly max_delay?: number;
  readonly jitter?: Randomize;
  readonly window?: number;
}

export interface ScopeAutoThrottle {
  readonly target_concurrency?: number;
  readonly start_delay?: number;
  readonly max_delay?: number;
  readonly enabled?: boolean;
}

export interface ScopeSettings {
  readonly concurrency?: number;
  readonly delay?: number;
  readonly jitter?: Randomize;
  readonly backoff?: ScopeBackoff;
  readonly rampup?: boolean;
  readonly quota?: number;
  readonly window?: number;
  readonly autothrottle?: ScopeAutoThrottle;
  readonly ignore_robots_txt?: boolean;
  /** Response header that reports a request's actual quota cost. */
  readonly quota_header?: string;
}

export const BACKOFF_EXCEPTION_KINDS = ['timeout', 'connect-refused', 'connect-reset', 'tls', 'dns'] as const;

/** The full, validated settings of a crawl, by Scrapy names. */
export interface Settings {
  readonly CONCURRENT_REQUESTS: number;
  readonly CONCURRENT_REQUESTS_PER_DOMAIN: number;
  readonly CONCURRENT_REQUESTS_PER_IP: number;
  readonly DOWNLOAD_DELAY: number;
  readonly DOWNLOAD_DELAY_PER_SLOT: number;
  readonly RANDOMIZE_DOWNLOAD_DELAY: Randomize;
  readonly DOWNLOAD_SLOTS: Readonly<Record<string, DownloadSlotOverride>>;
  readonly THROTTLING_SCOPES: Readonly<Record<string, ScopeSettings>>;
  readonly AUTOTHROTTLE_ENABLED: boolean;
  readonly AUTOTHROTTLE_START_DELAY: number;
  readonly AUTOTHROTTLE_MAX_DELAY: number;
  readonly AUTOTHROTTLE_TARGET_CONCURRENCY: number;
  readonly AUTOTHROTTLE_DEBUG: boolean;
  readonly BACKOFF_HTTP_CODES: readonly number[];
  readonly BACKOFF_EXCEPTIONS: readonly string[];
  readonly BACKOFF_DELAY_FACTOR: number;
  readonly BACKOFF_MIN_DELAY: number;
  readonly BACKOFF_MAX_DELAY: number;
  readonly BACKOFF_JITTER: Randomize;
  readonly BACKOFF_WINDOW: number;
  readonly RAMPUP_BACKOFF_TARGET: number | readonly [number, number];
  readonly THROTTLING_RATELIMIT_PACE: boolean;
  readonly THROTTLING_WINDOW: number;
  readonly ROBOTSTXT_OBEY: boolean;
  readonly THROTTLING_ROBOTSTXT_OBEY: boolean;
  readonly THROTTLING_ROBOTSTXT_MAX_DELAY: number;
  readonly DELAYED_REQUESTS_WARN_THRESHOLD: number;
  readonly DOWNLOAD_TIMEOUT: number;
  readonly DOWNLOAD_MAXSIZE: number;
  readonly DOWNLOAD_WARNSIZE: number;
  readonly USER_AGENT: string;
  readonly RETRY_ENABLED: boolean;
  readonly RETRY_TIMES: number;
  readonly RETRY_HTTP_CODES: readonly number[];
  readonly RETRY_PRIORITY_ADJUST: number;
  readonly THROTTLING_MANAGER: string;
}

export type SettingName = keyof Settings;

/** One refused value: the setting, the value given and what is allowed. */
export interface SettingError {
  readonly setting: string;
  readonly value: unknown;
  readonly allowed: string;
  readonly message: string;
}

export type SettingsResult =
  | { readonly ok: true; readonly settings: Settings; readonly changed: readonly SettingName[] }
  | { readonly ok: false; readonly errors: readonly SettingError[] };

export const APP_VERSION = '0.1.0';
export const DEFAULT_USER_AGENT = `Slotscope/${APP_VERSION} (+https://github.com/slotscope/slotscope)`;

// ---------------------------------------------------------------------------------------------
// Value parsers. Each returns the parsed value or throws a ParseFail with "what is allowed".

class ParseFail {
  constructor(readonly allowed: string, readonly detail?: string) {}
}

/**
 * Longest delay, window or timeout any setting (or a slot's delay pin) may ask for, in seconds:
 * one day. Every wait the engine arms stays far below setTimeout's limit (2^31 - 1 ms, about
 * 24.8 days) and below what the HTTP client accepts as a timeout.
 */
export const MAX_DELAY_SECONDS = 86_400;

const DELAY_PIN_ALLOWED = `a number of seconds >= 0 and <= ${MAX_DELAY_SECONDS}, or null to clear`;

/**
 * Checks a slot's delay pin (SPEC 6): a number of seconds from 0 to MAX_DELAY_SECONDS, or null to
 * clear it. Returns it, or throws a RangeError naming the value and what is allowed.
 */
export function validateDelayPin(seconds: unknown): number | null {
  if (seconds === null) return null;
  if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_DELAY_SECONDS) return seconds;
  throw new RangeError(`delay pin: ${describe(seconds)} is not allowed (${DELAY_PIN_ALLOWED})`);
}

/** A map of the schema's own: no prototype, so any key (`__proto__`, `constructor` …) is a plain key and a lookup finds only what was set. */
function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

const INTEGER_TEXT = /^[+-]?\d+$/;
const DECIMAL_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A number written as text, the one rule for every number read from a config file, the CLI or the
 * GUI: ASCII decimal digits with an optional sign (and, when `int` is false, a decimal point and an
 * exponent), surrounding blanks ignored. Anything else is null: "" and " " are not 0, "0x10" is
 * not 16, "Infinity", "1_000" and "1e400" are not numbers.
 */
export function parseDecimal(text: string, int: boolean): number | null {
  const s = text.trim();
  if (!(int ? INTEGER_TEXT : DECIMAL_TEXT).test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** What parseDecimal reads, in words (the detail of a refused text). */
export function decimalTextRule(int: boolean): string {
  return int ? 'a number given as text is decimal digits, e.g. "16"' : 'a number given as text is written in decimal, e.g. "2.5" or "1e-3"';
}

function toNumber(v: unknown, allowed: string, int = false): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new ParseFail(allowed);
    return v;
  }
  if (typeof v === 'string') {
    const n = parseDecimal(v, int);
    if (n !== null) return n;
    throw new ParseFail(allowed, decimalTextRule(int));
  }
  throw new ParseFail(allowed);
}

function num(min: number, opts: { exclusiveMin?: boolean; max?: number; exclusiveMax?: boolean; int?: boolean } = {}) {
  const parts: string[] = [];
  parts.push(opts.int ? 'a whole number' : 'a number');
  parts.push(opts.exclusiveMin ? `> ${min}` : `>= ${min}`);
  if (opts.max !== undefined) parts.push(opts.exclusiveMax ? `and < ${opts.max}` : `and <= ${opts.max}`);
  const allowed = parts.join(' ');
  return (v: unknown): number => {
    const n = toNumber(v, allowed, opts.int);
    if (opts.int && !Number.isInteger(n)) throw new ParseFail(allowed);
    if (opts.exclusiveMin ? n <= min : n < min) throw new ParseFail(allowed);
    if (opts.max !== undefined && (opts.exclusiveMax ? n >= opts.max : n > opts.max)) throw new ParseFail(allowed);
    return n;
  };
}

function bool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number' && (v === 0 || v === 1)) return v === 1;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off'].includes(s)) return false;
  }
  throw new ParseFail('true or false');
}

const RANDOMIZE_ALLOWED = 'true, false, a factor in [0, 1), or a pair [low, high] with -1 <= low <= high';

function randomize(v: unknown): Randomize {
  if (typeof v === 'boolean') return v ? 0.5 : false;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (s === 'true') return 0.5;
    if (s === 'false') return false;
  }
  if (Array.isArray(v)) {
    if (v.length !== 2) throw new ParseFail(RANDOMIZE_ALLOWED);
    const low = toNumber(v[0], RANDOMIZE_ALLOWED);
    const high = toNumber(v[1], RANDOMIZE_ALLOWED);
    if (low < -1 || high < low) throw new ParseFail(RANDOMIZE_ALLOWED);
    return [low, high] as const;
  }
  const f = toNumber(v, RANDOMIZE_ALLOWED);
  if (f < 0 || f >= 1) throw new ParseFail(RANDOMIZE_ALLOWED);
  return f === 0 ? false : f;
}

function intList(min: number, max: number) {
  const allowed = `a list of whole numbers from ${min} to ${max}`;
  return (v: unknown): readonly number[] => {
    const items = typeof v === 'string' ? v.split(',').filter((s) => s.trim() !== '') : v;
    if (!Array.isArray(items)) throw new ParseFail(allowed);
    return items.map((x) => {
      let n: number;
      try {
        n = toNumber(x, allowed, true);
      } catch (e) {
        if (e instanceof ParseFail) throw new ParseFail(allowed, `item ${JSON.stringify(x)}${e.detail ? `: ${e.detail}` : ''}`);
        throw e;
      }
      if (!Number.isInteger(n) || n < min || n > max) throw new ParseFail(allowed, `item ${JSON.stringify(x)}`);
      return n;
    });
  };
}

function exceptionList(v: unknown): readonly string[] {
  const allowed = `a list of error kinds from: ${BACKOFF_EXCEPTION_KINDS.join(', ')}`;
  const items = typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v;
  if (!Array.isArray(items)) throw new ParseFail(allowed);
  return items.map((x) => {
    if (typeof x !== 'string' || !(BACKOFF_EXCEPTION_KINDS as readonly string[]).includes(x)) {
      throw new ParseFail(allowed, `item ${JSON.stringify(x)}`);
    }
    return x;
  });
}

function rampupTarget(v: unknown): number | readonly [number, number] {
  const allowed = 'a whole number >= 0, or a pair [min, max] of whole numbers with 0 <= min <= max';
  if (Array.isArray(v)) {
    if (v.length !== 2) throw new ParseFail(allowed);
    const a = toNumber(v[0], allowed, true);
    const b = toNumber(v[1], allowed, true);
    if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < a) throw new ParseFail(allowed);
    return [a, b] as const;
  }
  const n = toNumber(v, allowed, true);
  if (!Number.isInteger(n) || n < 0) throw new ParseFail(allowed);
  return n;
}

const USER_AGENT_ALLOWED =
  'a non-empty single-line text of printable characters up to U+00FF (an HTTP header value: no control characters, tabs or line breaks)';

/**
 * A header value the HTTP client sends as given: printable ASCII and Latin-1 (undici refuses
 * anything outside tab, U+0020–U+007E and U+0080–U+00FF; tabs, DEL and C1 controls are refused
 * here too).
 */
function headerText(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw new ParseFail(USER_AGENT_ALLOWED);
  const bad = /[^\x20-\x7e\xa0-\xff]/u.exec(v);
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new ParseFail(USER_AGENT_ALLOWED, `character U+${code} at index ${bad.index}`);
  }
  return v;
}

function headerName(v: unknown): string {
  if (typeof v !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(v)) throw new ParseFail('an HTTP header name');
  return v.toLowerCase();
}

function modulePath(v: unknown): string {
  if (typeof v !== 'string' || /[\r\n]/.test(v)) throw new ParseFail('a path to an ES module, or "" for none');
  return v.trim();
}

function plainObject(v: unknown, allowed: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ParseFail(allowed);
  return v as Record<string, unknown>;
}

/** Parses the keys of an object with per-key parsers, naming the first bad key in the error. */
function fields<T>(parsers: Record<string, (v: unknown) => unknown>, allowed: string) {
  return (v: unknown): T => {
    const obj = plainObject(v, allowed);
    const out: Record<string, unknown> = {};
    for (const [k, raw] of Object.entries(obj)) {
      // Own keys only: `toString`, `constructor` or `__proto__` are unknown keys, not Object's.
      const parse = Object.hasOwn(parsers, k) ? parsers[k] : undefined;
      if (!parse) throw new ParseFail(allowed, `unknown key "${k}" (known: ${Object.keys(parsers).join(', ')})`);
      try {
        out[k] = parse(raw);
      } catch (e) {
        if (e instanceof ParseFail) throw new ParseFail(e.allowed, `"${k}": ${JSON.stringify(raw)}${e.detail ? ` (${e.detail})` : ''}`);
        throw e;
      }
    }
    return out as T;
  };
}

/** A delay, window or timeout in seconds: at most MAX_DELAY_SECONDS. */
const secs = (min: number, exclusiveMin = false) => num(min, { exclusiveMin, max: MAX_DELAY_SECONDS });

const downloadSlot = fields<DownloadSlotOverride>(
  { concurrency: num(1, { int: true }), delay: secs(0), randomize_delay: bool },
  `an object {concurrency: whole number >= 1, delay: number >= 0 and <= ${MAX_DELAY_SECONDS}, randomize_delay: true/false}`,
);

const scopeBackoff = fields<ScopeBackoff>(
  {
    http_codes: intList(100, 599),
    exceptions: exceptionList,
    delay_factor: num(1, { exclusiveMin: true }),
    min_delay: secs(0),
    max_delay: secs(0),
    jitter: randomize,
    window: secs(0, true),
  },
  'an object with http_codes, exceptions, delay_factor, min_delay, max_delay, jitter, window',
);

const scopeAutoThrottle = fields<ScopeAutoThrottle>(
  {
    target_concurrency: num(0, { exclusiveMin: true }),
    start_delay: secs(0),
    max_delay: secs(0),
    enabled: bool,
  },
  'an object with target_concurrency, start_delay, max_delay, enabled',
);

const scopeSettings = fields<ScopeSettings>(
  {
    concurrency: num(1, { int: true }),
    delay: secs(0),
    jitter: randomize,
    backoff: scopeBackoff,
    rampup: bool,
    quota: num(0, { exclusiveMin: true }),
    window: secs(0, true),
    autothrottle: scopeAutoThrottle,
    ignore_robots_txt: bool,
    quota_header: headerName,
  },
  'an object with concurrency, delay, jitter, backoff, rampup, quota, window, autothrottle, ignore_robots_txt, quota_header',
);

function mapOf<T>(parse: (v: unknown) => T, allowed: string) {
  return (v: unknown): Readonly<Record<string, T>> => {
    const obj = plainObject(v, allowed);
    const out = emptyMap<T>();
    for (const [k, raw] of Object.entries(obj)) {
      if (k.trim() === '') throw new ParseFail(allowed, 'an empty key');
      try {
        out[k] = parse(raw);
      } catch (e) {
        if (e instanceof ParseFail) throw new ParseFail(e.allowed, `key "${k}"${e.detail ? `: ${e.detail}` : ''}`);
        throw e;
      }
    }
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// The schema.

export type SettingGroup = 'Concurrency' | 'Delays' | 'AutoThrottle' | 'Backoff' | 'Retries' | 'Scopes' | 'robots.txt' | 'Downloads';

export interface SettingSpec {
  readonly name: SettingName;
  readonly label: string;
  readonly help: string;
  readonly group: SettingGroup;
  readonly default: unknown;
  /** What values are allowed, in words (shown in the GUI and in errors). */
  readonly allowed: string;
  readonly parse: (v: unknown) => unknown;
}

function spec(
  name: SettingName,
  group: SettingGroup,
  label: string,
  help: string,
  def: unknown,
  parse: (v: unknown) => unknown,
  allowed: string,
): SettingSpec {
  return { name, group, label, help, default: def, parse, allowed };
}

const intGe = (min: number) => [num(min, { int: true }), `a whole number >= ${min}`] as const;
const numGe = (min: number) => [num(min), `a number >= ${min}`] as const;
const intAny = () => [num(-1000, { int: true, max: 1000 }), 'a whole number from -1000 to 1000'] as const;
const numGt = (min: number) => [num(min, { exclusiveMin: true }), `a number > ${min}`] as const;
/** Seconds of a delay, window or timeout: bounded by MAX_DELAY_SECONDS so every timer can be armed. */
const secsGe = (min: number) => [secs(min), `a number >= ${min} and <= ${MAX_DELAY_SECONDS}`] as const;
const secsGt = (min: number) => [secs(min, true), `a number > ${min} and <= ${MAX_DELAY_SECONDS}`] as const;

export const SETTINGS_SCHEMA: readonly SettingSpec[] = [
  spec('CONCURRENT_REQUESTS', 'Concurrency', 'Requests in flight (whole crawl)',
    'Most requests in flight across the whole crawl; 0 means no limit.', 16, ...intGe(0)),
  spec('CONCURRENT_REQUESTS_PER_DOMAIN', 'Concurrency', 'Requests in flight per slot',
    'Lanes per slot: how many requests one host may have in flight at once.', 8, ...intGe(1)),
  spec('CONCURRENT_REQUESTS_PER_IP', 'Concurrency', 'Requests in flight per IP',
    'If above 0, slots are keyed by resolved IP address and this is their concurrency.', 0, ...intGe(0)),
  spec('DOWNLOAD_DELAY', 'Delays', 'Delay between requests (s)',
    'Minimum gap between the starts of two requests of the same slot; also AutoThrottle\'s floor.', 0, ...secsGe(0)),
  spec('DOWNLOAD_DELAY_PER_SLOT', 'Delays', 'Delay per lane (s)',
    'Minimum gap between two starts in the same lane of a slot.', 0, ...secsGe(0)),
  spec('RANDOMIZE_DOWNLOAD_DELAY', 'Delays', 'Randomize delay',
    'true draws each gap from 0.5x to 1.5x the delay; a factor f from (1-f)x to (1+f)x; [low, high] from (1+low)x to (1+high)x.',
    0.5, randomize, RANDOMIZE_ALLOWED),
  spec('DOWNLOAD_SLOTS', 'Delays', 'Per-slot overrides',
    'Map of slot key to {concurrency, delay, randomize_delay}, applied when the slot is created (delay is its start delay).',
    Object.freeze(emptyMap()), mapOf(downloadSlot, 'a map of slot key to {concurrency, delay, randomize_delay}'),
    'a map of slot key to {concurrency, delay, randomize_delay}'),
  spec('THROTTLING_SCOPES', 'Scopes', 'Throttling scopes',
    'Map of scope to {concurrency, delay, jitter, backoff, rampup, quota, window, autothrottle, ignore_robots_txt}.',
    Object.freeze(emptyMap()), mapOf(scopeSettings, 'a map of scope to scope settings'), 'a map of scope to scope settings'),
  spec('AUTOTHROTTLE_ENABLED', 'AutoThrottle', 'AutoThrottle on',
    'Adjust each slot\'s delay from the latencies it sees, like Scrapy\'s AutoThrottle.', false, bool, 'true or false'),
  spec('AUTOTHROTTLE_START_DELAY', 'AutoThrottle', 'Start delay (s)',
    'Delay of a new slot (at least DOWNLOAD_DELAY).', 5.0, ...secsGe(0)),
  spec('AUTOTHROTTLE_MAX_DELAY', 'AutoThrottle', 'Max delay (s)',
    'Highest delay AutoThrottle may set.', 60.0, ...secsGe(0)),
  spec('AUTOTHROTTLE_TARGET_CONCURRENCY', 'AutoThrottle', 'Target concurrency',
    'Average number of requests AutoThrottle aims to have in flight per slot.', 1.0, ...numGt(0)),
  spec('AUTOTHROTTLE_DEBUG', 'AutoThrottle', 'Debug lines',
    'Write Scrapy\'s AutoThrottle debug line for every adjusted response.', false, bool, 'true or false'),
  spec('BACKOFF_HTTP_CODES', 'Backoff', 'Backoff status codes',
    'Response statuses that make a slot back off.', [429, 502, 503, 504, 520, 521, 522, 523, 524],
    intList(100, 599), 'a list of whole numbers from 100 to 599'),
  spec('BACKOFF_EXCEPTIONS', 'Backoff', 'Backoff errors',
    'Download failures that make a slot back off.', ['timeout', 'connect-refused', 'connect-reset', 'tls'],
    exceptionList, `a list of error kinds from: ${BACKOFF_EXCEPTION_KINDS.join(', ')}`),
  spec('BACKOFF_DELAY_FACTOR', 'Backoff', 'Backoff factor',
    'Each backoff step multiplies the delay by this.', 2.0, ...numGt(1)),
  spec('BACKOFF_MIN_DELAY', 'Backoff', 'Backoff min delay (s)',
    'Smallest delay of the first backoff step.', 1.0, ...secsGe(0)),
  spec('BACKOFF_MAX_DELAY', 'Backoff', 'Backoff max delay (s)',
    'Cap on backoff delays, Retry-After and RateLimit-Reset (at least BACKOFF_MIN_DELAY).', 300.0, ...secsGe(0)),
  spec('BACKOFF_JITTER', 'Backoff', 'Backoff jitter',
    'Randomization used instead of RANDOMIZE_DOWNLOAD_DELAY while a slot backs off.', 0.1, randomize, RANDOMIZE_ALLOWED),
  spec('BACKOFF_WINDOW', 'Backoff', 'Backoff window (s)',
    'Quiet seconds needed for one step of recovery.', 60.0, ...secsGt(0)),
  spec('RAMPUP_BACKOFF_TARGET', 'Backoff', 'Rampup backoff target',
    'Backoff responses per window that rampup aims for.', 1, rampupTarget,
    'a whole number >= 0, or a pair [min, max] of whole numbers with 0 <= min <= max'),
  spec('THROTTLING_RATELIMIT_PACE', 'Backoff', 'Pace by RateLimit headers',
    'Where responses carry RateLimit / X-RateLimit limit, remaining and reset headers, spread requests to one fewer than the limit per window '
    + 'instead of finding it by refusals (a remaining of 0 blocks until the reset either way).', true, bool, 'true or false'),
  spec('THROTTLING_WINDOW', 'Scopes', 'Quota window (s)', 'Default quota window of a scope.', 60.0, ...secsGt(0)),
  spec('ROBOTSTXT_OBEY', 'robots.txt', 'Obey robots.txt',
    'Skip URLs that robots.txt disallows for the crawl\'s user agent.', true, bool, 'true or false'),
  spec('THROTTLING_ROBOTSTXT_OBEY', 'robots.txt', 'Obey Crawl-delay',
    'Use robots.txt Crawl-delay as the slot\'s floor (concurrency 1).', true, bool, 'true or false'),
  spec('THROTTLING_ROBOTSTXT_MAX_DELAY', 'robots.txt', 'Crawl-delay cap (s)',
    'Highest Crawl-delay that is obeyed.', 60.0, ...secsGe(0)),
  spec('DELAYED_REQUESTS_WARN_THRESHOLD', 'Scopes', 'Waiting requests warning',
    'Warn once when this many requests wait in memory.', 500, ...intGe(1)),
  spec('DOWNLOAD_TIMEOUT', 'Downloads', 'Download timeout (s)',
    'Seconds before a download is given up; a timeout is backoff feedback.', 180, ...secsGt(0)),
  spec('DOWNLOAD_MAXSIZE', 'Downloads', 'Max response size (bytes)',
    'Abort bodies larger than this; 0 means no limit.', 1024 * 1024 * 1024, ...intGe(0)),
  spec('DOWNLOAD_WARNSIZE', 'Downloads', 'Warn response size (bytes)',
    'Warn once per response whose body is larger than this once decompressed; 0 means never.', 32 * 1024 * 1024, ...intGe(0)),
  spec('USER_AGENT', 'Downloads', 'User agent',
    'User-Agent header, also used to read robots.txt.', DEFAULT_USER_AGENT, headerText, USER_AGENT_ALLOWED),
  spec('RETRY_ENABLED', 'Retries', 'Retry',
    'Retry requests answered with a status in RETRY_HTTP_CODES or failed by a transport error (Scrapy\'s RetryMiddleware); backoff decides when, this decides whether.',
    true, bool, 'true or false'),
  spec('RETRY_TIMES', 'Retries', 'Retries per request',
    'How many times one request is retried; each attempt is recorded, and a request given up is reported with its reason.', 2, ...intGe(0)),
  spec('RETRY_HTTP_CODES', 'Retries', 'Retried status codes',
    'Statuses that are retried (Scrapy\'s default list).', [500, 502, 503, 504, 522, 524, 408, 429],
    intList(100, 599), 'a list of whole numbers from 100 to 599'),
  spec('RETRY_PRIORITY_ADJUST', 'Retries', 'Retry priority change',
    'Added to a retried request\'s priority (negative: after the other waiting requests).', -1, ...intAny()),
  spec('THROTTLING_MANAGER', 'Scopes', 'Scope plug-in',
    'Path of an ES module exporting getScopes(request) and optionally getResponseBackoff(response); "" for none.',
    '', modulePath, 'a path to an ES module, or "" for none'),
];

const SPEC_BY_NAME: ReadonlyMap<string, SettingSpec> = new Map(SETTINGS_SCHEMA.map((s) => [s.name, s]));

export function settingSpec(name: string): SettingSpec | undefined {
  return SPEC_BY_NAME.get(name);
}

export const DEFAULT_SETTINGS: Settings = Object.freeze(
  Object.fromEntries(SETTINGS_SCHEMA.map((s) => [s.name, s.default])),
) as unknown as Settings;

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 120 ? `${s.slice(0, 117)}...` : s;
  } catch {
    return String(v);
  }
}

function closest(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (SPEC_BY_NAME.has(upper)) return upper;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const known of SPEC_BY_NAME.keys()) {
    const d = editDistance(upper, known);
    if (d < bestScore) {
      bestScore = d;
      best = known;
    }
  }
  return bestScore <= 4 ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

const MAP_SETTINGS = ['DOWNLOAD_SLOTS', 'THROTTLING_SCOPES'] as const;

/** The map itself when it has no prototype, else a copy of its own entries that has none. */
function ownMap(v: unknown): unknown {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) === null) return v;
  const out = emptyMap<unknown>();
  for (const [k, x] of Object.entries(v)) out[k] = x;
  return Object.freeze(out);
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Validates a change set against a base (defaults when omitted). Either every value is valid and
 * the merged settings are returned with the names that changed, or nothing is applied and every
 * refused value is named with what is allowed.
 */
export function applySettings(patch: unknown, base: Settings = DEFAULT_SETTINGS): SettingsResult {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return {
      ok: false,
      errors: [{ setting: '(settings)', value: patch, allowed: 'an object of SETTING_NAME: value',
        message: `settings: ${describe(patch)} is not allowed (an object of SETTING_NAME: value)` }],
    };
  }
  const errors: SettingError[] = [];
  const merged: Record<string, unknown> = { ...base };
  const changed: SettingName[] = [];
  for (const [name, raw] of Object.entries(patch as Record<string, unknown>)) {
    const s = SPEC_BY_NAME.get(name);
    if (!s) {
      const guess = closest(name);
      errors.push({ setting: name, value: raw, allowed: 'a known setting name',
        message: `${name}: unknown setting${guess ? ` (did you mean ${guess}?)` : ''}` });
      continue;
    }
    try {
      const v = s.parse(raw);
      if (!sameValue(v, base[s.name])) changed.push(s.name);
      merged[name] = v;
    } catch (e) {
      if (!(e instanceof ParseFail)) throw e;
      errors.push({ setting: name, value: raw, allowed: e.allowed,
        message: `${name}: ${describe(raw)} is not allowed (${e.allowed})${e.detail ? `: ${e.detail}` : ''}` });
    }
  }
  if (errors.length === 0) {
    const m = merged as unknown as Settings;
    if (m.BACKOFF_MAX_DELAY < m.BACKOFF_MIN_DELAY) {
      const name = 'BACKOFF_MAX_DELAY' in (patch as object) ? 'BACKOFF_MAX_DELAY' : 'BACKOFF_MIN_DELAY';
      const allowed = name === 'BACKOFF_MAX_DELAY'
        ? `a number >= BACKOFF_MIN_DELAY (${m.BACKOFF_MIN_DELAY})`
        : `a number <= BACKOFF_MAX_DELAY (${m.BACKOFF_MAX_DELAY})`;
      errors.push({ setting: name, value: merged[name], allowed,
        message: `${name}: ${describe(merged[name])} is not allowed (${allowed})` });
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  // Maps taken over from the base (copied over IPC, built by hand) get no prototype either.
  for (const name of MAP_SETTINGS) merged[name] = ownMap(merged[name]);
  return { ok: true, settings: Object.freeze(merged) as unknown as Settings, changed };
}

/** Like applySettings, but throws one Error listing every problem (for config files and tests). */
export function parseSettings(patch: unknown, base: Settings = DEFAULT_SETTINGS): Settings {
  const r = applySettings(patch, base);
  if (!r.ok) throw new SettingsError(r.errors);
  return r.settings;
}

export class SettingsError extends Error {
  constructor(readonly errors: readonly SettingError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'SettingsError';
  }
}

// ---------------------------------------------------------------------------------------------
// Presets for the new-crawl form (SPEC 2).

export interface Preset {
  readonly id: string;
  readonly label: string;
  readonly help: string;
  readonly settings: Readonly<Partial<Record<SettingName, unknown>>>;
}

export const PRESETS: readonly Preset[] = [
  {
    id: 'polite',
    label: 'Polite, one site',
    help: 'One request at a time per host, at least 1 s apart, AutoThrottle aiming at 1 in flight.',
    settings: {
      AUTOTHROTTLE_ENABLED: true,
      AUTOTHROTTLE_TARGET_CONCURRENCY: 1.0,
      AUTOTHROTTLE_MAX_DELAY: 10,
      AUTOTHROTTLE_START_DELAY: 2.0,
      CONCURRENT_REQUESTS_PER_DOMAIN: 1,
      DOWNLOAD_DELAY: 1.0,
      DOWNLOAD_DELAY_PER_SLOT: 1.0,
    },
  },
  {
    id: 'cooperative',
    label: 'Cooperative server',
    help: 'A server that can take more: AutoThrottle aiming at 4 in flight per host.',
    settings: {
      AUTOTHROTTLE_ENABLED: true,
      AUTOTHROTTLE_TARGET_CONCURRENCY: 4.0,
      AUTOTHROTTLE_MAX_DELAY: 30,
      AUTOTHROTTLE_START_DELAY: 1.0,
    },
  },
  {
    id: 'many-sites',
    label: 'Many sites',
    help: 'Broad crawls over many hosts: AutoThrottle aiming at 2 in flight per host.',
    settings: {
      AUTOTHROTTLE_ENABLED: true,
      AUTOTHROTTLE_TARGET_CONCURRENCY: 2.0,
      AUTOTHROTTLE_MAX_DELAY: 60,
      AUTOTHROTTLE_START_DELAY: 1.0,
    },
  },
];

/** Draws a gap multiplier for a randomization setting (1 when off). `random` returns U[0, 1). */
export function drawFactor(r: Randomize, random: () => number): number {
  if (r === false) return 1;
  if (typeof r === 'number') return 1 - r + 2 * r * random();
  return 1 + r[0] + (r[1] - r[0]) * random();
}
