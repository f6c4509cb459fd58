// Reads the lines of a Scrapy log: AUTOTHROTTLE_DEBUG lines (every 2.x shape, any log prefix), the
// "Crawled/Redirecting/Retrying" lines that give a response's status and URL, and the log records around them.
import { fractionToMs, offsetMinutes, validWallTime, wallTimeToEpoch, type TimeZoneSpec, type WallTime } from '../export/wall-time';

/** The numbers of one AUTOTHROTTLE_DEBUG line, as printed (milliseconds and bytes). */
export interface DebugFields {
  /** `slot` (Scrapy 2.x) or `scope` (the throttling-scopes draft of PR #6931). */
  readonly label: 'slot' | 'scope';
  readonly slot: string;
  /** `conc`: requests in flight on the slot; null when the line has none (the scopes draft). */
  readonly conc: number | null;
  readonly delayMs: number;
  readonly diffMs: number;
  readonly latencyMs: number;
  readonly size: number;
  /**
   * How the numbers were cut: Scrapy's `%d` truncates toward zero (2.8 to 2.18); the scopes draft's
   * `%5.0f` rounds. It decides which value a printed number most likely stood for.
   */
  readonly numbers: 'truncated' | 'rounded';
}

/**
 * The debug message anywhere in a line: `slot: K | conc:%2d | delay:%5d ms (%+d) | latency:%5d ms | size:%6d bytes`,
 * with any padding (or none, or numbers wider than the pad), the conc field optional, `scope:` for
 * `slot:`, and any text (the log prefix) before it. The slot key may itself contain ` | `.
 */
const DEBUG_RE = /(?:^|[\s:|\]])(slot|scope): (.*?) \| (?:conc: *(\d+) \| )?delay: *(-?\d+) ms \(([+-]?\d+)\) \| latency: *(-?\d+) ms \| size: *(\d+) bytes\s*$/;
/** A line that is (or was meant to be) a throttle debug line. */
const LOOKS_LIKE_DEBUG = /\[scrapy\.extensions\.throttle\]|(?:^|[\s:|\]])(?:slot|scope): .*\b(?:delay|latency): *-?\d/;

/** The fields of a debug message (or a whole line with its prefix); null when it is not one. */
export function parseDebugMessage(text: string): (DebugFields & { readonly index: number }) | null {
  const m = DEBUG_RE.exec(text);
  if (!m) return null;
  const label = m[1] as 'slot' | 'scope';
  return {
    index: m.index + (m[0].startsWith(label) ? 0 : 1),
    label,
    slot: m[2],
    conc: m[3] === undefined ? null : Number(m[3]),
    delayMs: Number(m[4]),
    diffMs: Number(m[5]) + 0, // `-0` (a rounded line) is no change: +0
    latencyMs: Number(m[6]),
    size: Number(m[7]),
    numbers: label === 'scope' ? 'rounded' : 'truncated',
  };
}

/** Why a line that looks like a debug line could not be read. */
export function whyUnreadable(text: string): string {
  if (!/(?:^|[\s:|\]])(?:slot|scope): /.test(text)) return 'a throttle log line without a `slot: KEY` message';
  if (!/delay: *-?\d+ ms \([+-]?\d+\)/.test(text)) return 'no `delay: N ms (±N)` field';
  if (!/latency: *-?\d+ ms/.test(text)) return 'no `latency: N ms` field';
  if (!/size: *\d+ bytes/.test(text)) return 'no `size: N bytes` field';
  return 'the fields are not in the AUTOTHROTTLE_DEBUG order (or the line has extra text)';
}

/** A log timestamp: `2026-11-22 10:00:00`, `,123`/`.123456` fractions, `T`, `/`, an optional offset (`Z`, `+0100`). */
const TS = String.raw`(\d{4})[-/](\d{2})[-/](\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?: ?(Z|[+-]\d{2}:?\d{2})\b)?`;
const TS_ANYWHERE = new RegExp(TS);
/** Scrapy's LOG_FORMAT `%(asctime)s [%(name)s] %(levelname)s: %(message)s` (any LOG_DATEFORMAT of the TS shape). */
const RECORD_RE = new RegExp(`^${TS}\\s+\\[([^\\]]+)\\]\\s+([A-Z]+):\\s?(.*)$`);
/** A timestamp at the very start of a line, whatever follows (other LOG_FORMATs). */
const TS_START = new RegExp(`^${TS}(.*)$`);
/** `[logger] LEVEL: message` with no time (LOG_FORMAT without asctime) and Python's `LEVEL:logger:message`. */
const NO_TIME_RE = /^\[([^\]]+)\]\s+(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s?(.*)$|^(DEBUG|INFO|WARNING|ERROR|CRITICAL):([\w.]+):(.*)$/;

function stamp(m: RegExpExecArray, at: number, tz: TimeZoneSpec): number | null {
  const w: WallTime = {
    year: Number(m[at]),
    month: Number(m[at + 1]),
    day: Number(m[at + 2]),
    hour: Number(m[at + 3]),
    minute: Number(m[at + 4]),
    second: Number(m[at + 5]),
    ms: fractionToMs(m[at + 6]),
  };
  if (!validWallTime(w)) return null;
  const off = offsetMinutes(m[at + 7]);
  return wallTimeToEpoch(w, off === null ? tz : { offsetMinutes: off });
}

/** The time of the first timestamp in `text` (epoch ms), or null. */
export function findTimestamp(text: string, tz: TimeZoneSpec): number | null {
  const m = TS_ANYWHERE.exec(text);
  return m ? stamp(m, 1, tz) : null;
}

/** A response line Scrapy writes after the debug line of the same response. */
export interface ResponseInfo {
  readonly status: number;
  readonly method: string;
  readonly url: string;
  /** An HTTP-cache hit: it never went through AutoThrottle. */
  readonly cached: boolean;
}

const CRAWLED_RE = /^Crawled \((\d{3})\) <([A-Z]+) ([^\s>]+)>(.*)$/;
const REDIRECT_RE = /^Redirecting \((\d{3}|meta refresh)\) to <[A-Z]+ [^\s>]+> from <([A-Z]+) ([^\s>]+)>/;
const RETRY_RE = /^Retrying <([A-Z]+) ([^\s>]+)> \(failed \d+ times\): (\d{3})\b/;

/** The status, method and URL a message gives (Crawled, Redirecting, Retrying), or null. */
export function parseResponseMessage(message: string): ResponseInfo | null {
  const c = message.charCodeAt(0);
  if (c === 67 /* C */) {
    const m = CRAWLED_RE.exec(message);
    return m ? { status: Number(m[1]), method: m[2], url: m[3], cached: /'cached'/.test(m[4]) } : null;
  }
  if (c === 82 /* R */) {
    const r = REDIRECT_RE.exec(message);
    // A meta refresh redirects a 200 page.
    if (r) return { status: r[1] === 'meta refresh' ? 200 : Number(r[1]), method: r[2], url: r[3], cached: false };
    const t = RETRY_RE.exec(message);
    if (t) return { status: Number(t[3]), method: t[1], url: t[2], cached: false };
  }
  return null;
}

export type LogLine =
  /** An AUTOTHROTTLE_DEBUG line; `time` null when the line has no timestamp. */
  | { readonly kind: 'debug'; readonly time: number | null; readonly fields: DebugFields; readonly message: string }
  /** A throttle line that could not be read. */
  | { readonly kind: 'unreadable'; readonly time: number | null; readonly reason: string }
  /** A log record (a line that starts a record: time, logger and level where the format has them). */
  | { readonly kind: 'record'; readonly time: number | null; readonly logger: string | null; readonly level: string | null; readonly message: string }
  /** Anything else: the rest of a multi-line record, a traceback, a blank line. */
  | { readonly kind: 'other' };

const OTHER: LogLine = { kind: 'other' };

/** Classifies one line of a Scrapy log; times are read in `tz` unless the line carries an offset. */
export function parseLogLine(line: string, tz: TimeZoneSpec): LogLine {
  const debug = line.includes('ms | size:') || line.includes('[scrapy.extensions.throttle]') ? parseDebugMessage(line) : null;
  if (debug) {
    const { index, ...fields } = debug;
    return { kind: 'debug', time: findTimestamp(line.slice(0, index), tz), fields, message: line.slice(index).trimEnd() };
  }
  if (LOOKS_LIKE_DEBUG.test(line)) return { kind: 'unreadable', time: findTimestamp(line, tz), reason: whyUnreadable(line) };
  const r = RECORD_RE.exec(line);
  if (r) return { kind: 'record', time: stamp(r, 1, tz), logger: r[9], level: r[10], message: r[11] };
  const s = TS_START.exec(line);
  if (s) {
    const rest = s[9];
    const level = /\b(DEBUG|INFO|WARNING|ERROR|CRITICAL)\b/.exec(rest)?.[1] ?? null;
    const logger = /\[([\w.]+)\]/.exec(rest)?.[1] ?? null;
    const msg = /(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\]?:?\s?(.*)$/.exec(rest)?.[1] ?? rest.trim();
    return { kind: 'record', time: stamp(s, 1, tz), logger, level, message: msg };
  }
  const n = NO_TIME_RE.exec(line);
  if (n) return n[1] !== undefined
    ? { kind: 'record', time: null, logger: n[1], level: n[2], message: n[3] }
    : { kind: 'record', time: null, logger: n[5], level: n[4], message: n[6] };
  return OTHER;
}

// ------------------------------------------------------------------------------------------------
// Python literals: the "Overridden settings:" dict Scrapy logs at start-up (`pprint.pformat`, maybe
// over several lines). Its values are reprs: literals (str, int, float, bool, None, list, tuple,
// dict, set) are read; anything else (`<class '…'>`, `<function … at 0x…>`, `datetime.datetime(…)`,
// bytes) is not a literal and is skipped on its own, with the text it had.

/** A value that is not a Python literal (or broken text): where it starts. */
class NotLiteral extends Error {
  constructor(readonly at: number, message: string) {
    super(message);
  }
}

const WORD = /(?:True|False|None|[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|nan))(?![\w.])/y;
const SET_CALL = /(?:set|frozenset)\(/y;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '',
};

class PyParser {
  i = 0;
  constructor(readonly s: string) {}

  fail(message = `unexpected ${JSON.stringify(this.s.slice(this.i, this.i + 20))}`): never {
    throw new NotLiteral(this.i, message);
  }

  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  value(): unknown {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.braces();
    if (c === '[') return this.seq(']');
    if (c === '(') return this.seq(')');
    if (c === "'" || c === '"') return this.strings();
    const word = this.sticky(WORD);
    if (word !== null) {
      if (word === 'True') return true;
      if (word === 'False') return false;
      if (word === 'None') return null;
      const w = word.replace(/^\+/, '');
      return w === 'inf' ? Infinity : w === '-inf' ? -Infinity : /nan$/.test(w) ? NaN : Number(w);
    }
    // `set()`, `frozenset()`, `frozenset({…})`: the set's items as a list.
    if (this.sticky(SET_CALL) !== null) {
      this.ws();
      const items = this.s[this.i] === ')' ? [] : this.value();
      this.ws();
      if (this.s[this.i] !== ')' || !Array.isArray(items)) this.fail();
      this.i++;
      return items;
    }
    return this.fail();
  }

  /** The text `re` (sticky) matches here, consumed; null if it does not match. */
  private sticky(re: RegExp): string | null {
    re.lastIndex = this.i;
    const m = re.exec(this.s);
    if (m === null) return null;
    this.i += m[0].length;
    return m[0];
  }

  /** A dict, or a set (`{1, 2}`; `{}` is a dict). */
  private braces(): unknown {
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return {};
    }
    const first = this.value();
    this.ws();
    if (this.s[this.i] !== ':') return this.items([first], '}');
    const out: Record<string, unknown> = {};
    let k: unknown = first;
    for (;;) {
      this.i++; // the ':'
      out[String(k)] = this.value();
      if (!this.separator('}')) return out;
      k = this.value();
      this.ws();
      if (this.s[this.i] !== ':') this.fail('expected :');
    }
  }

  private seq(close: string): unknown[] {
    this.i++;
    this.ws();
    if (this.s[this.i] === close) {
      this.i++;
      return [];
    }
    return this.items([this.value()], close);
  }

  /** The rest of a list, tuple or set whose first items are read. */
  private items(out: unknown[], close: string): unknown[] {
    while (this.separator(close)) out.push(this.value());
    return out;
  }

  /** After an item: true at `,` followed by another item, false after the closing bracket (consumed). */
  private separator(close: string): boolean {
    this.ws();
    const comma = this.s[this.i] === ',';
    if (comma) {
      this.i++;
      this.ws();
    }
    if (this.s[this.i] === close) {
      this.i++;
      return false;
    }
    if (this.i >= this.s.length) this.fail('unterminated');
    if (!comma) this.fail();
    return true;
  }

  /** One string literal, or several in a row (pprint wraps a long string into adjacent literals). */
  private strings(): string {
    let out = this.str();
    for (;;) {
      const at = this.i;
      this.ws();
      const c = this.s[this.i];
      if (c !== "'" && c !== '"') {
        this.i = at;
        return out;
      }
      out += this.str();
    }
  }

  private str(): string {
    const q = this.s[this.i++];
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) this.fail('unterminated string');
      const c = this.s[this.i];
      if (c === q) {
        this.i++;
        return out;
      }
      if (c === '\n') this.fail('unterminated string');
      if (c !== '\\') {
        out += c;
        this.i++;
        continue;
      }
      const n = this.s[this.i + 1];
      const hex = n === 'x' ? 2 : n === 'u' ? 4 : n === 'U' ? 8 : 0;
      if (hex > 0) {
        const digits = this.s.slice(this.i + 2, this.i + 2 + hex);
        if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex) this.fail('bad escape');
        out += String.fromCodePoint(parseInt(digits, 16));
        this.i += 2 + hex;
      } else if (n !== undefined && n in SIMPLE_ESCAPES) {
        out += SIMPLE_ESCAPES[n];
        this.i += 2;
      } else if (n !== undefined && /[0-7]/.test(n)) {
        const oct = /^[0-7]{1,3}/.exec(this.s.slice(this.i + 1))![0];
        out += String.fromCharCode(parseInt(oct, 8));
        this.i += 1 + oct.length;
      } else {
        out += `\\${n ?? ''}`; // Python keeps an unknown escape as written
        this.i += 2;
      }
    }
  }
}

/**
 * The end of the value that starts at `from`: the first `,`, `}` or `]` (or `)`) outside brackets
 * and strings. `<…>` reprs nest and may hold anything but `>` (even a lone quote).
 */
function skipValue(s: string, from: number): number {
  let depth = 0;
  let angle = 0;
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (angle > 0) {
      if (c === '<') angle++;
      else if (c === '>') angle--;
    } else if (quote) {
      if (c === '\\') i++;
      else if (c === quote || c === '\n') quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '<') angle++;
    else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') {
      if (depth === 0) return i;
      depth--;
    } else if (c === ',' && depth === 0) return i;
  }
  return s.length;
}

/** A value's text for a message: on one line, at most 200 characters. */
const shorten = (text: string) => {
  const t = text.trim().replace(/\s*\n\s*/g, ' ');
  return t.length > 200 ? `${t.slice(0, 197)}...` : t;
};

/** A setting of the dict whose value could not be read, with why. */
export interface UnreadSetting {
  readonly setting: string;
  readonly reason: string;
}

/**
 * The "Overridden settings" dict: its keys in order, every value that is a Python literal, and the
 * keys whose value is not (each skipped alone, with its text). Null when the text is not a dict at all.
 */
export function readSettingsDict(text: string): { keys: string[]; values: Record<string, unknown>; skipped: UnreadSetting[] } | null {
  const p = new PyParser(text);
  p.ws();
  if (p.s[p.i] !== '{') return null;
  p.i++;
  const keys: string[] = [];
  const values: Record<string, unknown> = {};
  const skipped: UnreadSetting[] = [];
  for (;;) {
    p.ws();
    if (p.i >= p.s.length) {
      skipped.push({ setting: '(the rest)', reason: 'the settings end before their closing }' });
      break;
    }
    if (p.s[p.i] === '}') break;
    if (p.s[p.i] === ',') {
      p.i++;
      continue;
    }
    let key: string;
    try {
      const k = p.value();
      if (typeof k !== 'string' && typeof k !== 'number') p.fail('a setting name');
      key = String(k);
      p.ws();
      if (p.s[p.i] !== ':') p.fail('expected :');
      p.i++;
    } catch (e) {
      if (!(e instanceof NotLiteral)) throw e;
      const end = skipValue(p.s, p.i);
      skipped.push({ setting: '(the rest)', reason: `unreadable from ${JSON.stringify(shorten(p.s.slice(p.i, end)))}` });
      break;
    }
    p.ws();
    const start = p.i;
    keys.push(key);
    try {
      const v = p.value();
      p.ws();
      if (p.i < p.s.length && p.s[p.i] !== ',' && p.s[p.i] !== '}') p.fail();
      values[key] = v;
    } catch (e) {
      if (!(e instanceof NotLiteral)) throw e;
      const end = skipValue(p.s, start);
      const cut = end >= p.s.length;
      skipped.push({ setting: key, reason: `${cut ? 'cut off' : 'not a Python literal'}: ${shorten(p.s.slice(start, end))}` });
      p.i = end;
      if (cut) return { keys, values, skipped };
    }
  }
  return { keys, values, skipped };
}

/** A Python literal (dict, list, tuple, set, str, number, True/False/None) as JSON-like data; undefined if unreadable. */
export function parsePythonLiteral(text: string): unknown {
  const p = new PyParser(text);
  try {
    const v = p.value();
    p.ws();
    return p.i === p.s.length ? v : undefined;
  } catch (e) {
    if (e instanceof NotLiteral) return undefined;
    throw e;
  }
}

/** Whether the brackets of a partial literal are balanced (outside strings and `<…>` reprs): the dict is complete. */
export function bracketsBalanced(text: string): boolean {
  let depth = 0;
  let angle = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (angle > 0) {
      if (c === '<') angle++;
      else if (c === '>') angle--;
    } else if (quote) {
      if (c === '\\') i++;
      else if (c === quote || c === '\n') quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '<') angle++;
    else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
  }
  return depth <= 0 && quote === null && angle <= 0;
}
