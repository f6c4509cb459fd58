// Rampup (SPEC 5.3): a rate controller that learns the highest rate a server accepts, modelled
// on TCP CUBIC: multiplicative decrease per feedback burst, then a cubic climb back that slows
// down near the rate where feedback began and probes past it at a pace set by the target.
//
// The law, with rates in requests per second and times in seconds:
// - before any feedback (slow start) the rate doubles every SLOW_START_DOUBLING s from START_RATE;
// - on feedback for a request sent a span or more after the latest cut (before that, the server's
//   window still holds what was sent before the cut): wMax = what the server admitted before
//   the refusal: the requests started in the `span` seconds before the refused one, over `span`
//   (span = the refusal's announced wait, 1 to MAX_SPAN s; 1 s when it names none), or over
//   LONG_SPANS spans if that is more (one window squeezed by timing noise then does not lower
//   wMax; a real drop of the limit shows in it once a block has emptied part of it), and never
//   above the nominal rate then (issue 17: the rate the server's window actually held, not the
//   nominal rate, which runs ahead when leaving slow start); a rate-limit refusal that came at or
//   below the previous wMax while at least KEEP_SHARE of it was still admitted keeps that wMax
//   (timing noise at the limit, not a lower limit);
// - the curve's top is wMax less a margin: 0 for any feedback but a rate-limit refusal; for a
//   refusal that says it is a rate limit (429, or a Retry-After / RateLimit wait) wMax is a
//   measured limit, and the top keeps `margin` below it (MARGIN to MARGIN_MAX: timing noise between
//   our starts and the server's clock must not fill its window); a refusal below the top (noise)
//   widens the margin by MARGIN_STEP, one past it (the probe) narrows it again;
// - the rate drops to beta * top: BETA_LIMIT for a rate-limit refusal (the Retry-After block has
//   emptied the server's window already: a deep cut only wastes it), BETA for any other feedback
//   (overload, failures), where wMax is only the rate it began at;
// - then rate(t) = C (t − K)³ + top, t = time since the cut, with K = window / target, so the
//   curve is flat around the top and reaches it again after K seconds: about `target` feedback
//   responses per window. C = top (1 − beta) / K³ makes rate(0) = beta * top.
// A target pair [min, max] aims at its middle; a target of 0 probes four times more slowly.
// The rate is paced as a gap (1 / rate, jittered) and as a window (policy.ts): no more than
// rate * span starts in any span, so jitter and late timers never put more in the server's window.

import { StartRing } from './pace';

export const BETA = 0.8;
/** The cut after a refusal that says it is a rate limit, below the top (wMax less the margin). */
export const BETA_LIMIT = 0.99;
/** The top's margin below a measured limit: at first, at most, and its step. */
export const MARGIN = 0.01;
export const MARGIN_MAX = 0.08;
export const MARGIN_STEP = 1.5;
export const START_RATE = 1;
export const SLOW_START_DOUBLING = 0.25;
/** Longest span (s) over which what the server admitted is counted at a cut. */
export const MAX_SPAN = 10;
/** The longer count at a cut covers this many spans. */
export const LONG_SPANS = 5;
/** A refusal below the limit found keeps it when at least this share of it was still admitted. */
export const KEEP_SHARE = 0.9;
/** Highest rate rampup ever allows (a floor of 1 ms on its delay). */
export const MAX_RATE = 1000;

export interface RampupParams {
  /** Backoff responses per window to aim for. */
  readonly target: number | readonly [number, number];
  /** BACKOFF_WINDOW, seconds. */
  readonly window: number;
}

/** Start times kept to measure what the server admitted (a ring). */
const RECENT = 4096;

export class RampupState {
  /** When the controller started (epoch ms); NaN until the first request. */
  startedAt = NaN;
  /** The latest start times (epoch ms). */
  readonly recent = new StartRing();
  /** Rate where the latest feedback burst began; 0 = still in slow start. */
  wMax = 0;
  /** The latest cut's beta (rate(0) = beta * wMax). */
  beta = BETA;
  /** Share of wMax the curve's top keeps below it (0 but after a rate-limit refusal). */
  margin = 0;
  /** When the latest cut happened (epoch ms). */
  cutAt = -Infinity;
  /** Seconds of the window the rate is paced over (the server's, as far as a refusal told it). */
  span = 1;
}

function aim(target: RampupParams['target']): number {
  return typeof target === 'number' ? target : (target[0] + target[1]) / 2;
}

/** The allowed rate at `now` (requests per second). */
export function rampupRate(r: RampupState, now: number, p: RampupParams): number {
  if (Number.isNaN(r.startedAt)) return START_RATE;
  if (r.wMax === 0) {
    const t = (now - r.startedAt) / 1000;
    return Math.min(MAX_RATE, START_RATE * 2 ** (t / SLOW_START_DOUBLING));
  }
  const n = aim(p.target);
  const k = n > 0 ? p.window / n : p.window * 4;
  const top = r.wMax * (1 - r.margin);
  const c = (top * (1 - r.beta)) / k ** 3;
  const t = (now - r.cutAt) / 1000;
  return Math.max(0.01, Math.min(MAX_RATE, c * (t - k) ** 3 + top));
}

/** The delay rampup asks for at `now`, seconds. */
export function rampupDelay(r: RampupState, now: number, p: RampupParams): number {
  return 1 / rampupRate(r, now, p);
}

/** A request started (slow start counts from the first). */
export function rampupBegin(r: RampupState, now: number): void {
  if (Number.isNaN(r.startedAt)) {
    r.startedAt = now;
    r.recent.reserve(RECENT);
  }
  r.recent.push(now);
}

/** Requests actually started in the second before `now`. */
export function sentLastSecond(r: RampupState, now: number): number {
  return r.recent.countIn(now - 1000, now + 1e-9);
}

/**
 * Requests per second the server admitted before a refusal of the request sent at `startedAt`:
 * those started in the `span` s before it, over `span` (a shorter span when the ring no longer
 * holds all of them); NaN when none started.
 */
export function admittedRate(r: RampupState, startedAt: number, span: number): number {
  let s = span;
  while (s > 1 && !r.recent.covers(startedAt - s * 1000)) s /= 2;
  const n = r.recent.countIn(startedAt - s * 1000, startedAt);
  return n > 0 ? n / s : NaN;
}

/** What a feedback response says about the server's limit (for the cut). */
export interface RefusalHint {
  /** It says it is a rate limit (429, or a Retry-After / RateLimit wait). */
  readonly limit: boolean;
  /** Seconds it asked to wait, or null. */
  readonly waitS: number | null;
}

/** Feedback for a request sent at `startedAt`: a cut, once per burst. Returns whether it cut. */
export function rampupFeedback(r: RampupState, startedAt: number, now: number, p: RampupParams, hint?: RefusalHint): boolean {
  // One cut per burst, and per span after a cut: until then the server's window still holds what
  // was sent before the cut (TCP's one cut per round trip).
  if (startedAt < r.cutAt + r.span * 1000) return false;
  if (Number.isNaN(r.startedAt)) r.startedAt = startedAt;
  const rate = rampupRate(r, now, p);
  const span = Math.min(MAX_SPAN, Math.max(1, Math.round(hint?.waitS ?? 1)));
  // Over the span, and over LONG_SPANS of it: leaving slow start the span's count is the server's
  // window; at a steady rate the longer count keeps one noisy window from lowering wMax.
  const short = admittedRate(r, startedAt, span);
  const long = admittedRate(r, startedAt, span * LONG_SPANS);
  const admitted = Math.max(Number.isNaN(short) ? 0 : short, Number.isNaN(long) ? 0 : long);
  let wMax = admitted > 0 ? Math.min(rate, admitted) : rate;
  // Memory: a rate-limit refusal at or below the limit already found, while nearly that much was
  // still admitted, is timing noise at the limit: the limit stays. A real drop shows in the count
  // at the next refusal, once the block has emptied part of its span.
  const prev = r.wMax;
  if (hint?.limit && prev > 0 && rate <= prev && admitted >= KEEP_SHARE * prev) wMax = Math.max(wMax, prev);
  if (!hint?.limit) r.margin = 0;
  else if (prev === 0 || r.margin === 0) r.margin = MARGIN;
  else if (rate <= prev * (1 - r.margin) * (1 + 1e-9)) r.margin = Math.min(MARGIN_MAX, r.margin * MARGIN_STEP);
  else r.margin = Math.max(MARGIN, r.margin / MARGIN_STEP);
  r.wMax = wMax;
  r.beta = hint?.limit ? BETA_LIMIT : BETA;
  r.span = span;
  r.cutAt = now;
  return true;
}
