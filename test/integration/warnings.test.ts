// The engine's warnings (SPEC 5.6) provoked against the real test site: each once per cause,
// naming the slot and suggesting a fix.
import { describe, expect, it } from 'vitest';
import type { EventRecord } from '../../shared/types';
import { crawl, crawlConfig, site } from './helpers';

const QUICK = { RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false };
const warningsOf = (events: readonly EventRecord[]) => events.filter((e) => e.kind === 'warning');

describe('warnings', () => {
  it('settings that cannot take effect, and too many waiting requests, once each', async () => {
    const s = await site({ hosts: { 'w1.test': { address: '127.0.21.1', pages: 30, latency_ms: 2 } } });
    const o = s.origin('w1.test');
    const { events } = await crawl(crawlConfig({
      seeds: Array.from({ length: 29 }, (_, i) => `${o}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { ...QUICK, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0, AUTOTHROTTLE_TARGET_CONCURRENCY: 4,
        CONCURRENT_REQUESTS_PER_DOMAIN: 2, DELAYED_REQUESTS_WARN_THRESHOLD: 10 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    const w = warningsOf(events);
    expect(w.filter((e) => e.code === 'target-above-concurrency')).toHaveLength(1);
    expect(w.find((e) => e.code === 'target-above-concurrency')!.text).toMatch(/AUTOTHROTTLE_TARGET_CONCURRENCY \(4\).*CONCURRENT_REQUESTS_PER_DOMAIN \(2\).*Raise/);
    expect(w.filter((e) => e.code === 'delayed-requests')).toHaveLength(1);
  });

  it('fast error answers suggest a rate limit or a block', async () => {
    const s = await site({ hosts: { 'w2.test': { address: '127.0.21.2', pages: 40, latency_ms: 2, statuses: { '403': 1 } } } });
    const o = s.origin('w2.test');
    const { events } = await crawl(crawlConfig({
      seeds: Array.from({ length: 35 }, (_, i) => `${o}/page/${i + 1}`), follow: { scope: 'none' },
      settings: QUICK, resolve: s.resolve,
    }), { limitMs: 20_000 });
    const w = warningsOf(events).filter((e) => e.code === 'fast-errors');
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ slot: 'w2.test' });
    expect(w[0].text).toMatch(/last: 403.*BACKOFF_HTTP_CODES/);
  });

  it('a run of identical small 200 pages after varied ones suggests a soft block', async () => {
    const s = await site({ hosts: { 'w3.test': { address: '127.0.21.3', pages: 40, page_bytes: 3000, latency_ms: 2,
      soft_block: { after: 8, body: '<html>please slow down</html>' } } } });
    const o = s.origin('w3.test');
    const { events } = await crawl(crawlConfig({
      seeds: [`${o}/robots.txt`, ...Array.from({ length: 30 }, (_, i) => `${o}/page/${i + 1}`)], follow: { scope: 'none' },
      settings: { ...QUICK, CONCURRENT_REQUESTS_PER_DOMAIN: 1 }, resolve: s.resolve,
    }), { limitMs: 20_000 });
    expect(warningsOf(events).filter((e) => e.code === 'soft-block').map((e) => e.slot)).toEqual(['w3.test']);
  });

  it('no soft-block warning for an ordinary site whose pages all have one size', async () => {
    const s = await site({ hosts: { 'w4.test': { address: '127.0.21.4', pages: 30, page_bytes: 1000, latency_ms: 2 } } });
    const { events } = await crawl(crawlConfig({ seeds: [`${s.origin('w4.test')}/`], settings: QUICK, resolve: s.resolve }), { limitMs: 20_000 });
    expect(warningsOf(events)).toEqual([]);
  });

  it('CDN cache hits with tiny latencies', async () => {
    const s = await site({ hosts: { 'w5.test': { address: '127.0.21.5', pages: 30, latency_ms: 1,
      headers: { Age: '120', 'X-Cache': 'HIT', 'CF-Cache-Status': 'HIT' } } } });
    const { events } = await crawl(crawlConfig({ seeds: [`${s.origin('w5.test')}/`], settings: QUICK, resolve: s.resolve }), { limitMs: 20_000 });
    const w = warningsOf(events).filter((e) => e.code === 'cdn-cache');
    expect(w).toHaveLength(1);
    expect(w[0].text).toMatch(/DOWNLOAD_DELAY floor/);
  });

  it('a delay stuck at AUTOTHROTTLE_MAX_DELAY; a delay that makes concurrency 1; concurrency below target', async () => {
    const s = await site({ hosts: {
      'slow.test': { address: '127.0.21.6', pages: 30, latency_ms: 60 },
      'gap.test': { address: '127.0.21.7', pages: 30, latency_ms: 3 },
      'under.test': { address: '127.0.21.8', pages: 70, latency_ms: 3 },
    } });
    const { events } = await crawl(crawlConfig({
      seeds: [...Array.from({ length: 25 }, (_, i) => `${s.origin('slow.test')}/page/${i + 1}`),
        ...Array.from({ length: 12 }, (_, i) => `${s.origin('gap.test')}/page/${i + 1}`),
        ...Array.from({ length: 60 }, (_, i) => `${s.origin('under.test')}/page/${i + 1}`)],
      follow: { scope: 'none' },
      settings: { ...QUICK, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.01, CONCURRENT_REQUESTS_PER_DOMAIN: 4,
        THROTTLING_SCOPES: {
          'slow.test': { autothrottle: { max_delay: 0.02 } },
          'gap.test': { delay: 0.05, autothrottle: { enabled: false } },
          'under.test': { delay: 0.03, autothrottle: { target_concurrency: 3 } },
        } },
      resolve: s.resolve,
    }), { limitMs: 30_000 });
    const w = warningsOf(events);
    expect(w.filter((e) => e.code === 'delay-at-max').map((e) => e.slot)).toEqual(['slow.test']);
    // under.test's 0.03 s floor is also above its 3 ms latency: it rightly gets this warning too.
    expect(w.filter((e) => e.code === 'delay-makes-concurrency-1').map((e) => e.slot).sort()).toEqual(['gap.test', 'under.test']);
    expect(w.filter((e) => e.code === 'concurrency-below-target').map((e) => e.slot)).toEqual(['under.test']);
  });
});
