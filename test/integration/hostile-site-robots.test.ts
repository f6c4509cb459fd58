// Hostile sites, robots.txt (issue 15): read up to 512 KiB decompressed (RFC 9309 asks for at
// least 500 KiB), the rules that fit obeyed, the cut said in a warning, a gzip bomb stopped early.

import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, pathOf, site } from './helpers';

// Loopback addresses of this file: 127.0.92.20 – 127.0.92.39.

const FAST = { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0 };
const LIMIT = 512 * 1024;

/** A robots.txt of `bytes` bytes: rules first, comment lines, then a rule past the limit. */
function bigRobots(bytes: number, encoding: 'identity' | 'gzip' = 'identity', contentLength = true) {
  return {
    head: 'User-agent: *\nDisallow: /early\n',
    fill: '# padding padding padding padding padding padding padding padding padding padding\n',
    tail: 'Disallow: /late\n',
    bytes,
    encoding,
    content_type: 'text/plain',
    content_length: contentLength,
  };
}

/** Pages linking /early and /late (and themselves reachable from /). */
const LINKS = { '/': { head: '<html><body><a href="/early">e</a><a href="/late">l</a><a href="/free">f</a></body></html>' } };

describe('robots.txt is read up to 512 KiB', () => {
  it('obeys the rules of a 50 MB robots.txt that fit, ignores the rest and says so', async () => {
    const s = await site({ hosts: { 'big.test': { address: '127.0.92.20', pages: 0, bodies: { '/robots.txt': bigRobots(50_000_000), ...LINKS } } } });
    const o = s.origin('big.test');
    const { records, events, stats } = await crawl(crawlConfig({ seeds: [`${o}/`], settings: FAST, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    const paths = arrivals(s, 'big.test').map((e) => e.path);
    expect(paths).not.toContain('/early');
    // Past the limit: not read, so not obeyed (as Google does).
    expect(paths).toContain('/late');
    expect(paths).toContain('/free');
    const robots = records.find((r) => pathOf(r.url) === '/robots.txt')!;
    expect(robots.status).toBe(200);
    expect(robots.bytes).toBeLessThan(2 * 1024 * 1024);
    const warning = events.find((e) => e.kind === 'warning' && e.code === 'robots-truncated');
    expect(warning?.slot).toBe('big.test');
    expect(warning?.text).toContain('524288 bytes');
    expect(stats.robotsDisallowed).toBe(1);
  });

  it('stops a robots.txt gzip bomb after 512 KiB inflated, sent chunked', async () => {
    const s = await site({
      hosts: { 'bomb.test': { address: '127.0.92.21', pages: 0, bodies: { '/robots.txt': bigRobots(1024 * 1024 * 1024, 'gzip', false), ...LINKS } } },
    });
    const o = s.origin('bomb.test');
    const before = process.memoryUsage().rss;
    const { records, events, stats } = await crawl(crawlConfig({ seeds: [`${o}/`], settings: FAST, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    const paths = arrivals(s, 'bomb.test').map((e) => e.path);
    expect(paths).not.toContain('/early');
    expect(paths).toContain('/late');
    expect(records.find((r) => pathOf(r.url) === '/robots.txt')!.status).toBe(200);
    expect(events.some((e) => e.code === 'robots-truncated')).toBe(true);
  });

  it('reads a robots.txt just under the limit whole, without a warning', async () => {
    const s = await site({ hosts: { 'fits.test': { address: '127.0.92.22', pages: 0, bodies: { '/robots.txt': bigRobots(LIMIT - 100, 'gzip'), ...LINKS } } } });
    const o = s.origin('fits.test');
    const { events, stats } = await crawl(crawlConfig({ seeds: [`${o}/`], settings: FAST, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    const paths = arrivals(s, 'fits.test').map((e) => e.path);
    expect(paths).not.toContain('/early');
    expect(paths).not.toContain('/late');
    expect(paths).toContain('/free');
    expect(events.filter((e) => e.code === 'robots-truncated')).toEqual([]);
  });
});
