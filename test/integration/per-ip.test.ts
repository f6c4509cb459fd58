// CONCURRENT_REQUESTS_PER_IP > 0: host names that resolve to one address share one slot keyed
// by that address, whose concurrency is the per-IP value (not the per-domain one).

import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, maxOverlap, site } from './helpers';

// Loopback addresses of this file: 127.0.18.x.

describe('CONCURRENT_REQUESTS_PER_IP', () => {
  it('puts two host names on one address into one slot keyed by the IP, with the per-IP concurrency', async () => {
    const ip = '127.0.18.1';
    const s = await site({
      hosts: {
        'left.test': { address: ip, pages: 15, latency_ms: 40 },
        'right.test': { address: ip, pages: 15, latency_ms: 40 },
        'alone.test': { address: '127.0.18.2', pages: 15, latency_ms: 40 },
      },
    });
    expect(s.resolve['left.test']).toBe(ip);
    expect(s.resolve['right.test']).toBe(ip);
    const perIp = 2;
    const { records, stats, crawler } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('left.test')}/`, `${s.origin('right.test')}/`, `${s.origin('alone.test')}/`],
        settings: { CONCURRENT_REQUESTS_PER_IP: perIp, CONCURRENT_REQUESTS_PER_DOMAIN: 8, CONCURRENT_REQUESTS: 32, DOWNLOAD_DELAY: 0 },
        resolve: s.resolve,
      }),
    );
    expect(stats.status).toBe('finished');
    expect(records).toHaveLength(3 * 16);

    const shared = records.filter((r) => /\/\/(left|right)\.test:/.test(r.url));
    expect(shared).toHaveLength(32);
    expect(new Set(shared.map((r) => r.slot))).toEqual(new Set([ip]));
    expect(new Set(records.filter((r) => r.url.includes('alone.test')).map((r) => r.slot))).toEqual(new Set(['127.0.18.2']));
    expect(stats.slots).toBe(2);
    expect([...crawler.slots()].map((x) => x.key).sort()).toEqual([ip, '127.0.18.2']);
    expect(crawler.slot(ip)!.concurrency(crawler.currentSettings)).toBe(perIp);

    // In flight on the shared address across both names never exceeds the per-IP limit, and reaches it.
    const sharedMax = maxOverlap(shared.map((r) => [r.startedAt, r.t] as const));
    expect(sharedMax).toBeLessThanOrEqual(perIp);
    expect(sharedMax).toBe(perIp);
    // The site's view: each request is served for its 40 ms latency from its arrival.
    const siteShared = arrivals(s).filter((e) => e.host !== 'alone.test');
    expect(siteShared).toHaveLength(32);
    expect(maxOverlap(siteShared.map((e) => [e.t, e.t + 39] as const))).toBeLessThanOrEqual(perIp);
    // Both names were served, interleaved within the one slot.
    expect(arrivals(s, 'left.test')).toHaveLength(16);
    expect(arrivals(s, 'right.test')).toHaveLength(16);
    // The other address is its own slot with the same per-IP limit.
    expect(Math.max(...arrivals(s, 'alone.test').map((e) => e.in_flight))).toBe(perIp);
  });
});
