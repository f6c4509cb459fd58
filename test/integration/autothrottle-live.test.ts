// AutoThrottle in a live crawl: the recorded delays replay exactly through the pure policy, the
// delays really space the requests at the site, and the debug lines are Scrapy's format.

import { beforeAll, describe, expect, it } from 'vitest';
import { autothrottleNextDelay, autothrottleParams, autothrottleStartDelay } from '../../electron/core/engine/throttle/autothrottle';
import { formatDebugLine } from '../../shared/debug-line';
import type { ResponseRecord } from '../../shared/types';
import { arrivals, crawl, crawlConfig, ensureBuilt, externalSite, hostGaps, ON_TIME_MS, site } from './helpers';

// Loopback addresses of this file: 127.0.11.x.

beforeAll(ensureBuilt, 120_000);

const SETTINGS = {
  AUTOTHROTTLE_ENABLED: true,
  AUTOTHROTTLE_TARGET_CONCURRENCY: 1,
  AUTOTHROTTLE_START_DELAY: 0.5,
  AUTOTHROTTLE_MAX_DELAY: 5,
  DOWNLOAD_DELAY: 0,
  RANDOMIZE_DOWNLOAD_DELAY: false,
  CONCURRENT_REQUESTS_PER_DOMAIN: 4,
};

async function slowSite(address: string) {
  return site({ hosts: { 'slow.test': { address, pages: 10, latency_ms: { base: 200, jitter: 40 } } } });
}

describe('AutoThrottle live', () => {
  it('records the delays the pure policy computes from the recorded latencies, and obeys them', async () => {
    // The site runs in its own process here, so its arrival times are free of this process's load.
    const ext = await externalSite({ hosts: { 'slow.test': { address: '127.0.11.1', pages: 10, latency_ms: { base: 200, jitter: 40 } } } });
    const config = crawlConfig({ seeds: [`${ext.origin('slow.test')}/`], settings: SETTINGS, resolve: ext.resolve });
    const { records, stats, events } = await crawl(config);
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    expect(records.length).toBe(11); // robots.txt (404) + 10 pages
    expect(records.every((r) => r.slot === 'slow.test')).toBe(true);

    // Replay the records, in the order the engine processed them, through the pure function.
    const params = autothrottleParams(config.settings);
    let delay = autothrottleStartDelay(config.settings);
    expect(delay).toBe(0.5);
    for (const r of records) {
      expect(r.status).not.toBeNull();
      expect(r.latency).not.toBeNull();
      // The site's latency is 200 ± 40 ms; the engine measured at least that.
      expect(r.latency!).toBeGreaterThanOrEqual(0.158);
      expect(r.delayBefore).toBe(delay);
      delay = autothrottleNextDelay(delay, r.latency!, r.status!, params);
      expect(r.delayAfter).toBe(delay);
      expect(r.delayCause).toBe('autothrottle');
    }
    // The delay moved down from the start delay toward latency / target, never below a latency seen.
    expect(delay).toBeLessThan(0.5);
    expect(delay).toBeGreaterThanOrEqual(Math.min(...records.map((r) => r.latency!)));
    // Debug off: no debug lines at all.
    expect(events.filter((e) => e.kind === 'debug')).toHaveLength(0);

    // The delay in effect when a request started spaced it from the previous start: in the
    // engine's start times, and at the site after on-time arrivals (see hostGaps).
    let checked = 0;
    for (const g of hostGaps(s, records, 'slow.test')) {
      const later = records.find((r) => r.url === g.url)!;
      const prior = records.filter((r) => r.t < later.startedAt);
      const inEffect = prior.length ? prior[prior.length - 1].delayAfter : autothrottleStartDelay(config.settings);
      expect(g.engine).toBeGreaterThanOrEqual(inEffect * 1000 - 0.5);
      if (g.earlierLateBy <= ON_TIME_MS) expect(g.site).toBeGreaterThanOrEqual(inEffect * 1000 - 2);
      checked++;
    }
    expect(checked).toBe(10);
  });

  it('writes one Scrapy debug line per adjusted response, formatted from the recorded fields', async () => {
    const s = await slowSite('127.0.11.2');
    const { records, events, stats } = await crawl(
      crawlConfig({ seeds: [`${s.origin('slow.test')}/`], settings: { ...SETTINGS, AUTOTHROTTLE_DEBUG: true }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const adjusted: ResponseRecord[] = records.filter((r) => r.status !== null && r.latency !== null);
    const debug = events.filter((e) => e.kind === 'debug');
    expect(adjusted.length).toBe(11);
    expect(debug).toHaveLength(adjusted.length);
    debug.forEach((e, i) => {
      const r = adjusted[i];
      expect(e.slot).toBe(r.slot);
      expect(e.text).toBe(
        formatDebugLine({ slot: r.slot, concurrency: r.inFlight, delay: r.delayAfter, oldDelay: r.delayBefore, latency: r.latency!, size: r.bytes }),
      );
      // Scrapy's shape, independently of the formatter.
      expect(e.text).toMatch(/^slot: slow\.test \| conc:[ \d]{2,} \| delay:[ \d]{5,} ms \([+-]\d+\) \| latency:[ \d]{5,} ms \| size:[ \d]{6,} bytes$/);
      expect(e.text).toContain(`latency:${String(Math.trunc(r.latency! * 1000)).padStart(5)} ms`);
      expect(e.text).toContain(`size:${String(r.bytes).padStart(6)} bytes`);
    });
    // Sizes are the bodies' sizes as the site sent them (pages are about 1000 bytes).
    expect(adjusted.filter((r) => r.url.endsWith('/page/1'))[0].bytes).toBeGreaterThan(900);
    expect(arrivals(s, 'slow.test')).toHaveLength(11);
  });
});
