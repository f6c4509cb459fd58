// Backoff against the real test site (SPEC 5.2, 5.5): Retry-After blocks obeyed per the
// server's own log, one step per burst, retries recorded, failures as feedback, Crawl-delay.
import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, gaps, hostGaps, ON_TIME_MS, pathOf, site } from './helpers';

const QUICK = { RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false };

describe('backoff', () => {
  it('obeys Retry-After: no arrival during a block, the refused page retried and fetched', async () => {
    const s = await site({ hosts: { 'limited.test': { address: '127.0.19.1', pages: 12, latency_ms: 5,
      rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } } } });
    const { records, changes, events, stats } = await crawl(crawlConfig({
      seeds: [`${s.origin('limited.test')}/`],
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1, BACKOFF_MIN_DELAY: 0.05, RETRY_TIMES: 5 },
      resolve: s.resolve,
    }), { limitMs: 30_000 });
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'limited.test');
    const refused = log.filter((e) => e.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // Server-side truth: after a 429 (answered ~5 ms after its arrival), nothing arrives for 1 s.
    for (const r of refused) {
      const during = log.filter((e) => e.t > r.t + 20 && e.t < r.t + 1000);
      expect(during, `arrivals inside the Retry-After block after t=${r.t}`).toEqual([]);
    }
    // Every page was eventually fetched: the 429s were retried, not dropped.
    const ok = new Set(records.filter((r) => r.status === 200).map((r) => pathOf(r.url)));
    expect(ok.size).toBe(12);
    expect(records.filter((r) => r.status === 429).length).toBe(refused.length);
    expect(changes.some((c) => c.setting === 'blocked_until' && c.source === 'backoff')).toBe(true);
    expect(events.some((e) => e.code === 'retry-after' && /Retry-After: 1/.test(e.text))).toBe(true);
    // The record right after a 429 names the block as the binding cause.
    expect(records.filter((r) => r.status === 429).every((r) => r.delayCause === 'retry-after')).toBe(true);
  });

  it('steps once for a burst of 503s sent together, then spaces retries by the backoff delay', async () => {
    const s = await site({ hosts: { 'down.test': { address: '127.0.19.2', pages: 8, latency_ms: 30, statuses: { '503': 1 } } } });
    const o = s.origin('down.test');
    const { records, changes, events } = await crawl(crawlConfig({
      seeds: Array.from({ length: 6 }, (_, i) => `${o}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 6, BACKOFF_MIN_DELAY: 0.1, RETRY_TIMES: 1 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const steps = changes.filter((c) => c.setting === 'backoff_level');
    // Six 503s for six requests sent together: one step. Their retries went out one by one
    // after it (sent after the step), so each can step again.
    expect(steps[0]).toMatchObject({ oldValue: 0, newValue: 1, source: 'backoff' });
    const firstRound = records.slice(0, 6);
    expect(firstRound.every((r) => r.status === 503)).toBe(true);
    expect(firstRound.map((r) => r.backoffLevel)).toEqual([1, 1, 1, 1, 1, 1]);
    // Retries are recorded, and after RETRY_TIMES the request is reported, not dropped.
    expect(records).toHaveLength(12);
    expect(events.filter((e) => e.code === 'retries-exhausted')).toHaveLength(6);
    // Retries started no closer than the backoff delay in force (0.1 s, 0.2 s, ...).
    const retryStarts = records.slice(6).map((r) => r.startedAt).sort((a, b) => a - b);
    for (const g of gaps(retryStarts.map((t) => ({ t })))) expect(g).toBeGreaterThanOrEqual(99);
    expect(records.slice(6).every((r) => r.delayCause === 'backoff')).toBe(true);
  });

  it('treats connection resets and timeouts as feedback, retrying them', async () => {
    const s = await site({ hosts: { 'rst.test': { address: '127.0.19.3', pages: 3, reset: ['/reset'], hang: ['/hang'] } } });
    const o = s.origin('rst.test');
    const { records, events, changes } = await crawl(crawlConfig({
      seeds: [`${o}/reset`, `${o}/hang`],
      follow: { scope: 'none' },
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1, DOWNLOAD_TIMEOUT: 0.3, BACKOFF_MIN_DELAY: 0.05, RETRY_TIMES: 1 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const kinds = records.map((r) => `${pathOf(r.url)} ${r.errorKind}`).sort();
    expect(kinds).toEqual(['/hang timeout', '/hang timeout', '/reset connect-reset', '/reset connect-reset']);
    expect(changes.filter((c) => c.setting === 'backoff_level').length).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.code === 'retries-exhausted')).toHaveLength(2);
  });

  it('recovers a level after a quiet BACKOFF_WINDOW with good responses', async () => {
    const s = await site({ hosts: { 'blip.test': { address: '127.0.19.4', pages: 30, latency_ms: 5,
      rate_limit: { requests: 3, per_seconds: 0.3, status: 503, retry_after: null } } } });
    const { changes, stats } = await crawl(crawlConfig({
      seeds: [`${s.origin('blip.test')}/`],
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1, BACKOFF_MIN_DELAY: 0.1, BACKOFF_WINDOW: 0.3, RETRY_TIMES: 10 },
      resolve: s.resolve,
    }), { limitMs: 30_000 });
    expect(stats.status).toBe('finished');
    const levels = changes.filter((c) => c.setting === 'backoff_level');
    expect(levels.some((c) => (c.newValue as number) > (c.oldValue as number))).toBe(true);
    expect(levels.some((c) => (c.newValue as number) < (c.oldValue as number))).toBe(true);
  });
});

describe('rate-limit headers', () => {
  for (const [label, rateLimit] of [
    ['Retry-After as an HTTP date', { retry_after_format: 'http-date' }],
    ['RateLimit-Remaining: 0 with RateLimit-Reset', { headers: 'ratelimit' }],
    ['X-RateLimit-Remaining: 0 with an epoch X-RateLimit-Reset', { headers: 'x-ratelimit', retry_after: null }],
  ] as const) {
    it(`${label}: no request reaches the server while it said to wait`, async () => {
      const host = 'hdr.test';
      const s = await site({ hosts: { [host]: { address: '127.0.19.20', pages: 15, latency_ms: 5,
        rate_limit: { requests: 5, per_seconds: 1, status: 429, retry_after: 1, ...rateLimit } } } });
      const { records, stats } = await crawl(crawlConfig({
        seeds: [`${s.origin(host)}/`],
        settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1, BACKOFF_MIN_DELAY: 0.05, RETRY_TIMES: 10 },
        resolve: s.resolve,
      }), { limitMs: 30_000 });
      expect(stats.status).toBe('finished');
      expect(new Set(records.filter((r) => r.status === 200).map((r) => pathOf(r.url))).size).toBe(15);
      // The server's own record of the waits it announced: nothing arrived inside one
      // (beyond a request already on the wire when it was announced).
      const log = arrivals(s, host);
      for (const b of s.blocks(host)) {
        const inside = log.filter((e) => e.t > b.from + 3 && e.t < b.to - 1);
        expect(inside, `arrivals inside the block ${b.from}..${b.to}`).toEqual([]);
      }
      // With RateLimit headers the engine waits before the server has to refuse: few 429s.
      if ('headers' in rateLimit) expect(log.filter((e) => e.status === 429).length).toBeLessThanOrEqual(1);
    });
  }
});

describe('rampup', () => {
  it('learns a rate limit: climbs, cuts once per burst, never sends inside a Retry-After block', async () => {
    const host = 'ramp.test';
    const s = await site({ hosts: { [host]: { address: '127.0.19.30', pages: 140, latency_ms: 5,
      rate_limit: { requests: 10, per_seconds: 1, status: 429, retry_after: 1 } } } });
    const { changes, stats } = await crawl(crawlConfig({
      seeds: Array.from({ length: 130 }, (_, i) => `${s.origin(host)}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { ...QUICK, RETRY_TIMES: 5, THROTTLING_SCOPES: { [host]: { rampup: true } } },
      resolve: s.resolve,
    }), { limitMs: 40_000 });
    expect(stats.status).toBe('finished');
    const log = arrivals(s, host);
    // Server-side truth: nothing arrived while a wait the server announced was in force.
    for (const b of s.blocks(host)) expect(log.filter((e) => e.t > b.from + 3 && e.t < b.to - 1)).toEqual([]);
    const ok = log.filter((e) => e.status === 200);
    expect(ok).toHaveLength(130);
    const refused = log.filter((e) => e.status === 429).length;
    expect(refused / log.length).toBeLessThan(0.1);
    // It found the limit: over the second half, at least 60% of the 10 req/s allowed.
    const half = ok.slice(65);
    const rate = (half.length - 1) / ((half.at(-1)!.t - half[0].t) / 1000);
    expect(rate).toBeGreaterThan(6);
    expect(rate).toBeLessThan(11);
    const cuts = changes.filter((c) => c.setting === 'rampup_rate' && c.source === 'rampup');
    expect(cuts.length).toBeGreaterThanOrEqual(1);
    // A cut per burst: never two within a second of each other.
    for (let i = 1; i < cuts.length; i++) expect(cuts[i].t - cuts[i - 1].t).toBeGreaterThan(1000);
  });
});

describe('robots.txt Crawl-delay', () => {
  it('makes the slot one lane with Crawl-delay as its floor, recorded as the cause', async () => {
    const s = await site({ hosts: { 'cd.test': { address: '127.0.19.10', pages: 6, latency_ms: 2, robots: { crawl_delay: 0.3 } } } });
    const { records, changes } = await crawl(crawlConfig({
      seeds: [`${s.origin('cd.test')}/`],
      settings: { RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 4 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const pages = arrivals(s, 'cd.test', { robots: false });
    expect(pages).toHaveLength(6);
    expect(Math.max(...pages.map((e) => e.in_flight))).toBe(1);
    for (const g of gaps(arrivals(s, 'cd.test'))) expect(g).toBeGreaterThan(290);
    expect(changes).toContainEqual(expect.objectContaining({ slot: 'cd.test', setting: 'crawl_delay', source: 'robots', oldValue: null, newValue: 0.3 }));
    expect(records.filter((r) => !r.url.endsWith('/robots.txt')).every((r) => r.delayCause === 'crawl-delay')).toBe(true);
  });

  it('caps Crawl-delay at THROTTLING_ROBOTSTXT_MAX_DELAY with a warning; a scope override wins with a warning; ignore_robots_txt is silent', async () => {
    const s = await site({ hosts: {
      'slowbot.test': { address: '127.0.19.11', pages: 3, robots: { crawl_delay: 30 } },
      'scoped.test': { address: '127.0.19.12', pages: 3, robots: { crawl_delay: 30 } },
      'ignored.test': { address: '127.0.19.13', pages: 3, robots: { crawl_delay: 30 } },
    } });
    const { events, records } = await crawl(crawlConfig({
      seeds: ['slowbot.test', 'scoped.test', 'ignored.test'].map((h) => `${s.origin(h)}/`),
      settings: { RANDOMIZE_DOWNLOAD_DELAY: false, THROTTLING_ROBOTSTXT_MAX_DELAY: 0.2,
        THROTTLING_SCOPES: { 'scoped.test': { delay: 0.1 }, 'ignored.test': { delay: 0.05, ignore_robots_txt: true } } },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const warnings = events.filter((e) => e.kind === 'warning');
    expect(warnings.filter((w) => w.code === 'crawl-delay-capped').map((w) => w.slot)).toEqual(['slowbot.test']);
    expect(warnings.filter((w) => w.code === 'crawl-delay-overridden').map((w) => w.slot)).toEqual(['scoped.test']);
    expect(warnings.some((w) => w.slot === 'ignored.test')).toBe(false);
    // Starts keep each floor exactly; arrivals at the in-process site only after on-time requests (its
    // stamps wait for this process on a busy machine).
    for (const [host, floor] of [['slowbot.test', 200], ['scoped.test', 100]] as const) {
      for (const g of hostGaps(s, records, host)) {
        expect(g.engine, `${host} start gap`).toBeGreaterThanOrEqual(floor - 0.5);
        if (g.earlierLateBy <= ON_TIME_MS) expect(g.site, `${host} site gap`).toBeGreaterThan(floor - 2);
      }
    }
  });

  it('treats a 5xx robots.txt as backoff feedback and retries it', async () => {
    const s = await site({ hosts: { 'r5.test': { address: '127.0.19.14', pages: 3, robots: { status: 503 } } } });
    const { changes, stats } = await crawl(crawlConfig({
      seeds: [`${s.origin('r5.test')}/`],
      settings: { RANDOMIZE_DOWNLOAD_DELAY: false, BACKOFF_MIN_DELAY: 0.05 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'r5.test').filter((e) => e.path === '/robots.txt').length).toBe(3);
    expect(changes.some((c) => c.slot === 'r5.test' && c.setting === 'backoff_level')).toBe(true);
  });
});
