// Rampup (SPEC 5.3): a rate controller that learns the highest rate a server accepts, modelled
// on TCP CUBIC: multiplicative decrease per feedback burst, then a cubic climb back that slows
// down near the rate where feedback began and probes past it at a pace set by the target.
//
// The law, with rates in requests per second and times in seconds:
// - before any feedback (slow start) the rate doubles every SLOW_START_DOUBLING s from START_RATE;
// - on feedback for a request sent after the latest cut: wMax = the rate then (no more than the
//   rate requests were actually sent at over the last second, which matters when leaving slow
//   start, where the nominal rate runs ahead), and the rate drops to BETA * wMax;
// - then rate(t) = C (t − K)³ + wMax, t = time since the cut, with K = window / target, so the
//   curve is flat around wMax and reaches it again after K seconds: about `target` feedback
//   responses per window. C = wMax (1 − BETA) / K³ makes rate(0) = BETA * wMax.
// A target pair [min, max] aims at its middle; a target of 0 probes four times more slowly.

export const BETA = 0.8;
export const START_RATE = 1;
export const SLOW_START_DOUBLING = 1;
/** Highest rate rampup ever allows (a floor of 1 ms on its delay). */
export const MAX_RATE = 1000;

export interface RampupParams {
  /** Backoff responses per window to aim for. */
  readonly target: number | readonly [number, number];
  /** BACKOFF_WINDOW, seconds. */
  readonly window: number;
}

/** Start times kept to measure the actual send rate (a ring). */
const RECENT = 256;

export class RampupState {
  /** When the controller started (epoch ms); NaN until the first request. */
  startedAt = NaN;
  /** The latest start times (epoch ms), a ring of RECENT. */
  readonly recent = new Float64Array(RECENT).fill(-Infinity);
  next = 0;
  /** Rate where the latest feedback burst began; 0 = still in slow start. */
  wMax = 0;
  /** When the latest cut happened (epoch ms). */
  cutAt = -Infinity;
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
  const c = (r.wMax * (1 - BETA)) / k ** 3;
  const t = (now - r.cutAt) / 1000;
  return Math.max(0.01, Math.min(MAX_RATE, c * (t - k) ** 3 + r.wMax));
}

/** The delay rampup asks for at `now`, seconds. */
export function rampupDelay(r: RampupState, now: number, p: RampupParams): number {
  return 1 / rampupRate(r, now, p);
}

/** A request started (slow start counts from the first). */
export function rampupBegin(r: RampupState, now: number): void {
  if (Number.isNaN(r.startedAt)) r.startedAt = now;
  r.recent[r.next] = now;
  r.next = (r.next + 1) % RECENT;
}

/** Requests actually started in the second before `now`. */
export function sentLastSecond(r: RampupState, now: number): number {
  let n = 0;
  for (let i = 0; i < RECENT; i++) if (r.recent[i] > now - 1000 && r.recent[i] <= now) n++;
  return n;
}

/** Feedback for a request sent at `startedAt`: a cut, once per burst. Returns whether it cut. */
export function rampupFeedback(r: RampupState, startedAt: number, now: number, p: RampupParams): boolean {
  if (startedAt < r.cutAt) return false;
  if (Number.isNaN(r.startedAt)) r.startedAt = startedAt;
  const rate = rampupRate(r, now, p);
  const sent = sentLastSecond(r, now);
  r.wMax = sent > 0 ? Math.min(rate, sent) : rate;
  r.cutAt = now;
  return true;
}
