// Throttling scopes (SPEC 5.1) and quotas (5.4) against the real test site: a request waits
// until every scope allows it, as the server's own log shows.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Crawler } from '../../electron/core/engine/crawler';
import { parseCrawlConfig } from '../../electron/core/engine/crawl-config';
import type { ChangeRecord, EventRecord, ResponseRecord } from '../../shared/types';
import { arrivals, crawl, crawlConfig, defer, freshDir, gaps, maxOverlap, pathOf, site } from './helpers';

const QUICK = { RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false };

describe('throttling scopes', () => {
  it('groups two hosts by registrable domain: one lane and one delay across both', async () => {
    const s = await site({ hosts: {
      'a.site.test': { address: '127.0.20.1', pages: 5, latency_ms: 20 },
      'b.site.test': { address: '127.0.20.2', pages: 5, latency_ms: 20 },
    } });
    const { records, stats } = await crawl(crawlConfig({
      seeds: [`${s.origin('a.site.test')}/`, `${s.origin('b.site.test')}/`],
      scopes: [{ by: 'domain' }],
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 4, THROTTLING_SCOPES: { 'site.test': { concurrency: 1, delay: 0.1 } } },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(stats.responses).toBe(10);
    // In flight across both hosts never above 1, starts at least 0.1 s apart across both.
    expect(maxOverlap(records.map((r) => [r.startedAt, r.t] as const))).toBe(1);
    const starts = records.map((r) => ({ t: r.startedAt })).sort((x, y) => x.t - y.t);
    for (const g of gaps(starts)) expect(g).toBeGreaterThanOrEqual(99.5);
    // Each host is still its own slot.
    expect(new Set(records.map((r) => r.slot))).toEqual(new Set(['a.site.test', 'b.site.test']));
  });

  it('endpoint scope by URL prefix only throttles that endpoint', async () => {
    const s = await site({ hosts: { 'api.test': { address: '127.0.20.3', pages: 12, latency_ms: 5 } } });
    const o = s.origin('api.test');
    const { records } = await crawl(crawlConfig({
      seeds: Array.from({ length: 10 }, (_, i) => `${o}/page/${i + 1}`),
      follow: { scope: 'none' },
      scopes: [{ by: 'prefix', prefix: `${o}/page/1`, scope: 'slow-endpoint' }],
      settings: { ...QUICK, THROTTLING_SCOPES: { 'slow-endpoint': { concurrency: 1, delay: 0.15 } } },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    // /page/1 and /page/10 share the endpoint scope; the others go at once.
    const slow = records.filter((r) => /\/page\/1(0)?$/.test(r.url)).map((r) => r.startedAt).sort((a, b) => a - b);
    expect(slow).toHaveLength(2);
    expect(slow[1] - slow[0]).toBeGreaterThanOrEqual(149.5);
    const fast = records.filter((r) => !/\/page\/1(0)?$/.test(r.url)).map((r) => r.startedAt);
    expect(Math.max(...fast) - Math.min(...fast)).toBeLessThan(100);
  });

  it('scraping-API pattern: ?url= target domain becomes a scope', async () => {
    const s = await site({ hosts: { 'proxy.test': { address: '127.0.20.4', pages: 2, latency_ms: 5 } } });
    const o = s.origin('proxy.test');
    const seeds = ['http://x.example.com/1', 'http://x.example.com/2', 'http://y.example.org/1', 'http://y.example.org/2']
      .map((t) => `${o}/fetch?url=${encodeURIComponent(t)}`);
    const { records } = await crawl(crawlConfig({
      seeds, follow: { scope: 'none' },
      scopes: [{ by: 'query', param: 'url' }],
      settings: { ...QUICK, THROTTLING_SCOPES: { 'example.com': { delay: 0.2 }, 'example.org': { delay: 0.2 } } },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const byTarget = (d: string) => records.filter((r) => decodeURIComponent(r.url).includes(d)).map((r) => r.startedAt).sort((a, b) => a - b);
    for (const d of ['example.com', 'example.org']) {
      const ts = byTarget(d);
      expect(ts).toHaveLength(2);
      expect(ts[1] - ts[0]).toBeGreaterThanOrEqual(199.5);
    }
    // Different targets do not wait for each other.
    expect(Math.abs(byTarget('example.com')[0] - byTarget('example.org')[0])).toBeLessThan(100);
    expect(arrivals(s, 'proxy.test')).toHaveLength(4);
  });

  it('a plug-in adds scopes with costs and decides backoff; a throwing plug-in is reported and the request kept', async () => {
    const dir = freshDir();
    const plugin = join(dir, 'manager.mjs');
    writeFileSync(plugin, `
      export function getScopes(request) {
        if (request.url.includes('/page/3')) throw new Error('cannot classify page 3');
        return { shared: 2 };
      }
      export function getResponseBackoff(response) { return response.status === 404 ? { backoff: true } : false; }
    `);
    const s = await site({ hosts: { 'plug.test': { address: '127.0.20.5', pages: 6, latency_ms: 5 } } });
    const o = s.origin('plug.test');
    const run = { records: [] as ResponseRecord[], changes: [] as ChangeRecord[], events: [] as EventRecord[] };
    const crawler = new Crawler({
      config: crawlConfig({
        seeds: [1, 2, 3, 4, 5].map((i) => `${o}/page/${i}`).concat([`${o}/missing`]),
        follow: { scope: 'none' },
        settings: { ...QUICK, RETRY_TIMES: 0, BACKOFF_MIN_DELAY: 0.05, THROTTLING_MANAGER: plugin,
          THROTTLING_SCOPES: { shared: { quota: 4, window: 1 } } },
        resolve: s.resolve,
      }),
      sinks: { onResponse: (r) => run.records.push(r), onChange: (c) => run.changes.push(c), onEvent: (e) => run.events.push(e) },
    });
    defer(() => crawler.close());
    await crawler.prepare();
    crawler.start();
    const stats = await crawler.done;
    expect(stats.status).toBe('finished');
    // Quota 4 per 1 s window, 2 units each: at most 2 of the 5 scoped requests start per window.
    const scoped = run.records.filter((r) => !r.url.includes('/page/3')).map((r) => r.startedAt).sort((a, b) => a - b);
    expect(scoped).toHaveLength(5);
    expect(scoped[2] - scoped[0]).toBeGreaterThanOrEqual(999);
    expect(scoped[4] - scoped[2]).toBeGreaterThanOrEqual(999);
    expect(run.events.filter((e) => e.code === 'plugin-error')).toHaveLength(1);
    expect(run.records.some((r) => r.url.endsWith('/page/3') && r.status === 200)).toBe(true);
    // getResponseBackoff made the 404 backoff feedback.
    expect(run.changes.some((c) => c.setting === 'backoff_level' && c.slot === 'plug.test')).toBe(true);
  });

  it('refuses a plug-in path that does not exist, naming THROTTLING_MANAGER', async () => {
    const c = crawlConfig({ seeds: ['http://nowhere.test/'], settings: { THROTTLING_MANAGER: './no/such/plugin.mjs' } });
    const crawler = new Crawler({ config: c });
    await expect(crawler.prepare(freshDir())).rejects.toThrow(/THROTTLING_MANAGER: ".\/no\/such\/plugin.mjs" is not allowed .*does not exist/);
    await crawler.close();
  });

  it('refuses bad scope config naming the field', () => {
    const r = parseCrawlConfig({ seeds: ['http://a.test/'], scopes: [{ by: 'domain' }, { by: 'prefix', prefix: 'nope' }, { by: 'color' }],
      settings: { THROTTLING_SCOPES: { api: { concurrency: -1 } } } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const msgs = r.errors.map((e) => e.message).join('\n');
    expect(msgs).toMatch(/scopes\[1\]: .* \("prefix" must be an absolute http\(s\) URL prefix\)/);
    expect(msgs).toMatch(/scopes\[2\]: .*\{"by": "domain"\}/);
    expect(msgs).toMatch(/THROTTLING_SCOPES: .*key "api": "concurrency": -1/);
    const unknown = parseCrawlConfig({ seeds: ['http://a.test/'], settings: { THROTTLING_SCOPES: { api: { concurency: 2 } } } });
    expect(!unknown.ok && unknown.errors[0].message).toMatch(/unknown key "concurency"/);
  });
});

describe('quotas', () => {
  it('keeps to a server quota with a cost header: the server never refuses, actual costs are settled', async () => {
    const s = await site({ hosts: { 'q.test': { address: '127.0.20.6', pages: 10, latency_ms: 5,
      quota: { units: 6, per_seconds: 1, cost_header: 'X-Cost', costs: { '/page/1': 3, '/page/2': 3 } } } } });
    const o = s.origin('q.test');
    // The engine expects cost 1 each (nothing tells it otherwise) and learns the actual cost from X-Cost.
    const { records, stats } = await crawl(crawlConfig({
      seeds: Array.from({ length: 8 }, (_, i) => `${o}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1, THROTTLING_SCOPES: { 'q.test': { quota: 5, window: 1.2, quota_header: 'X-Cost' } } },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'q.test').filter((e) => e.status === 429)).toEqual([]);
    expect(new Set(records.filter((r) => r.status === 200).map((r) => pathOf(r.url))).size).toBe(8);
    // Pages 1 and 2 cost 3 each: settled, they fill the first window, so page 3 waits for the next one.
    const start = (p: string) => records.find((r) => pathOf(r.url) === p)!.startedAt;
    expect(start('/page/3') - start('/page/1')).toBeGreaterThanOrEqual(1199);
  });
});
