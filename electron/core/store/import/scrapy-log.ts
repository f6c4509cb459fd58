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
// Python literals: the "Overridden settings:" dict Scrapy logs at start-up (pprint, maybe multi-line).

class PyParser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): unknown {
    const v = this.value();
    this.ws();
    if (this.i !== this.s.length) throw new Error(`unexpected ${JSON.stringify(this.s.slice(this.i, this.i + 10))}`);
    return v;
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  private value(): unknown {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.dict();
    if (c === '[') return this.seq(']');
    if (c === '(') return this.seq(')');
    if (c === "'" || c === '"') return this.str();
    const word = /^(?:True|False|None|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(this.s.slice(this.i))?.[0];
    if (!word) throw new Error(`unexpected ${JSON.stringify(this.s.slice(this.i, this.i + 10))}`);
    this.i += word.length;
    return word === 'True' ? true : word === 'False' ? false : word === 'None' ? null : Number(word);
  }

  private dict(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const k = this.value();
      this.ws();
      if (this.s[this.i++] !== ':') throw new Error('expected :');
      out[String(k)] = this.value();
      this.ws();
      if (this.s[this.i] === ',') this.i++;
    }
  }

  private seq(close: string): unknown[] {
    const out: unknown[] = [];
    this.i++;
    for (;;) {
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        return out;
      }
      if (this.i >= this.s.length) throw new Error('unterminated');
      out.push(this.value());
      this.ws();
      if (this.s[this.i] === ',') this.i++;
    }
  }

  private str(): string {
    const q = this.s[this.i++];
    let out = '';
    while (this.i < this.s.length && this.s[this.i] !== q) {
      if (this.s[this.i] === '\\') {
        const n = this.s[this.i + 1];
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
        this.i += 2;
      } else out += this.s[this.i++];
    }
    if (this.s[this.i++] !== q) throw new Error('unterminated string');
    return out;
  }
}

/** A Python literal (dict, list, tuple, str, number, True/False/None) as JSON-like data; undefined if unreadable. */
export function parsePythonLiteral(text: string): unknown {
  try {
    return new PyParser(text).parse();
  } catch {
    return undefined;
  }
}

/** Whether the brackets of a partial literal are balanced (outside strings): the dict is complete. */
export function bracketsBalanced(text: string): boolean {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
  }
  return depth <= 0 && quote === null;
}
