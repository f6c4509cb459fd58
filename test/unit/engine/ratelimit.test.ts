// Pacing by the server's RateLimit headers (issue 17) and the pacing window, as pure functions: every
// header form read, the window bounded from the starts, and a window never holding more than asked.
import { describe, expect, it } from 'vitest';
import { StartRing } from '../../../electron/core/engine/throttle/pace';
import { HeaderPace, headerPaceBegin, headerPaceUpdate, MARGIN_MS, rateLimitInfo } from '../../../electron/core/engine/throttle/ratelimit';

const NOW = Date.UTC(2026, 10, 25, 10, 0, 0);

describe('rate-limit headers', () => {
  it('reads RateLimit-*, the structured RateLimit field, X-RateLimit-* (epoch reset) and RateLimit-Policy', () => {
    expect(rateLimitInfo({ 'ratelimit-limit': '100', 'ratelimit-remaining': '7', 'ratelimit-reset': '3' }, NOW))
      .toEqual({ limit: 100, remaining: 7, resetAt: NOW + 3000, resolutionMs: 1000, windowS: null });
    expect(rateLimitInfo({ ratelimit: 'limit=10, remaining=0, reset=1.5' }, NOW))
      .toEqual({ limit: 10, remaining: 0, resetAt: NOW + 1500, resolutionMs: 0, windowS: null });
    expect(rateLimitInfo({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': String(NOW / 1000 + 60) }, NOW))
      .toEqual({ limit: 60, remaining: 59, resetAt: NOW + 60_000, resolutionMs: 1000, windowS: null });
    expect(rateLimitInfo({ 'ratelimit-policy': '100;w=60', 'ratelimit-limit': '100', 'ratelimit-remaining': '50', 'ratelimit-reset': '30' }, NOW)?.windowS).toBe(60);
  });

  it('ignores responses without a limit, a remaining or a valid reset', () => {
    expect(rateLimitInfo(null, NOW)).toBeNull();
    expect(rateLimitInfo({ 'retry-after': '1' }, NOW)).toBeNull();
    expect(rateLimitInfo({ 'ratelimit-limit': '100', 'ratelimit-remaining': '7' }, NOW)).toBeNull();
    expect(rateLimitInfo({ 'ratelimit-limit': 'x', 'ratelimit-remaining': '7', 'ratelimit-reset': '3' }, NOW)).toBeNull();
    expect(rateLimitInfo({ 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '3' }, NOW)).toBeNull();
  });
});

describe('header pacing', () => {
  it('bounds a sliding window from the starts: the least (reset − oldest counted start) seen', () => {
    const hp = new HeaderPace();
    // A sliding window of 20 per 1 s, requests every 60 ms, each answered 30 ms later.
    const W = 1000;
    const arrivals: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t = NOW + i * 60;
      headerPaceBegin(hp, t);
      arrivals.push(t);
      const inWindow = arrivals.filter((a) => a > t - W).length;
      const oldest = arrivals.find((a) => a > t - W)!;
      // The server sends the reset in whole seconds, rounded up.
      const reset = Math.ceil((oldest + W - t) / 1000);
      headerPaceUpdate(hp, { limit: 20, remaining: 20 - inWindow, resetAt: t + 30 + reset * 1000, resolutionMs: 1000, windowS: null }, t, t + 30);
    }
    expect(hp.active).toBe(true);
    expect(hp.limit).toBe(20);
    expect(hp.windowMs).toBeGreaterThanOrEqual(W);
    expect(hp.windowMs).toBeLessThan(W + 100);
    expect(hp.perWindow()).toBe(19);
    expect(hp.spanMs()).toBe(hp.windowMs + MARGIN_MS);
  });

  it('takes the policy window when the server names it', () => {
    const hp = new HeaderPace();
    headerPaceBegin(hp, NOW);
    headerPaceUpdate(hp, { limit: 100, remaining: 99, resetAt: NOW + 5000, resolutionMs: 1000, windowS: 60 }, NOW, NOW + 10);
    expect(hp.windowMs).toBe(60_000);
    expect(hp.readyAt()).toBe(-Infinity); // one start of 99 allowed
  });
});

describe('pacing window', () => {
  it('never lets more than n starts into any span, whatever the gaps', () => {
    const ring = new StartRing();
    ring.reserve(32);
    const starts: number[] = [];
    let t = 0;
    for (let i = 0; i < 200; i++) {
      // Starts as early as the window allows, after a random short gap.
      t = Math.max(t + Math.random() * 20, ring.windowReadyAt(10, 1000));
      ring.push(t);
      starts.push(t);
    }
    for (let i = 10; i < starts.length; i++) expect(starts[i] - starts[i - 10]).toBeGreaterThanOrEqual(1000 - 1e-9);
    expect(ring.countIn(starts[150], starts[150] + 1000)).toBeLessThanOrEqual(10);
  });

  it('moves a start to its send time, keeping the ring in order', () => {
    const ring = new StartRing();
    for (const t of [100, 105, 110]) ring.push(t);
    ring.replace(100, 112); // written after the two that began later
    expect([ring.nth(1), ring.nth(2), ring.nth(3)]).toEqual([112, 110, 105]);
    ring.replace(110, 111);
    expect([ring.nth(1), ring.nth(2), ring.nth(3)]).toEqual([112, 111, 105]);
    ring.replace(999, 1000); // unknown: nothing moves
    expect(ring.nth(1)).toBe(112);
  });

  it('grows keeping the order of its starts, and paces a window larger than the ring by its share', () => {
    const ring = new StartRing();
    for (let i = 0; i < 100; i++) ring.push(i);
    ring.reserve(200);
    expect(ring.nth(1)).toBe(99);
    expect(ring.nth(64)).toBe(36);
    expect(ring.nth(65)).toBe(-Infinity); // only the 64 the first ring held were kept
    expect(ring.windowReadyAt(256 * 2, 2000)).toBe(ring.nth(256) + 1000);
  });
});
