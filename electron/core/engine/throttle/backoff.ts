// Backoff on 429/503 and failures (SPEC 5.2) as plain state and pure functions: one step per
// burst, stepwise recovery, and Retry-After / RateLimit headers turned into a block time.

import type { Randomize, ScopeBackoff, Settings } from '../../../../shared/settings';

export interface BackoffParams {
  readonly httpCodes: readonly number[];
  readonly exceptions: readonly string[];
  readonly factor: number;
  readonly minDelay: number;
  readonly maxDelay: number;
  readonly jitter: Randomize;
  /** Seconds. */
  readonly window: number;
}

/** Global backoff settings with a scope's `backoff` map laid over them. */
export function backoffParams(s: Settings, scope?: ScopeBackoff): BackoffParams {
  return {
    httpCodes: scope?.http_codes ?? s.BACKOFF_HTTP_CODES,
    exceptions: scope?.exceptions ?? s.BACKOFF_EXCEPTIONS,
    factor: scope?.delay_factor ?? s.BACKOFF_DELAY_FACTOR,
    minDelay: scope?.min_delay ?? s.BACKOFF_MIN_DELAY,
    maxDelay: scope?.max_delay ?? s.BACKOFF_MAX_DELAY,
    jitter: scope?.jitter ?? s.BACKOFF_JITTER,
    window: scope?.window ?? s.BACKOFF_WINDOW,
  };
}

export class BackoffState {
  level = 0;
  /** The scope's effective delay (s) just before backoff began. */
  base = 0;
  /** When the latest step up happened (epoch ms). */
  lastStepAt = -Infinity;
  /** When the latest feedback or step down happened: recovery counts quiet time from here. */
  quietSince = -Infinity;
  /** Good responses since quietSince. */
  good = 0;
  /** Retry-After / RateLimit block (epoch ms); 0 = none. */
  blockedUntil = 0;
  blockReason = '';
}

/** Whether a response status or failure kind is backoff feedback. */
export function isFeedback(p: BackoffParams, status: number | null, errorKind: string | null): boolean {
  if (status !== null) return p.httpCodes.includes(status);
  return errorKind !== null && p.exceptions.includes(errorKind);
}

/** The backoff delay at the current level, in seconds (0 at level 0). */
export function backoffDelay(b: BackoffState, p: BackoffParams): number {
  if (b.level === 0) return 0;
  const first = Math.max(p.minDelay, b.base * p.factor);
  return Math.min(p.maxDelay, first * p.factor ** (b.level - 1));
}

/**
 * Feedback for a request that started at `startedAt`: one step up, unless the request was sent
 * before the latest step (a burst sent at the old rate counts once). Returns whether it stepped.
 */
export function stepUp(b: BackoffState, startedAt: number, now: number, delayBefore: number): boolean {
  b.quietSince = now;
  b.good = 0;
  if (b.level > 0 && startedAt < b.lastStepAt) return false;
  if (b.level === 0) b.base = delayBefore;
  b.level++;
  b.lastStepAt = now;
  return true;
}

/** A good response; after a quiet window with one, the level goes down by one. Returns whether it did. */
export function recover(b: BackoffState, now: number, p: BackoffParams): boolean {
  if (b.level === 0) return false;
  b.good++;
  if (now - b.quietSince < p.window * 1000) return false;
  b.level--;
  b.quietSince = now;
  b.good = 0;
  return true;
}

/** Manual reset (the GUI's "reset backoff"). */
export function resetBackoff(b: BackoffState): void {
  b.level = 0;
  b.base = 0;
  b.good = 0;
  b.blockedUntil = 0;
  b.blockReason = '';
}

type Headers = Readonly<Record<string, string | string[]>> | null;

function header(h: Headers, name: string): string | undefined {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After: delay-seconds or an HTTP date; the time it names (epoch ms), or null. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return now + Number(v) * 1000;
  const date = Date.parse(v);
  return Number.isFinite(date) ? Math.max(now, date) : null;
}

/** A RateLimit reset value: seconds from now, or epoch seconds when it is that large. */
function resetTime(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const n = Number(value.trim());
  if (!Number.isFinite(n) || n < 0) return null;
  return n > 1e9 ? n * 1000 : now + n * 1000;
}

/** `RateLimit: limit=10, remaining=0, reset=5` (newer draft) → its parameters. */
function structuredRateLimit(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  for (const part of value.split(/[;,]/)) {
    const m = /^\s*([a-z]+)\s*=\s*"?([^"\s]*)"?\s*$/i.exec(part);
    if (m) out[m[1].toLowerCase()] = m[2];
  }
  return out;
}

export interface Block {
  readonly until: number;
  readonly reason: string;
}

/**
 * What the response's headers say about waiting: Retry-After (on any response), or a
 * RateLimit/X-RateLimit reset with remaining 0 (even on a 200). Capped at `maxDelay` seconds.
 */
export function blockFromHeaders(h: Headers, status: number, now: number, maxDelay: number, feedback: boolean): Block | null {
  // Per-response path: most responses carry none of these headers; answer without allocating.
  if (!h || (h['retry-after'] === undefined && h['ratelimit'] === undefined && h['ratelimit-remaining'] === undefined &&
    h['ratelimit-reset'] === undefined && h['x-ratelimit-remaining'] === undefined && h['x-ratelimit-reset'] === undefined)) {
    return null;
  }
  const cap = now + maxDelay * 1000;
  const retryAfter = parseRetryAfter(header(h, 'retry-after'), now);
  if (retryAfter !== null && (feedback || status === 429 || status === 503)) {
    return { until: Math.min(retryAfter, cap), reason: `Retry-After: ${header(h, 'retry-after')}` };
  }
  const structured = structuredRateLimit(header(h, 'ratelimit'));
  for (const [remaining, reset, name] of [
    [header(h, 'ratelimit-remaining') ?? structured.remaining, header(h, 'ratelimit-reset') ?? structured.reset, 'RateLimit'],
    [header(h, 'x-ratelimit-remaining'), header(h, 'x-ratelimit-reset'), 'X-RateLimit'],
  ] as const) {
    if (remaining === undefined || Number(remaining) !== 0) continue;
    const until = resetTime(reset, now);
    if (until !== null && until > now) return { until: Math.min(until, cap), reason: `${name}-Remaining: 0, reset ${reset}` };
  }
  if (feedback) {
    const until = resetTime(header(h, 'ratelimit-reset') ?? structured.reset ?? header(h, 'x-ratelimit-reset'), now);
    if (until !== null && until > now) return { until: Math.min(until, cap), reason: `RateLimit-Reset: ${header(h, 'ratelimit-reset') ?? header(h, 'x-ratelimit-reset')}` };
  }
  return null;
}
