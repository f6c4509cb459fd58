// Pacing by the server's own rate-limit headers (issue 17): `RateLimit-Limit/-Remaining/-Reset`,
// `RateLimit: limit=…, remaining=…, reset=…`, `X-RateLimit-*`, and `RateLimit-Policy: L;w=W`.
// A server that says its limit is paced at it exactly instead of being probed with refusals.
//
// The law: with the limit L and the window W (seconds), the scope starts at most L − 1 requests in
// any W + margin (one kept in reserve, so a response never says remaining 0 and blocks the scope),
// spaced by W / L (no bursts). W is the policy's `w` when sent; else it is bounded from the
// responses: the server's count in its window is L − remaining, so the oldest request in it is at
// the latest our (L − remaining)-th most recent start, and the window ends no later than `reset`
// after that; the least such bound seen is W. That bound is exact for a sliding window but short
// for a fixed one (its oldest request may come late in it), so W is never taken below the longest
// wait a reset has announced (less its rounding: whole seconds are rounded up by servers).
// A remaining of 0 still blocks until the reset (backoff.ts): the pacing never replaces a block.

import { MAX_RING, StartRing } from './pace';

type Headers = Readonly<Record<string, string | string[]>> | null;

function header(h: Headers, name: string): string | undefined {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** What a response's rate-limit headers say: the limit, what remains, and when the window resets (epoch ms). */
export interface RateLimitInfo {
  readonly limit: number;
  readonly remaining: number;
  readonly resetAt: number;
  /** How coarse the reset is (ms): 1000 for whole seconds, which servers round up; else 0. */
  readonly resolutionMs: number;
  /** The policy's window in seconds (`RateLimit-Policy: 100;w=60`), or null. */
  readonly windowS: number | null;
}

/** `limit=10, remaining=0, reset=5` or `100;w=60` → its parameters (the first item's number is `q`). */
function params(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!value) return out;
  const parts = value.split(/[;,]/);
  for (let i = 0; i < parts.length; i++) {
    const m = /^\s*([a-z]+)\s*=\s*"?([^"\s]*)"?\s*$/i.exec(parts[i]);
    if (m) out[m[1].toLowerCase()] = m[2];
    else if (i === 0 && /^\s*\d+\s*$/.test(parts[i])) out.q = parts[i].trim();
  }
  return out;
}

function count(v: string | undefined): number {
  if (v === undefined) return NaN;
  const n = Number(v.trim());
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : NaN;
}

/** A reset value: seconds from now, or epoch seconds when that large (as backoff.ts reads it). */
function resetAt(v: string | undefined, now: number): number {
  if (v === undefined) return NaN;
  const n = Number(v.trim());
  if (!Number.isFinite(n) || n < 0) return NaN;
  return n > 1e9 ? n * 1000 : now + n * 1000;
}

function resolution(v: string | undefined): number {
  return v !== undefined && /^\s*\d+\s*$/.test(v) ? 1000 : 0;
}

/** The rate-limit headers of a response, or null when it lacks a limit, a remaining or a reset. */
export function rateLimitInfo(h: Headers, now: number): RateLimitInfo | null {
  if (!h) return null;
  const hasStd = h['ratelimit-limit'] !== undefined || h['ratelimit'] !== undefined || h['ratelimit-policy'] !== undefined;
  const hasX = h['x-ratelimit-limit'] !== undefined;
  if (!hasStd && !hasX) return null;
  const policy = params(header(h, 'ratelimit-policy'));
  const w = Number(policy.w);
  const windowS = Number.isFinite(w) && w > 0 ? w : null;
  if (hasStd) {
    const st = params(header(h, 'ratelimit'));
    const limit = count(header(h, 'ratelimit-limit') ?? st.limit ?? policy.q);
    const remaining = count(header(h, 'ratelimit-remaining') ?? st.remaining);
    const raw = header(h, 'ratelimit-reset') ?? st.reset;
    const reset = resetAt(raw, now);
    if (limit >= 1 && remaining >= 0 && Number.isFinite(reset)) return { limit, remaining, resetAt: reset, resolutionMs: resolution(raw), windowS };
  }
  if (hasX) {
    const limit = count(header(h, 'x-ratelimit-limit'));
    const remaining = count(header(h, 'x-ratelimit-remaining'));
    const raw = header(h, 'x-ratelimit-reset');
    const reset = resetAt(raw, now);
    if (limit >= 1 && remaining >= 0 && Number.isFinite(reset)) return { limit, remaining, resetAt: reset, resolutionMs: resolution(raw), windowS };
  }
  return null;
}

/** Margin added to the window (ms): the larger of this and MARGIN_SHARE of the window. */
export const MARGIN_MS = 20;
export const MARGIN_SHARE = 0.002;

/** A scope's header pacing: the server's limit and window as learned, and its own starts. */
export class HeaderPace {
  /** The latest limit; 0 = the server never said. */
  limit = 0;
  /** The window (ms) as bounded so far; Infinity = no bound yet. */
  windowMs = Infinity;
  /** Whether windowMs came from the policy header (exact). */
  fromPolicy = false;
  /** The least bound on the window from the starts (ms), and the longest announced wait (ms, less rounding). */
  bound = Infinity;
  longestWait = 0;
  readonly starts = new StartRing();

  /** Whether the scope is paced by headers (a limit and a window are known). */
  get active(): boolean {
    return this.limit > 0 && Number.isFinite(this.windowMs);
  }

  /** Requests allowed per window (one kept in reserve). */
  perWindow(): number {
    return Math.max(1, this.limit - 1);
  }

  /** The paced window (ms): the server's plus a margin for timing noise. */
  spanMs(): number {
    return this.windowMs + Math.max(MARGIN_MS, this.windowMs * MARGIN_SHARE);
  }

  /** The gap (s) that spreads a window's requests evenly. */
  gapSeconds(): number {
    return this.active ? this.spanMs() / 1000 / this.perWindow() : 0;
  }

  /** Earliest start (epoch ms) the window allows; −∞ when not paced. */
  readyAt(): number {
    return this.active ? this.starts.windowReadyAt(this.perWindow(), this.spanMs()) : -Infinity;
  }
}

/** A request of the scope started. */
export function headerPaceBegin(hp: HeaderPace, now: number): void {
  hp.starts.push(now);
}

/**
 * A response with rate-limit headers, for a request started at `startedAt`: learns the limit and
 * bounds the window. Returns whether the pacing changed (limit or window).
 */
export function headerPaceUpdate(hp: HeaderPace, info: RateLimitInfo, startedAt: number, now: number): boolean {
  const before = hp.limit * 1e9 + hp.windowMs;
  hp.limit = info.limit;
  hp.starts.reserve(Math.min(MAX_RING, info.limit + 1));
  if (info.windowS !== null) {
    hp.windowMs = info.windowS * 1000;
    hp.fromPolicy = true;
  } else if (!hp.fromPolicy) {
    // The (limit − remaining)-th most recent start up to this request's own: the oldest the server counts, or earlier.
    const inWindow = info.limit - info.remaining;
    let k = 0;
    let bound = NaN;
    if (inWindow >= 1 && inWindow <= hp.starts.capacity) {
      // Skip the starts after this request's own.
      for (k = 1; k <= hp.starts.capacity && hp.starts.nth(k) > startedAt; k++);
      const oldest = hp.starts.nth(k + inWindow - 1);
      if (oldest > -Infinity) bound = info.resetAt - oldest;
    }
    if (bound > 0 && bound < hp.bound) hp.bound = bound;
    const wait = info.resetAt - now - info.resolutionMs;
    if (wait > hp.longestWait) hp.longestWait = wait;
    if (Number.isFinite(hp.bound)) hp.windowMs = Math.max(hp.bound, hp.longestWait);
    else if (info.resetAt > now) hp.windowMs = Math.max(hp.windowMs === Infinity ? 0 : hp.windowMs, info.resetAt - now);
  }
  return hp.limit * 1e9 + hp.windowMs !== before;
}
