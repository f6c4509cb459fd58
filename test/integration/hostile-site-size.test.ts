// Hostile sites, sizes (issue 15): DOWNLOAD_MAXSIZE and DOWNLOAD_WARNSIZE count decompressed
// bytes, a compression bomb is stopped while it inflates, and a body nobody reads is drained.

import { request } from 'undici';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, pathOf, site } from './helpers';

// Loopback addresses of this file: 127.0.92.1 – 127.0.92.19.

const FAST = { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false, RETRY_TIMES: 0 };
const MB = 1_000_000;

describe('the test site serves compression bombs as declared', () => {
  it('sends a gzip body of 50 MB as about 51 KB that inflates to exactly its size', async () => {
    const s = await site({ hosts: { 'bomb.test': { address: '127.0.92.1', pages: 1, bodies: { '/bomb': { bytes: 50 * MB, encoding: 'gzip' } } } } });
    const u = new URL(`${s.origin('bomb.test')}/bomb`);
    const res = await request(`http://127.0.92.1:${u.port}/bomb`, { headers: { host: u.host } });
    const wire = Buffer.from(await res.body.arrayBuffer());
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(Number(res.headers['content-length'])).toBe(wire.length);
    expect(wire.length).toBeLessThan(80_000);
    expect(gunzipSync(wire).length).toBe(50 * MB);
  });
});

describe('DOWNLOAD_MAXSIZE counts decompressed bytes', () => {
  for (const encoding of ['gzip', 'deflate', 'br'] as const) {
    it(`aborts a ${encoding} body inflating to 50 MB under a 10 MB limit as maxsize, not a 200`, async () => {
      const s = await site({
        hosts: { 'bomb.test': { address: '127.0.92.2', pages: 2, bodies: { '/bomb': { head: '<html><body><a href="/from-bomb">x</a>', bytes: 50 * MB, encoding } } } },
      });
      const o = s.origin('bomb.test');
      const { records, events, stats } = await crawl(crawlConfig({ seeds: [`${o}/bomb`, `${o}/`], settings: { ...FAST, DOWNLOAD_MAXSIZE: 10 * MB }, resolve: s.resolve }));
      expect(stats.status).toBe('finished');
      const bomb = records.find((r) => pathOf(r.url) === '/bomb')!;
      expect(bomb.status).toBeNull();
      expect(bomb.errorKind).toBe('maxsize');
      expect(bomb.errorMessage).toContain('DOWNLOAD_MAXSIZE (10000000 bytes)');
      expect(bomb.errorMessage).toMatch(/decompressed/);
      // Stopped as it crossed the limit: only part of the (small) compressed body was read.
      expect(bomb.bytes).toBeLessThan(80_000);
      expect(events.some((e) => e.kind === 'error' && e.code === 'maxsize' && e.text.includes('/bomb'))).toBe(true);
      // Nothing of the bomb was followed; the rest of the site was crawled.
      expect(arrivals(s, 'bomb.test').map((e) => e.path).sort()).toEqual(['/', '/bomb', '/page/1']);
    });
  }

  it('counts the decompressed bytes of a body that is not kept (no link following), sent chunked', async () => {
    const s = await site({
      hosts: { 'bomb.test': { address: '127.0.92.3', pages: 1, bodies: { '/bomb': { bytes: 50 * MB, encoding: 'gzip', content_length: false } } } },
    });
    const o = s.origin('bomb.test');
    const { records, stats } = await crawl(
      crawlConfig({ seeds: [`${o}/bomb`, `${o}/`], follow: { scope: 'none' }, settings: { ...FAST, DOWNLOAD_MAXSIZE: 10 * MB }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const bomb = records.find((r) => pathOf(r.url) === '/bomb')!;
    expect(bomb.errorKind).toBe('maxsize');
    expect(records.find((r) => pathOf(r.url) === '/')!.status).toBe(200);
  });

  it('keeps a compressed body under the limit whole: its links are followed and it is a 200', async () => {
    const s = await site({
      hosts: { 'ok.test': { address: '127.0.92.4', pages: 3, bodies: { '/zipped': { head: '<html><body><a href="/page/2">two</a>', tail: '<a href="/page/1">one</a></body></html>', bytes: 5 * MB, encoding: 'gzip' } } } },
    });
    const o = s.origin('ok.test');
    const { records, stats } = await crawl(crawlConfig({ seeds: [`${o}/zipped`], settings: { ...FAST, DOWNLOAD_MAXSIZE: 10 * MB }, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(records.find((r) => pathOf(r.url) === '/zipped')!.status).toBe(200);
    const paths = arrivals(s, 'ok.test').map((e) => e.path);
    expect(paths).toContain('/page/1');
    expect(paths).toContain('/page/2');
  });
});

describe('DOWNLOAD_WARNSIZE', () => {
  it('is 32 MiB by default, like Scrapy', () => {
    expect(crawlConfig({ seeds: ['http://a.test/'] }).settings.DOWNLOAD_WARNSIZE).toBe(32 * 1024 * 1024);
  });

  it('gives one warning per response over it, counting decompressed bytes, and keeps the response', async () => {
    const s = await site({
      hosts: {
        'warn.test': {
          address: '127.0.92.5',
          pages: 1,
          bodies: {
            '/a': { bytes: 3 * MB, encoding: 'gzip' },
            '/b': { bytes: 3 * MB, encoding: 'gzip', content_length: false },
            '/c': { bytes: 3 * MB },
            '/small': { bytes: 100_000, encoding: 'gzip' },
          },
        },
      },
    });
    const o = s.origin('warn.test');
    const { records, events, stats } = await crawl(
      crawlConfig({ seeds: ['/a', '/b', '/c', '/small', '/'].map((p) => `${o}${p}`), settings: { ...FAST, DOWNLOAD_WARNSIZE: MB, DOWNLOAD_MAXSIZE: 10 * MB }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    expect(records.every((r) => r.status === 200)).toBe(true);
    const warnings = events.filter((e) => e.kind === 'warning' && e.code === 'download-warnsize');
    expect(warnings.map((e) => pathOf(e.text.slice(0, e.text.indexOf(': ')))).sort()).toEqual(['/a', '/b', '/c']);
    for (const w of warnings) {
      expect(w.text).toContain('DOWNLOAD_WARNSIZE (1000000 bytes)');
      expect(w.text).toContain('3000000');
    }
  });
});

describe('memory stays bounded', () => {
  it('streams a 256 MiB page (links on) without holding it: RSS grows by far less than the page', async () => {
    const size = 256 * 1024 * 1024;
    const s = await site({
      hosts: { 'huge.test': { address: '127.0.92.6', pages: 2, bodies: { '/huge': { head: '<html><body><a href="/page/1">one</a><p>', bytes: size } } } },
    });
    const o = s.origin('huge.test');
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const { records, stats } = await crawl(crawlConfig({ seeds: [`${o}/huge`], settings: FAST, resolve: s.resolve }), { limitMs: 60_000 });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(stats.status).toBe('finished');
    const huge = records.find((r) => pathOf(r.url) === '/huge')!;
    expect(huge.status).toBe(200);
    expect(huge.bytes).toBe(size);
    // The link in its first bytes was followed.
    expect(arrivals(s, 'huge.test').map((e) => e.path)).toContain('/page/1');
    // Holding the page would cost at least its size (today: body chunks, their concatenation and the string).
    expect(peak - before).toBeLessThan(size / 2);
  }, 90_000);
});
