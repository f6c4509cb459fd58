// The one per-response throttle step (SPEC 4.2, 5.2, 5.3): AutoThrottle, backoff and its recovery,
// rampup, and the server's Retry-After / RateLimit block, applied to one scope's policy state. The
// crawler, the what-if replay and the conformance replay all call it; it returns one decision
// record, the only source of the stored response row's delays, the debug line and every export.

import type { Settings } from '../../../../shared/settings';
import type { ChangeSource, DelayCause, ThrottleNote } from '../../../../shared/types';
import { autothrottleApplies, autothrottleNextDelay } from './autothrottle';
import { backoffDelay, blockFromHeaders, isFeedback, recover, stepUp, type Block } from './backoff';
import type { SlotPolicy } from './policy';
import { rampupFeedback, rampupRate, type RefusalHint } from './rampup';
import { HeaderPace, headerPaceBegin, headerPaceUpdate, rateLimitInfo } from './ratelimit';

type Headers = Readonly<Record<string, string | string[]>> | null;

/** One response (or failed download) as the throttle sees it. Times are epoch ms. */
export interface ResponseFeedback {
  /** When it ended: the step's `now`. */
  readonly t: number;
  /** When its request started (a burst sent before the latest backoff step counts once). */
  readonly startedAt: number;
  /** HTTP status; null for a failed download. */
  readonly status: number | null;
  readonly errorKind: string | null;
  /** Seconds to the response headers; null when none was measured. */
  readonly latency: number | null;
  /** In flight on the scope, this one included. */
  readonly inFlight: number;
  readonly meta?: Readonly<Record<string, unknown>>;
  /** The THROTTLING_MANAGER plug-in's verdict, in place of the status rule. */
  readonly backoff?: boolean;
  /** The response's headers: the server's block is read from them … */
  readonly headers?: Headers;
  /** … or given as it was recorded (the what-if replay); null for none. */
  readonly block?: Block | null;
  /** For the words of the notes. */
  readonly url?: string;
  /** The quota units the request took from this scope at its start (SPEC 5.4), to settle against the actual cost. */
  readonly quota?: { readonly windowStart: number; readonly expected: number };
  /** The plug-in's actual cost: a number, or a map scope → number. */
  readonly cost?: unknown;
}

/** A change of the scope's state the step made, to be recorded with the response's time. */
export interface StepChange {
  readonly setting: 'backoff_level' | 'rampup_rate' | 'blocked_until';
  readonly source: ChangeSource;
  readonly oldValue: unknown;
  readonly newValue: unknown;
}

/** A note in words for the log (an 'info' event). */
export interface StepNote {
  readonly code: ThrottleNote;
  readonly text: string;
}

/** What the step decided for one response: the record every view renders. */
export interface ThrottleDecision {
  /** The scope's effective delay (seconds) just before the response, without a block. */
  readonly delayBefore: number;
  /** The effective delay just after, a Retry-After block's time left included, and what binds it (SPEC 4.4). */
  readonly delayAfter: number;
  readonly delayCause: DelayCause;
  readonly backoffLevel: number;
  /** Whether the response was backoff feedback. */
  readonly feedback: boolean;
  /** Whether AutoThrottle saw it (SPEC 4.2: enabled, latency measured, not opted out): it gets a debug line. */
  readonly adjusted: boolean;
  /** Whether the actual cost settled the scope's quota (its waiting requests may fit now). */
  readonly quotaSettled: boolean;
  readonly changes: readonly StepChange[];
  readonly notes: readonly StepNote[];
}

const NONE: readonly never[] = [];

/** Appends to a list made on first use (most responses change nothing: no allocation). */
function add<T>(list: T[] | null, x: T): T[] {
  if (list === null) return [x];
  list.push(x);
  return list;
}

/** The actual cost of a request to scope `key` (SPEC 5.4): the plug-in's, else the scope's quota_header; undefined when neither says. */
function actualCost(x: ResponseFeedback, key: string, header: string | undefined): number | undefined {
  const c = x.cost;
  if (typeof c === 'number') return c;
  if (c !== null && typeof c === 'object' && Object.prototype.hasOwnProperty.call(c, key)) {
    const v = (c as Record<string, unknown>)[key];
    if (typeof v === 'number') return v;
  }
  if (header === undefined || !x.headers) return undefined;
  const v = x.headers[header];
  if (v === undefined) return undefined;
  const n = Number(Array.isArray(v) ? v[0] : v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** What a feedback response says about the limit: a 429, or a wait it names (Retry-After, a RateLimit reset), and how long. */
function refusalHint(x: ResponseFeedback, now: number): RefusalHint {
  const block = x.block !== undefined ? x.block : x.status !== null ? blockFromHeaders(x.headers ?? null, x.status, now, Infinity, true) : null;
  const waitS = block ? Math.max(0, (block.until - now) / 1000) : null;
  return { limit: x.status === 429 || waitS !== null, waitS };
}

/** Feeds one response to one scope's policy; returns the decision. Cancelled downloads feed nothing but AutoThrottle's skip. */
export function throttleStep(p: SlotPolicy, x: ResponseFeedback, s: Settings): ThrottleDecision {
  const delayBefore = p.delaySeconds(s);
  const bp = p.backoffParams(s);
  const feedback = x.backoff ?? isFeedback(bp, x.status, x.errorKind);
  let adjusted = false;
  if (x.status !== null) {
    const at = p.autothrottle(s);
    if (at.enabled && autothrottleApplies(x.latency, x.meta)) {
      p.delay = autothrottleNextDelay(p.delay, x.latency, x.status, at);
      adjusted = true;
    }
  }
  let changes: StepChange[] | null = null;
  let notes: StepNote[] | null = null;
  if (x.errorKind !== 'cancelled') {
    const now = x.t;
    const b = p.backoff;
    const level = b.level;
    const rp = p.rampupParams(s);
    const what = x.status ?? x.errorKind;
    // The server's RateLimit headers: learn its limit and window (the pacing itself is policy.ts's).
    const info = x.headers && s.THROTTLING_RATELIMIT_PACE ? rateLimitInfo(x.headers, now) : null;
    if (info !== null) {
      let hp = p.headerPace;
      if (hp === null) {
        hp = p.headerPace = new HeaderPace();
        headerPaceBegin(hp, x.startedAt);
      }
      const wasActive = hp.active;
      const wasLimit = hp.limit;
      const wasWindow = hp.windowMs;
      // A note when the pacing begins, or its limit or window (by a tenth or more) changes.
      if (headerPaceUpdate(hp, info, x.startedAt, now) && hp.active &&
        (!wasActive || hp.limit !== wasLimit || Math.abs(hp.windowMs - wasWindow) >= wasWindow / 10)) {
        notes = add(notes, { code: 'ratelimit-pace', text: `${p.key} paced by its rate-limit headers: ${hp.perWindow()} per ${(hp.spanMs() / 1000).toFixed(2)} s ` +
          `(limit ${hp.limit} per ${(hp.windowMs / 1000).toFixed(2)} s${hp.fromPolicy ? ' as its policy says' : ' as its resets bound it'}, one kept in reserve)` });
      }
    }
    if (rp) {
      // Rampup replaces stepwise backoff: a cut of the learned rate, once per burst.
      if (feedback) {
        const before = rampupRate(p.rampup, now, rp);
        if (rampupFeedback(p.rampup, x.startedAt, now, rp, refusalHint(x, now))) {
          const after = rampupRate(p.rampup, now, rp);
          changes = add(changes, { setting: 'rampup_rate', source: 'rampup', oldValue: before, newValue: after });
          notes = add(notes, { code: 'rampup-cut', text: `rampup on ${p.key}: ${what} at ${before.toFixed(2)} req/s; now ${after.toFixed(2)} req/s, climbing back` });
        }
      }
    } else if (feedback) {
      if (stepUp(b, x.startedAt, now, p.delaySeconds(s))) {
        changes = add(changes, { setting: 'backoff_level', source: 'backoff', oldValue: level, newValue: b.level });
        notes = add(notes, { code: 'backoff-step', text: `backing off ${p.key}: level ${b.level}, delay ${backoffDelay(b, bp).toFixed(2)} s, after ${what}` +
          (x.url ? ` on ${x.url}` : '') });
      }
    } else if (x.status !== null && x.status < 400 && recover(b, now, bp)) {
      changes = add(changes, { setting: 'backoff_level', source: 'backoff', oldValue: level, newValue: b.level });
    }
    if (x.status !== null) {
      const block = x.block !== undefined ? x.block : blockFromHeaders(x.headers ?? null, x.status, now, bp.maxDelay, feedback);
      // A recorded block is capped again at these settings' BACKOFF_MAX_DELAY.
      const until = block ? Math.min(block.until, now + bp.maxDelay * 1000) : 0;
      if (block && until > b.blockedUntil) {
        const old = b.blockedUntil || null;
        b.blockedUntil = until;
        b.blockReason = block.reason;
        changes = add(changes, { setting: 'blocked_until', source: 'backoff', oldValue: old, newValue: until });
        notes = add(notes, { code: 'retry-after', text: `${p.key} blocked for ${((until - now) / 1000).toFixed(1)} s (${block.reason})` });
      }
    }
  }
  let quotaSettled = false;
  if (x.quota !== undefined && x.errorKind !== 'cancelled') {
    const actual = actualCost(x, p.key, p.scope(s)?.quota_header);
    if (actual !== undefined) {
      p.settleQuota(x.quota.windowStart, actual - x.quota.expected);
      quotaSettled = true;
    }
  }
  const after = p.effectiveDelay(s, x.t);
  return {
    delayBefore,
    delayAfter: after.delay,
    delayCause: after.cause,
    backoffLevel: p.backoff.level,
    feedback,
    adjusted,
    quotaSettled,
    changes: changes ?? NONE,
    notes: notes ?? NONE,
  };
}
