// Rampup (SPEC 5.3): a rate controller that learns the highest rate a server accepts, modelled
// on TCP CUBIC: multiplicative decrease per feedback burst, then a cubic climb back that slows
// down near the rate where feedback began and probes past it at a pace set by the target.
//
// The law, with rates in requests per second and times in seconds:
// - before any feedback (slow start) the rate doubles every SLOW_START_DOUBLING s from START_RATE;
// - on feedback for a request sent after the latest cut: wMax = the rate then, rate = BETA * wMax;
// - then rate(t) = C (t − K)³ + wMax, t = time since the cut, with K = window / target, so the
//   curve is flat around wMax and reaches it again after K seconds: about `target` feedback
//   responses per window. C = wMax (1 − BETA) / K³ makes rate(0) = BETA * wMax.
// A target pair [min, max] aims at its middle; a target of 0 probes four times more slowly.

export const BETA = 0.7;
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

export class RampupState {
  /** When the controller started (epoch ms); NaN until the first request. */
  startedAt = NaN;
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

/** Marks the first request (slow start counts from here). */
export function rampupBegin(r: RampupState, now: number): void {
  if (Number.isNaN(r.startedAt)) r.startedAt = now;
}

/** Feedback for a request sent at `startedAt`: a cut, once per burst. Returns whether it cut. */
export function rampupFeedback(r: RampupState, startedAt: number, now: number, p: RampupParams): boolean {
  if (startedAt < r.cutAt) return false;
  rampupBegin(r, startedAt);
  const rate = rampupRate(r, now, p);
  r.wMax = rate;
  r.cutAt = now;
  return true;
}
