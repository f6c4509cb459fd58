// Promises judged at the server (issue 14): a declared Crawl-delay is never undercut by
// randomization, the URL sent is the URL given, and retrying is apart from backing off.
import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, gaps, linkHub, pathOf, site } from './helpers';

// Loopback addresses of this file: 127.0.90.1-19.

/** A repeatable draw that often lands low: factor 0.5 + r (RANDOMIZE_DOWNLOAD_DELAY true) reaches 0.55. */
function lowDraws(): () => number {
  const xs = [0.05, 0.9, 0.2, 0.6, 0.1, 0.75, 0.3, 0.02];
  let i = 0;
  return () => xs[i++ % xs.length];
}

describe('randomization and a delay the server declared (issue 14.1)', () => {
  it('never draws below robots.txt Crawl-delay: every gap at the site is at least the Crawl-delay', async () => {
    const s = await site({ hosts: { 'cd.test': { address: '127.0.90.1', pages: 10, latency_ms: 2, robots: { crawl_delay: 0.25 } } } });
    const { records } = await crawl(crawlConfig({
      seeds: [`${s.origin('cd.test')}/`],
      // RANDOMIZE_DOWNLOAD_DELAY keeps its default (true: ±50 %).
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 4 },
      resolve: s.resolve,
    }), { random: lowDraws(), limitMs: 30_000 });
    const log = arrivals(s, 'cd.test');
    expect(log.filter((e) => e.path !== '/robots.txt')).toHaveLength(10);
    const g = gaps(log);
    const short = g.filter((x) => x < 250 - 2);
    expect(short, `gaps at the site under the 250 ms Crawl-delay: ${g.map((x) => x.toFixed(0)).join(', ')}`).toEqual([]);
    // Randomization still happens, above the floor: the high draws lengthen some gaps.
    expect(Math.max(...g)).toBeGreaterThan(300);
    expect(records.filter((r) => !r.url.endsWith('/robots.txt')).every((r) => r.delayCause === 'crawl-delay')).toBe(true);
  });

  it('keeps Scrapy-style randomization for our own floor (DOWNLOAD_DELAY): gaps may fall below it', async () => {
    const s = await site({ hosts: { 'own.test': { address: '127.0.90.2', pages: 10, latency_ms: 2 } } });
    await crawl(crawlConfig({
      seeds: [`${s.origin('own.test')}/`],
      settings: { DOWNLOAD_DELAY: 0.25, CONCURRENT_REQUESTS_PER_DOMAIN: 4, ROBOTSTXT_OBEY: false },
      resolve: s.resolve,
    }), { random: lowDraws(), limitMs: 30_000 });
    const g = gaps(arrivals(s, 'own.test'));
    expect(Math.min(...g)).toBeLessThan(200);
  });
});

describe('the URL sent is the URL given (issue 14.5)', () => {
  it('sends a seed query byte for byte; canonical forms only de-duplicate', async () => {
    const s = await site({ hosts: { 'q.test': { address: '127.0.90.3', pages: 3, latency_ms: 1 } } });
    const o = s.origin('q.test');
    const { records } = await crawl(crawlConfig({
      seeds: [`${o}/page/1?b=2&a=1`, `${o}/page/1?a=1&b=2`, `${o}/page/2?sig=Zz%2F9&exp=10#frag`],
      follow: { scope: 'none' },
      settings: { ROBOTSTXT_OBEY: false },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const paths = arrivals(s, 'q.test').map((e) => e.path);
    // The second seed is the first one in another order: fetched once, as the first was given.
    expect(paths.sort()).toEqual(['/page/1?b=2&a=1', '/page/2?sig=Zz%2F9&exp=10']);
    expect(records.map((r) => pathOf(r.url)).sort()).toEqual(['/page/1?b=2&a=1', '/page/2?sig=Zz%2F9&exp=10']);
  });

  it('follows a link with the query in the order the page gave it', async () => {
    const hub = await linkHub('127.0.90.4', {
      '/': '<a href="/api?z=1&y=2">one</a> <a href="/api?y=2&z=1">same</a> <a href="/x?b=&a=">two</a>',
      '/api?z=1&y=2': 'ok',
      '/x?b=&a=': 'ok',
    });
    await crawl(crawlConfig({
      seeds: [`http://127.0.90.4:${hub.port}/`],
      settings: { ROBOTSTXT_OBEY: false },
    }), { limitMs: 20_000 });
    expect(hub.served.sort()).toEqual(['/', '/api?z=1&y=2', '/x?b=&a=']);
  });
});

describe('retrying apart from backing off (issue 14.6)', () => {
  it('with backoff off, 503s are still retried (RETRY_HTTP_CODES) and no page is lost', async () => {
    const s = await site({ seed: 7, hosts: { 'flaky.test': { address: '127.0.90.5', pages: 41, latency_ms: 1, statuses: { '503': 0.2 } } } });
    const { records, changes, stats } = await crawl(crawlConfig({
      seeds: Array.from({ length: 40 }, (_, i) => `${s.origin('flaky.test')}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { ROBOTSTXT_OBEY: false, RANDOMIZE_DOWNLOAD_DELAY: false, BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [], RETRY_TIMES: 10 },
      resolve: s.resolve,
    }), { limitMs: 30_000 });
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'flaky.test').some((e) => e.status === 503)).toBe(true);
    const ok = new Set(records.filter((r) => r.status === 200).map((r) => pathOf(r.url)));
    expect(ok.size).toBe(40);
    // Backing off stayed off: no step was taken.
    expect(changes.some((c) => c.setting === 'backoff_level')).toBe(false);
  });

  it('a URL given up has a response row per attempt and an error naming it and why', async () => {
    const s = await site({ hosts: { 'down.test': { address: '127.0.90.6', pages: 3, latency_ms: 1, statuses: { '503': 1 } } } });
    const o = s.origin('down.test');
    const { records, events } = await crawl(crawlConfig({
      seeds: [`${o}/page/1`, `${o}/page/2`],
      follow: { scope: 'none' },
      settings: { ROBOTSTXT_OBEY: false, BACKOFF_HTTP_CODES: [], RETRY_TIMES: 1 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(records).toHaveLength(4);
    const gaveUp = events.filter((e) => e.code === 'retries-exhausted');
    expect(gaveUp).toHaveLength(2);
    for (const p of ['/page/1', '/page/2']) {
      expect(gaveUp.some((e) => e.kind === 'error' && e.text.includes(`${o}${p}`) && /2 attempts/.test(e.text) && /503/.test(e.text))).toBe(true);
    }
  });

  it('RETRY_ENABLED false: backoff still steps, nothing is retried, each refusal is a recorded row', async () => {
    const s = await site({ hosts: { 'no-retry.test': { address: '127.0.90.7', pages: 3, latency_ms: 1, statuses: { '503': 1 } } } });
    const o = s.origin('no-retry.test');
    const { records, changes } = await crawl(crawlConfig({
      seeds: [`${o}/page/1`, `${o}/page/2`],
      follow: { scope: 'none' },
      settings: { ROBOTSTXT_OBEY: false, RETRY_ENABLED: false, BACKOFF_MIN_DELAY: 0.05 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(arrivals(s, 'no-retry.test')).toHaveLength(2);
    expect(records.map((r) => r.status)).toEqual([503, 503]);
    expect(changes.some((c) => c.setting === 'backoff_level' && c.source === 'backoff')).toBe(true);
  });

  it('retries a 500 (in RETRY_HTTP_CODES) that is not backoff feedback, at RETRY_PRIORITY_ADJUST', async () => {
    const s = await site({ hosts: { 'err.test': { address: '127.0.90.8', pages: 3, latency_ms: 1, statuses: { '500': 1 } } } });
    const o = s.origin('err.test');
    const { records, changes } = await crawl(crawlConfig({
      seeds: [`${o}/page/1`],
      follow: { scope: 'none' },
      settings: { ROBOTSTXT_OBEY: false, RETRY_TIMES: 2, RETRY_PRIORITY_ADJUST: -3 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(records.map((r) => r.status)).toEqual([500, 500, 500]);
    expect(changes.some((c) => c.setting === 'backoff_level')).toBe(false);
  });
});
