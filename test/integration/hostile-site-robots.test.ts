// Hostile sites, robots.txt (issue 15): read up to 512 KiB decompressed (RFC 9309 asks for at
// least 500 KiB), the rules that fit obeyed, the cut said in a warning, a gzip bomb stopped early.

import robotsParser from 'robots-parser';
import { describe, expect, it } from 'vitest';
import { compactRobots, parseRobots } from '../../electron/core/engine/robots';
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

describe('what robots.txt is parsed from', () => {
  const UA = 'Slotscope/0.1 (+https://example.test/bot)';
  const URLS = ['/', '/a', '/a/b', '/b', '/b/x.html', '/c?q=1', '/d', '/e/f', '/private', '/x/y/z'];
  /** robots-parser's decisions on the raw body and on the compacted one, for our agent. */
  function decisions(body: string, parse: (o: string, b: string) => ReturnType<typeof robotsParser>) {
    const r = parse('http://r.test', body);
    return { allowed: URLS.map((u) => r.isAllowed(`http://r.test${u}`, UA)), delay: r.getCrawlDelay(UA) };
  }
  const raw = (o: string, b: string) => robotsParser(`${o}/robots.txt`, b);
  const ours = (o: string, b: string) => parseRobots(o, b, UA);

  it('keeps robots-parser\'s decisions: comments, blank lines, unknown lines that end a group, several groups', () => {
    const bodies = [
      'User-agent: *\nDisallow: /a\n\n# comment\nAllow: /a/b # inline\nCrawl-delay: 2\n',
      'User-agent: other\nUser-agent: slotscope\nDisallow: /b\n\nUser-agent: *\nDisallow: /\n',
      'User-agent: slotscope\nFoo: bar\nUser-agent: *\nDisallow: /c\nDisallow: /d$\n',
      'Disallow: /before-any-agent\nUser-agent: *\r\nDisallow: /e/*\r\nSitemap: http://r.test/s.xml\n# Disallow: /x\n',
      '\n\n   \n#only comments\n',
    ];
    for (const body of bodies) expect(decisions(body, ours)).toEqual(decisions(body, raw));
  });

  it('drops half a megabyte of blank lines before parsing (robots-parser took 115 ms over them in one call)', () => {
    const body = `User-agent: *\nDisallow: /private\n${'\n'.repeat(512 * 1024)}`;
    expect(compactRobots(body, UA).length).toBeLessThan(100);
    expect(decisions(body, ours)).toEqual(decisions(body, raw));
  });

  it('with thousands of rules keeps only the groups of our agent and *, with the same decisions', () => {
    let body = 'User-agent: *\nDisallow: /b/\nCrawl-delay: 3\n';
    for (let i = 0; i < 6000; i++) body += `User-agent: bot${i}\nDisallow: /\n`;
    body += 'User-agent: slotscope\nDisallow: /a\nAllow: /a/b\n';
    const compact = compactRobots(body, UA);
    expect(compact.split('\n').filter((l) => l.startsWith('disallow')).length).toBe(2);
    expect(decisions(body, ours)).toEqual(decisions(body, raw));
  });
});
