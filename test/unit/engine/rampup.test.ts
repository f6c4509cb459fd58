// The rampup law (SPEC 5.3) on simulated time against a sliding-window rate limiter: it finds
// the allowed rate, stays close to it, and draws about RAMPUP_BACKOFF_TARGET feedback per window.
import { describe, expect, it } from 'vitest';
import { BETA, RampupState, rampupBegin, rampupFeedback, rampupRate } from '../../../electron/core/engine/throttle/rampup';

/** Sends at the controller's rate for `seconds` against a limiter allowing `limit` per 1 s; the limiter's 429 reaches the controller after `rtt` ms. */
function simulate(limit: number, seconds: number, target: number | [number, number], window: number, rtt = 30) {
  const r = new RampupState();
  const p = { target, window };
  const accepted: number[] = [];
  const pending: { at: number; sent: number }[] = [];
  let t = 0;
  let refused = 0;
  let sent = 0;
  const refusedAt: number[] = [];
  rampupBegin(r, 0);
  while (t < seconds * 1000) {
    while (pending.length && pending[0].at <= t) {
      const f = pending.shift()!;
      rampupFeedback(r, f.sent, f.at, p);
    }
    sent++;
    rampupBegin(r, t);
    while (accepted.length && accepted[0] <= t - 1000) accepted.shift();
    if (accepted.length < limit) accepted.push(t);
    else {
      refused++;
      refusedAt.push(t);
      pending.push({ at: t + rtt, sent: t });
    }
    t += 1000 / rampupRate(r, t, p);
  }
  return { sent, refused, rate: (sent - refused) / seconds, refusedAt, r };
}

describe('rampup', () => {
  it('starts slowly and doubles each second until feedback', () => {
    const r = new RampupState();
    rampupBegin(r, 0);
    const p = { target: 1, window: 60 };
    expect(rampupRate(r, 0, p)).toBe(1);
    expect(rampupRate(r, 3000, p)).toBe(8);
  });

  it('cuts to BETA of the rate once per burst and climbs back to it after window/target seconds', () => {
    const r = new RampupState();
    rampupBegin(r, 0);
    const p = { target: 2, window: 60 };
    expect(rampupFeedback(r, 4000, 4100, p)).toBe(true); // rate at 4.1 s: ~17.1
    const wMax = r.wMax;
    expect(rampupRate(r, 4100, p)).toBeCloseTo(BETA * wMax, 9);
    expect(rampupFeedback(r, 4050, 4200, p)).toBe(false); // sent before the cut: same burst
    expect(rampupRate(r, 4100 + 30_000, p)).toBeCloseTo(wMax, 9); // K = 60 / 2
    expect(rampupRate(r, 4100 + 15_000, p)).toBeGreaterThan(0.95 * wMax); // flat near wMax
  });

  it('finds a 20 req/s limit: >= 85% of it, few refusals, about one feedback burst per window', () => {
    const sim = simulate(20, 600, 1, 60);
    expect(sim.rate).toBeGreaterThan(0.85 * 20);
    expect(sim.refused / sim.sent).toBeLessThan(0.02);
    // After the first minute, refusals come in about one burst per window, not oscillating.
    const bursts = sim.refusedAt.filter((t, i, a) => t > 60_000 && (i === 0 || t - a[i - 1] > 1000)).length;
    expect(bursts).toBeGreaterThanOrEqual(5);
    expect(bursts).toBeLessThanOrEqual(14);
  });

  it('probes harder for a higher target', () => {
    const one = simulate(20, 600, 1, 60);
    const four = simulate(20, 600, [3, 5], 60);
    expect(four.refused).toBeGreaterThan(one.refused);
  });
});
