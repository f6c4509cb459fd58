// robots.txt in a real crawl: Disallow obeyed and counted, fetched once per origin before any
// page, 404 = allow all, 5xx = retried then crawled (RFC 9309).

import { describe, expect, it } from 'vitest';
import { pageLinks, pagePath } from '../../electron/core/testsite';
import { arrivals, crawl, crawlConfig, site } from './helpers';

// Loopback addresses of this file: 127.0.13.x.

const FAST = { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0 };

/** robots.txt prefix rules (no wildcards) as a predicate. */
function disallowedBy(rules: readonly string[]): (path: string) => boolean {
  return (path) => rules.some((r) => path.startsWith(r));
}

describe('robots.txt', () => {
  it('never fetches disallowed paths and counts them', async () => {
    const rules = ['/page/1', '/private'];
    const pages = 20;
    const s = await site({ hosts: { 'robots.test': { address: '127.0.13.1', pages, robots: { disallow: rules } } } });
    const { stats, events } = await crawl(crawlConfig({ seeds: [`${s.origin('robots.test')}/`], settings: FAST, resolve: s.resolve }));
    expect(stats.status).toBe('finished');

    // What a polite crawl discovers: the home page also links the disallowed literal paths.
    const blocked = disallowedBy(rules);
    const discovered = new Set<string>(['/']);
    const queue = ['/'];
    while (queue.length > 0) {
      const p = queue.shift()!;
      const i = p === '/' ? 0 : Number(p.slice('/page/'.length));
      const links = pageLinks(i, pages).map(pagePath);
      if (i === 0) links.push(...rules);
      for (const l of links) {
        if (discovered.has(l)) continue;
        discovered.add(l);
        if (!blocked(l)) queue.push(l);
      }
    }
    const expectedBlocked = [...discovered].filter(blocked);
    const expectedFetched = [...discovered].filter((p) => !blocked(p));
    expect(expectedBlocked.length).toBeGreaterThanOrEqual(3);

    const paths = arrivals(s, 'robots.test').map((e) => e.path);
    expect(paths.filter(blocked)).toEqual([]);
    expect(new Set(paths)).toEqual(new Set(['/robots.txt', ...expectedFetched]));
    expect(stats.robotsDisallowed).toBe(expectedBlocked.length);
    const notes = events.filter((e) => e.code === 'robots-disallowed');
    expect(notes).toHaveLength(expectedBlocked.length);
    expect(new Set(notes.map((e) => new URL(e.text.replace(/^.*?(http:\/\/\S+).*$/, '$1')).pathname))).toEqual(new Set(expectedBlocked));
  });

  it('fetches robots.txt exactly once per origin, before any page of it', async () => {
    const hosts = ['r1.test', 'r2.test', 'r3.test'];
    const s = await site({
      hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.13.${10 + i}`, pages: 15, latency_ms: 20, robots: { disallow: ['/nothing-here'] } }])),
    });
    // Several seeds per host queued at once: they must all wait for the one robots.txt fetch.
    const seeds = hosts.flatMap((h) => ['/', '/page/3', '/page/7', '/page/11'].map((p) => `${s.origin(h)}${p}`));
    const { stats } = await crawl(crawlConfig({ seeds, settings: { ...FAST, CONCURRENT_REQUESTS_PER_DOMAIN: 8 }, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    for (const h of hosts) {
      const log = arrivals(s, h);
      expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1);
      expect(log[0].path).toBe('/robots.txt');
      // No page arrived while robots.txt was being answered (20 ms).
      expect(log[1].t - log[0].t).toBeGreaterThanOrEqual(19);
      expect(log).toHaveLength(16);
    }
  });

  it('crawls everything when robots.txt is a 404', async () => {
    const s = await site({ hosts: { 'norobots.test': { address: '127.0.13.20', pages: 12 } } });
    const { stats } = await crawl(crawlConfig({ seeds: [`${s.origin('norobots.test')}/`], settings: FAST, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'norobots.test');
    expect(log[0]).toMatchObject({ path: '/robots.txt', status: 404 });
    expect(log.filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    expect(log.filter((e) => e.path !== '/robots.txt')).toHaveLength(12);
    expect(stats.robotsDisallowed).toBe(0);
  });

  it('retries a 5xx robots.txt, then crawls the site', async () => {
    const s = await site({ hosts: { 'down.test': { address: '127.0.13.30', pages: 6, robots: { status: 503, disallow: ['/'] } } } });
    const { stats, events, records } = await crawl(
      crawlConfig({ seeds: [`${s.origin('down.test')}/`], settings: { ...FAST, DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'down.test');
    const robots = log.filter((e) => e.path === '/robots.txt');
    expect(robots.length).toBeGreaterThanOrEqual(2);
    expect(robots.length).toBeLessThanOrEqual(5);
    expect(robots.every((e) => e.status === 503)).toBe(true);
    // Every attempt is recorded, and pages only start once robots.txt has been given up on.
    expect(records.filter((r) => r.url.endsWith('/robots.txt'))).toHaveLength(robots.length);
    const lastRobots = robots[robots.length - 1].t;
    const pageArrivals = log.filter((e) => e.path !== '/robots.txt');
    expect(pageArrivals).toHaveLength(6);
    expect(Math.min(...pageArrivals.map((e) => e.t))).toBeGreaterThan(lastRobots);
    expect(events.filter((e) => e.code === 'robots-retry')).toHaveLength(robots.length - 1);
    expect(events.filter((e) => e.kind === 'warning' && /robots\.txt/.test(e.text)).length).toBeGreaterThanOrEqual(robots.length);
  });
});
