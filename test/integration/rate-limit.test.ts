// Finding and keeping a server's rate limit (issue 17 part 3), judged at the server from the test
// site's request log: a host that says its limit in RateLimit / X-RateLimit headers is paced with
// no refusal and no arrival before a reset announced with remaining 0; a host that only says
// 429 + Retry-After is found by rampup, with few refusals and no arrival inside a block.
// Bounds leave room for a loaded two-core machine; the only times judged are the server's own.
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../electron/core/testsite';
import { arrivals, crawl, crawlConfig, site } from './helpers';

// Loopback addresses of this file: 127.0.102.10-29.

const LATENCY = 20;

/** Seeds of `pages` pages on one origin. */
function seeds(origin: string, pages: number): string[] {
  return Array.from({ length: pages }, (_, i) => (i === 0 ? `${origin}/` : `${origin}/page/${i}`));
}

/**
 * The waits the host announced with remaining 0, rebuilt from its log by replaying its sliding
 * window over the admitted arrivals (as the site computes its headers): from the response (arrival +
 * latency) to the oldest admitted arrival leaving the window, which is no later than the reset sent.
 */
function remainingZeroWaits(log: readonly LogEntry[], limit: number, windowMs: number): { from: number; to: number }[] {
  const admitted = log.filter((e) => e.status === 200).map((e) => e.t);
  const out: { from: number; to: number }[] = [];
  let lo = 0;
  for (let i = 0; i < admitted.length; i++) {
    const t = admitted[i];
    while (admitted[lo] <= t - windowMs) lo++;
    if (i - lo + 1 >= limit) out.push({ from: t + LATENCY, to: admitted[lo] + windowMs });
  }
  return out;
}

/** Arrivals later than `graceMs` into a wait (earlier ones were already on the wire). */
function inside(log: readonly LogEntry[], waits: readonly { from: number; to: number }[], graceMs: number): LogEntry[] {
  return log.filter((e) => waits.some((w) => e.t > w.from + graceMs && e.t < w.to));
}

/** Admitted requests per second from the first to the last arrival. */
function rate(log: readonly LogEntry[]): number {
  const ok = log.filter((e) => e.status === 200).length;
  return ok / ((log[log.length - 1].t - log[0].t) / 1000);
}

/** Pages of each paced crawl. */
const PAGES = 200;

describe('pacing by RateLimit headers (issue 17)', () => {
  for (const [style, address] of [['ratelimit', '127.0.102.10'], ['x-ratelimit', '127.0.102.11']] as const) {
    it(`paces a host that says 20 per 1 s in ${style} headers: no refusal, near the allowed rate, default settings`, async () => {
      const host = `${style}.test`;
      // 200 pages (10 s): over 100 the first second (the limit learned, then a wait for the reset
      // the headers announce, whose phase depends on when the crawl starts) swung the rate between
      // 14.8 and 18.5/s, with this engine and the one before it alike.
      const s = await site({ hosts: { [host]: { address, pages: PAGES, latency_ms: LATENCY,
        rate_limit: { requests: 20, per_seconds: 1, status: 429, retry_after: 1, headers: style } } } });
      const { records, events } = await crawl(crawlConfig({
        seeds: seeds(s.origin(host), PAGES),
        settings: { ROBOTSTXT_OBEY: false },
        resolve: s.resolve,
      }), { limitMs: 60_000 });
      const log = arrivals(s, host);
      expect(log).toHaveLength(PAGES);
      expect(log.filter((e) => e.status !== 200), 'refused at the site').toEqual([]);
      // 19 per (1 s + 20 ms) is 18.6/s; the first response teaches the limit.
      const r = rate(log);
      expect(r, `admitted ${r.toFixed(2)}/s`).toBeGreaterThan(0.75 * 20);
      expect(r).toBeLessThanOrEqual(20);
      expect(inside(log, remainingZeroWaits(log, 20, 1000), 100), 'arrivals before a reset announced with remaining 0').toEqual([]);
      expect(records.filter((x) => x.delayCause === 'ratelimit').length).toBeGreaterThan(80);
      expect(events.some((e) => e.code === 'ratelimit-pace' && e.text.includes('19 per'))).toBe(true);
    });
  }

  it('does not pace when THROTTLING_RATELIMIT_PACE is off (the headers still block on remaining 0)', async () => {
    const host = 'unpaced.test';
    const s = await site({ hosts: { [host]: { address: '127.0.102.12', pages: 25, latency_ms: LATENCY,
      rate_limit: { requests: 20, per_seconds: 1, status: 429, retry_after: 1, headers: 'ratelimit' } } } });
    const { records } = await crawl(crawlConfig({
      seeds: seeds(s.origin(host), 25),
      settings: { ROBOTSTXT_OBEY: false, THROTTLING_RATELIMIT_PACE: false },
      resolve: s.resolve,
    }), { limitMs: 60_000 });
    expect(records.some((x) => x.delayCause === 'ratelimit')).toBe(false);
    expect(arrivals(s, host).filter((e) => e.status === 200)).toHaveLength(25);
  });
});

describe('finding a limit that is only said by 429 + Retry-After (issue 17)', () => {
  it('rampup reaches a high share of a 10/s host over 200 pages, few 429s, none inside a block', async () => {
    const host = 'limit.test';
    const s = await site({ hosts: { [host]: { address: '127.0.102.13', pages: 200, latency_ms: LATENCY,
      rate_limit: { requests: 10, per_seconds: 1, status: 429, retry_after: 1 } } } });
    const { stats } = await crawl(crawlConfig({
      seeds: seeds(s.origin(host), 200),
      settings: { ROBOTSTXT_OBEY: false, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.5, THROTTLING_SCOPES: { [host]: { rampup: true } } },
      resolve: s.resolve,
    }), { limitMs: 90_000 });
    const log = arrivals(s, host);
    expect(log.filter((e) => e.status === 200)).toHaveLength(200);
    expect(stats.responses).toBe(log.length);
    const refused = log.filter((e) => e.status === 429).length;
    expect(refused / log.length, `${refused} of ${log.length} refused`).toBeLessThanOrEqual(0.03);
    const r = rate(log);
    expect(r, `admitted ${r.toFixed(2)}/s`).toBeGreaterThan(0.75 * 10);
    // Every Retry-After block the site announced: nothing arrived in it but what was already on the wire.
    expect(inside(log, s.blocks(host), 100), 'arrivals inside a Retry-After block').toEqual([]);
  });
});
