// The rampup law (SPEC 5.3) on simulated time against a sliding-window rate limiter: it finds
// the allowed rate, stays close to it, and draws about RAMPUP_BACKOFF_TARGET feedback per window.
import { describe, expect, it } from 'vitest';
import { BETA, BETA_LIMIT, MARGIN, RampupState, SLOW_START_DOUBLING, rampupBegin, rampupFeedback, rampupRate } from '../../../electron/core/engine/throttle/rampup';

/** Sends at the controller's rate for `seconds` against a limiter allowing `limit` per 1 s; the limiter's 429 reaches the controller after `rtt` ms. */
function simulate(limit: number, seconds: number, target: number | [number, number], window: number, rtt = 30, hint = false) {
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
      rampupFeedback(r, f.sent, f.at, p, hint ? { limit: true, waitS: 1 } : undefined);
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
  it('starts slowly and doubles every SLOW_START_DOUBLING s until feedback', () => {
    const r = new RampupState();
    rampupBegin(r, 0);
    const p = { target: 1, window: 60 };
    expect(rampupRate(r, 0, p)).toBe(1);
    expect(rampupRate(r, 3 * SLOW_START_DOUBLING * 1000, p)).toBe(8);
  });

  it('cuts to BETA of the rate once per burst and climbs back to it after window/target seconds', () => {
    const r = new RampupState();
    rampupBegin(r, 0);
    const p = { target: 2, window: 60 };
    for (let t = 0; t < 4000; t += 100) rampupBegin(r, t); // 10/s sent
    expect(rampupFeedback(r, 4000, 4100, p)).toBe(true);
    expect(r.wMax).toBe(10); // what was admitted in the second before the refused request
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

  it('after a refusal that says it is a rate limit (429 + Retry-After), cuts only to BETA_LIMIT of what was admitted less a margin', () => {
    const r = new RampupState();
    const p = { target: 1, window: 60 };
    for (let t = 0; t < 3000; t += 50) rampupBegin(r, t); // 20/s for 3 s
    expect(rampupFeedback(r, 3000, 3030, p, { limit: true, waitS: 1 })).toBe(true);
    expect(r.wMax).toBe(20);
    expect(rampupRate(r, 3030, p)).toBeCloseTo(BETA_LIMIT * (1 - MARGIN) * 20, 9);
    expect(rampupRate(r, 3030 + 60_000, p)).toBeCloseTo((1 - MARGIN) * 20, 9);
    // The span counted is the wait the refusal named (2 s here): 40 started in it.
    const q = new RampupState();
    for (let t = 0; t < 3000; t += 50) rampupBegin(q, t);
    rampupFeedback(q, 3000, 3030, p, { limit: true, waitS: 2 });
    expect(q.wMax).toBe(20);
  });

  it('finds a 20 req/s limit from its 429s: >= 93% of it, under 1% refused', () => {
    const sim = simulate(20, 600, 1, 60, 30, true);
    expect(sim.rate).toBeGreaterThan(0.93 * 20);
    expect(sim.refused / sim.sent).toBeLessThan(0.01);
  });

  it('probes harder for a higher target', () => {
    const one = simulate(20, 600, 1, 60);
    const four = simulate(20, 600, [3, 5], 60);
    expect(four.refused).toBeGreaterThan(one.refused);
  });
});
