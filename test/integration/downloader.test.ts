// The downloader against real sockets: latency and body time, bytes on the wire (plain and gzip),
// timeouts, size limits, resets, refused connections, redirects kept in their slot, redirect limit.

import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { pageLinks, pagePath } from '../../electron/core/testsite';
import { arrivals, crawl, crawlConfig, deadPort, pathCounts, pathOf, site } from './helpers';

// Loopback addresses of this file: 127.0.14.x.

const FAST = { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false };

/** Fetches a URL (name-based, through the site's address) and returns the raw body as sent. */
async function rawBody(address: string, url: string, headers: Record<string, string> = {}): Promise<{ body: Buffer; encoding: string | undefined }> {
  const u = new URL(url);
  const res = await request(`http://${address}:${u.port}${u.pathname}${u.search}`, { headers: { host: u.host, ...headers } });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { body, encoding: res.headers['content-encoding'] as string | undefined };
}

function allPages(n: number): Set<string> {
  const seen = new Set([0]);
  const q = [0];
  while (q.length) for (const j of pageLinks(q.shift()!, n)) if (!seen.has(j)) (seen.add(j), q.push(j));
  return new Set([...seen].map(pagePath));
}

describe('timing and size', () => {
  it('measures latency from hand-over to headers and body time separately', async () => {
    const s = await site({
      hosts: {
        'lat.test': { address: '127.0.14.1', pages: 5, latency_ms: 80 },
        'big.test': { address: '127.0.14.2', pages: 1, latency_ms: 50, big: { '/big': 8_000_000 } },
      },
    });
    const { records, stats } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('lat.test')}/`, `${s.origin('big.test')}/big`],
        settings: FAST,
        resolve: s.resolve,
      }),
    );
    expect(stats.status).toBe('finished');
    const pages = records.filter((r) => r.url.includes('lat.test'));
    expect(pages).toHaveLength(5);
    for (const r of pages) {
      expect(r.latency!).toBeGreaterThanOrEqual(0.079);
      expect(r.latency!).toBeLessThan(5);
      expect(r.downloadTime!).toBeGreaterThanOrEqual(0);
      // t - startedAt covers headers and body.
      expect(r.t - r.startedAt).toBeGreaterThanOrEqual((r.latency! + r.downloadTime!) * 1000 - 1);
    }
    const big = records.find((r) => r.url.endsWith('/big'))!;
    expect(big.status).toBe(200);
    expect(big.bytes).toBe(8_000_000);
    expect(big.latency!).toBeGreaterThanOrEqual(0.049);
    // Headers come first; the 8 MB body takes measurable time after them, not counted in latency.
    expect(big.downloadTime!).toBeGreaterThan(0);
    expect(big.latency!).toBeLessThan(big.latency! + big.downloadTime!);
    expect(Math.abs(big.t - big.startedAt - (big.latency! + big.downloadTime!) * 1000)).toBeLessThan(2);
  });

  it('records the body size as sent: plain bytes, and compressed bytes for gzip pages whose links are still followed', async () => {
    const s = await site({
      hosts: {
        'plain.test': { address: '127.0.14.10', pages: 10, page_bytes: 1500 },
        'gz.test': { address: '127.0.14.11', pages: 25, page_bytes: 3000, gzip: true },
      },
    });
    const { records, stats } = await crawl(
      crawlConfig({ seeds: [`${s.origin('plain.test')}/`, `${s.origin('gz.test')}/`], settings: FAST, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    // gzip bodies were decoded for link extraction: the whole site was reached.
    expect(new Set(arrivals(s, 'gz.test').map((e) => e.path))).toEqual(allPages(25));
    expect(new Set(arrivals(s, 'plain.test').map((e) => e.path))).toEqual(allPages(10));
    let gzChecked = 0;
    for (const r of records) {
      const host = new URL(r.url).hostname;
      const sent = await rawBody(s.resolve[host], r.url, { 'accept-encoding': 'gzip' });
      expect([r.url, r.bytes]).toEqual([r.url, sent.body.length]);
      if (host === 'gz.test') {
        expect(sent.encoding).toBe('gzip');
        const plain = await rawBody(s.resolve[host], r.url);
        expect(plain.encoding).toBeUndefined();
        expect(r.bytes).toBeLessThan(plain.body.length);
        expect(gzipSync(plain.body).length).toBeLessThan(plain.body.length); // the page compresses
        gzChecked++;
      }
    }
    expect(gzChecked).toBe(25);
    expect(stats.bytes).toBe(records.reduce((a, r) => a + r.bytes, 0));
  });
});

describe('failures', () => {
  it('gives up on a hanging path after DOWNLOAD_TIMEOUT and carries on', async () => {
    const s = await site({ hosts: { 'hang.test': { address: '127.0.14.20', pages: 8, hang: ['/hang'] } } });
    const o = s.origin('hang.test');
    const { records, stats, events } = await crawl(
      // RETRY_TIMES 0: one attempt, so the timeout itself is what is checked (retries have their own tests).
      crawlConfig({ seeds: [`${o}/hang`, `${o}/`], settings: { ...FAST, DOWNLOAD_TIMEOUT: 0.5, RETRY_TIMES: 0 }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const hang = records.find((r) => r.url.endsWith('/hang'))!;
    expect(hang.errorKind).toBe('timeout');
    expect(hang.status).toBeNull();
    expect(hang.t - hang.startedAt).toBeGreaterThanOrEqual(495);
    expect(hang.t - hang.startedAt).toBeLessThan(1500);
    expect(events.some((e) => e.kind === 'error' && e.code === 'timeout' && e.text.includes('/hang'))).toBe(true);
    // The rest of the site was crawled.
    expect(new Set(records.filter((r) => r.status === 200).map((r) => pathOf(r.url)))).toEqual(allPages(8));
    expect(stats.failures).toBe(1);
  });

  it('aborts a body over DOWNLOAD_MAXSIZE with an error naming the setting', async () => {
    const s = await site({ hosts: { 'max.test': { address: '127.0.14.21', pages: 3, big: { '/big': 300_000 } } } });
    const o = s.origin('max.test');
    const { records, stats } = await crawl(
      crawlConfig({ seeds: [`${o}/big`, `${o}/`], settings: { ...FAST, DOWNLOAD_MAXSIZE: 100_000 }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const big = records.find((r) => r.url.endsWith('/big'))!;
    expect(big.errorKind).toBe('maxsize');
    expect(big.errorMessage).toContain('DOWNLOAD_MAXSIZE');
    expect(big.errorMessage).toContain('100000');
    expect(big.bytes).toBeLessThanOrEqual(100_000 + 65_536);
    expect(records.filter((r) => r.status === 200)).toHaveLength(3);
  });

  it('classifies a reset connection and a refused one', async () => {
    const s = await site({ hosts: { 'reset.test': { address: '127.0.14.30', pages: 4, reset: ['/reset'] } } });
    const port = await deadPort('127.0.14.31');
    const { records, stats } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('reset.test')}/reset`, `http://refused.test:${port}/`, `${s.origin('reset.test')}/`],
        settings: FAST,
        resolve: { ...s.resolve, 'refused.test': '127.0.14.31' },
      }),
    );
    expect(stats.status).toBe('finished');
    const reset = records.filter((r) => r.url.endsWith('/reset'));
    expect(reset.length).toBeGreaterThanOrEqual(1);
    expect(reset.every((r) => r.errorKind === 'connect-reset' && r.status === null)).toBe(true);
    expect(arrivals(s, 'reset.test').filter((e) => e.path === '/reset').length).toBe(reset.length);
    const refused = records.filter((r) => r.url.includes('refused.test'));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.every((r) => r.errorKind === 'connect-refused' && r.latency === null)).toBe(true);
    // The working pages were crawled regardless.
    expect(records.filter((r) => r.status === 200)).toHaveLength(4);
  });
});

describe('redirects', () => {
  it('follows a redirect in the slot of the original request, also to another host', async () => {
    const target = await site({ hosts: { 'target.test': { address: '127.0.14.40', pages: 3 } } });
    const to = `${target.origin('target.test')}/page/2`;
    const s = await site({
      hosts: { 'from.test': { address: '127.0.14.41', pages: 3, redirects: { '/old': '/page/1', '/away': { to, status: 302 } } } },
    });
    const { records, stats } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('from.test')}/old`, `${s.origin('from.test')}/away`],
        follow: { scope: 'none' },
        settings: { ...FAST, ROBOTSTXT_OBEY: true },
        resolve: { ...s.resolve, ...target.resolve },
      }),
    );
    expect(stats.status).toBe('finished');
    const byUrl = new Map(records.map((r) => [r.url, r]));
    expect(byUrl.get(`${s.origin('from.test')}/old`)?.status).toBe(301);
    expect(byUrl.get(`${s.origin('from.test')}/away`)?.status).toBe(302);
    expect(byUrl.get(`${s.origin('from.test')}/page/1`)).toMatchObject({ status: 200, slot: 'from.test' });
    expect(byUrl.get(to)).toMatchObject({ status: 200, slot: 'from.test' });
    // The target host really served it (after its own robots.txt).
    expect(arrivals(target, 'target.test').map((e) => e.path)).toEqual(['/robots.txt', '/page/2']);
  });

  it('stops a redirect chain after 20 redirects, and a loop at once', async () => {
    const chain: Record<string, string> = {};
    for (let i = 0; i < 30; i++) chain[`/r/${i}`] = `/r/${i + 1}`;
    chain['/loop-a'] = '/loop-b';
    chain['/loop-b'] = '/loop-a';
    const s = await site({ hosts: { 'chain.test': { address: '127.0.14.50', pages: 1, redirects: chain } } });
    const { stats, events } = await crawl(
      crawlConfig({ seeds: [`${s.origin('chain.test')}/r/0`, `${s.origin('chain.test')}/loop-a`], follow: { scope: 'none' }, settings: FAST, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const counts = pathCounts(s).get('chain.test')!;
    const chainPaths = [...counts.keys()].filter((p) => p.startsWith('/r/'));
    // The original request and 20 redirects: /r/0 … /r/20.
    expect(chainPaths.sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))).toEqual(Array.from({ length: 21 }, (_, i) => `/r/${i}`));
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(counts.get('/loop-a')).toBe(1);
    expect(counts.get('/loop-b')).toBe(1);
    expect(events.some((e) => e.kind === 'error' && e.code === 'redirect-limit' && e.text.includes('/r/20'))).toBe(true);
  });
});
