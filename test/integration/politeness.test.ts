// Politeness against the real test site, judged from the site's own request log: per-slot and
// global concurrency, DOWNLOAD_DELAY with and without randomization, per-lane delay, DOWNLOAD_SLOTS.

import { beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../electron/core/testsite';
import { arrivals, crawl, crawlConfig, ensureBuilt, externalSite, gaps, hostGaps, maxOverlap, mean, ON_TIME_MS } from './helpers';

// Loopback addresses of this file: 127.0.10.x. The site runs in its own process (slotscope
// testsite) so that its arrival times are not held up by the crawler's event loop.

beforeAll(ensureBuilt, 120_000);

describe('concurrency', () => {
  it('never has more than CONCURRENT_REQUESTS_PER_DOMAIN in flight on a host, with DOWNLOAD_DELAY 0', async () => {
    const ext = await externalSite({ hosts: { 'burst.test': { address: '127.0.10.1', pages: 40, latency_ms: { base: 40, jitter: 10 } } } });
    const perDomain = 3;
    // Twelve seeds are queued at once on top of the links: the moment Scrapy 2.14+ overshoots.
    const seeds = [`${ext.origin('burst.test')}/`];
    for (let i = 1; i <= 12; i++) seeds.push(`${ext.origin('burst.test')}/page/${i * 3}`);
    const { stats } = await crawl(
      crawlConfig({
        seeds,
        follow: { scope: 'host' },
        settings: { CONCURRENT_REQUESTS: 32, CONCURRENT_REQUESTS_PER_DOMAIN: perDomain, DOWNLOAD_DELAY: 0 },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    const log = arrivals(s, 'burst.test');
    expect(stats.status).toBe('finished');
    expect(log.filter((e) => e.path !== '/robots.txt')).toHaveLength(40);
    const maxInFlight = Math.max(...log.map((e) => e.in_flight));
    expect(maxInFlight).toBeLessThanOrEqual(perDomain);
    // The limit is reached, so the crawl did run concurrently.
    expect(maxInFlight).toBe(perDomain);
  });

  it('keeps the sum in flight across hosts within CONCURRENT_REQUESTS', async () => {
    const hosts = ['g1.test', 'g2.test', 'g3.test', 'g4.test'];
    const ext = await externalSite({
      hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.10.${10 + i}`, pages: 12, latency_ms: 40 }])),
    });
    const global = 3;
    const { records, stats } = await crawl(
      crawlConfig({
        seeds: hosts.map((h) => `${ext.origin(h)}/`),
        settings: { CONCURRENT_REQUESTS: global, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    expect(records).toHaveLength(hosts.length * 12);
    // From the engine's own records: hand-over to the client until the response was processed.
    const engineMax = maxOverlap(records.map((r) => [r.startedAt, r.t] as const));
    expect(engineMax).toBeLessThanOrEqual(global);
    expect(engineMax).toBe(global);
    // From the site's log: each request is being served from its arrival for at least its 40 ms latency.
    const siteMax = maxOverlap(arrivals(s).map((e) => [e.t, e.t + 39] as const));
    expect(siteMax).toBeLessThanOrEqual(global);
    // And per host the per-domain limit holds too.
    for (const h of hosts) expect(Math.max(...arrivals(s, h).map((e) => e.in_flight))).toBeLessThanOrEqual(2);
  });
});

describe('DOWNLOAD_DELAY', () => {
  it('spaces the starts of one host by at least the delay when not randomized', async () => {
    const ext = await externalSite({
      hosts: {
        'slow1.test': { address: '127.0.10.20', pages: 12, latency_ms: 5 },
        'slow2.test': { address: '127.0.10.21', pages: 12, latency_ms: 5 },
      },
    });
    const delay = 0.15;
    const { stats, records } = await crawl(
      crawlConfig({
        seeds: [`${ext.origin('slow1.test')}/`, `${ext.origin('slow2.test')}/`],
        settings: { DOWNLOAD_DELAY: delay, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 8 },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    for (const h of ['slow1.test', 'slow2.test']) {
      expect(arrivals(s, h)).toHaveLength(13); // robots.txt goes through the same throttle
      const g = hostGaps(s, records, h);
      const warm = g.filter((x) => x.earlierLateBy <= ON_TIME_MS);
      // Enough gaps are judged at the site for the check to mean something. Under a loaded machine
      // the site's own arrival stamps wander by more than ON_TIME_MS for up to half the requests.
      expect(warm.length).toBeGreaterThanOrEqual(Math.ceil(g.length / 4));
      expect(Math.min(...warm.map((x) => x.site))).toBeGreaterThanOrEqual(delay * 1000 - 2);
      expect(Math.min(...g.map((x) => x.engine))).toBeGreaterThanOrEqual(delay * 1000 - 0.5);
      // Not much more than the delay either: the slot is delay-bound, not stalled.
      expect(mean(g.map((x) => x.site))).toBeLessThan(delay * 1000 * 1.3);
    }
    // The two hosts are throttled independently: they run side by side, not one after the other.
    const both = arrivals(s);
    expect(both[both.length - 1].t - both[0].t).toBeLessThan(13 * delay * 1000);
  });

  it('keeps every host\'s delay when many hosts become ready at the same moment', async () => {
    // Forty hosts on one listener (routed by Host): their requests become ready together, so one
    // dispatch pass starts many of them; each host's next start must still wait the full delay.
    const names = Array.from({ length: 40 }, (_, i) => `h${i}.many.test`);
    const ext = await externalSite({ hosts: Object.fromEntries(names.map((h) => [h, { address: '127.0.10.25', pages: 3, latency_ms: 1 }])) });
    const delay = 0.1;
    const { stats, records } = await crawl(
      crawlConfig({
        seeds: names.map((h) => `${ext.origin(h)}/`),
        settings: { DOWNLOAD_DELAY: delay, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS: 0 },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    expect(records).toHaveLength(40 * 4);
    const short: string[] = [];
    for (const h of names) {
      for (const g of hostGaps(s, records, h)) {
        if (g.engine < delay * 1000 - 0.5 || (g.earlierLateBy <= ON_TIME_MS && g.site < delay * 1000 - 2)) {
          short.push(`${g.url}: ${g.engine.toFixed(1)} ms after the previous start (site: ${g.site.toFixed(1)} ms)`);
        }
      }
    }
    expect(short).toEqual([]);
  });

  it('draws a randomized gap once per gap: the mean gap stays within 0.85-1.15x the delay', async () => {
    const ext = await externalSite({ hosts: { 'rand.test': { address: '127.0.10.30', pages: 41, latency_ms: 2 } } });
    const delay = 0.1;
    const draws: number[] = [];
    const seeded = mulberry32(20260101);
    const random = (): number => {
      const u = seeded();
      draws.push(u);
      return u;
    };
    const { stats, records } = await crawl(
      crawlConfig({
        seeds: [`${ext.origin('rand.test')}/`],
        settings: { DOWNLOAD_DELAY: delay, RANDOMIZE_DOWNLOAD_DELAY: true, CONCURRENT_REQUESTS_PER_DOMAIN: 8, ROBOTSTXT_OBEY: false },
        resolve: ext.resolve,
      }),
      { random },
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'rand.test');
    expect(log).toHaveLength(41);
    const g = gaps(log);
    const ratio = mean(g) / (delay * 1000);
    expect(ratio).toBeGreaterThanOrEqual(0.85);
    expect(ratio).toBeLessThanOrEqual(1.15);
    // Gaps really vary (randomization is on).
    expect(Math.max(...g) - Math.min(...g)).toBeGreaterThan(delay * 1000 * 0.4);
    // One draw per start, and the gap after each start is the delay times that draw's factor
    // (RANDOMIZE_DOWNLOAD_DELAY true = U[0.5, 1.5]): drawn once, not re-drawn while waiting.
    expect(draws).toHaveLength(stats.requests);
    const byStart = [...records].sort((a, b) => a.startedAt - b.startedAt);
    for (let k = 1; k < byStart.length; k++) {
      const want = delay * 1000 * (0.5 + draws[k - 1]);
      const engineGap = byStart[k].startedAt - byStart[k - 1].startedAt;
      expect(engineGap).toBeGreaterThanOrEqual(want - 0.5);
      expect(engineGap).toBeLessThan(want + 30);
    }
  });
});

describe('DOWNLOAD_DELAY_PER_SLOT', () => {
  it('starts three requests at 0.0, 0.3 and 1.0 s with 2 lanes, delay 0.3 and per-lane delay 1.0 (SPEC 3)', async () => {
    const ext = await externalSite({ hosts: { 'lanes.test': { address: '127.0.10.40', pages: 4, latency_ms: 0 } } });
    const o = ext.origin('lanes.test');
    const { stats, records } = await crawl(
      crawlConfig({
        seeds: [`${o}/page/1`, `${o}/page/2`, `${o}/page/3`],
        follow: { scope: 'none' },
        settings: {
          CONCURRENT_REQUESTS_PER_DOMAIN: 2,
          DOWNLOAD_DELAY: 0.3,
          DOWNLOAD_DELAY_PER_SLOT: 1.0,
          RANDOMIZE_DOWNLOAD_DELAY: false,
          ROBOTSTXT_OBEY: false,
        },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'lanes.test');
    expect(log.map((e) => e.path)).toEqual(['/page/1', '/page/2', '/page/3']);
    // Start times (the engine's hand-over to the client) relative to the first.
    const sorted = [...records].sort((a, b) => a.startedAt - b.startedAt);
    const starts = sorted.map((r) => (r.startedAt - sorted[0].startedAt) / 1000);
    for (const [i, want] of [0, 0.3, 1.0].entries()) {
      expect(starts[i]).toBeGreaterThanOrEqual(want - 0.0005);
      expect(starts[i]).toBeLessThan(want + 0.03);
    }
    // The site saw the same spacing (a gap after a late arrival, e.g. over a new connection, is short by that much).
    for (const g of hostGaps(s, records, 'lanes.test')) {
      const want = g.url.endsWith('/page/2') ? 300 : 700;
      if (g.earlierLateBy <= ON_TIME_MS) expect(g.site).toBeGreaterThanOrEqual(want - 2);
      expect(g.site).toBeLessThan(want + 30);
    }
    expect(log[2].t - log[0].t).toBeGreaterThanOrEqual(1000 - 15);
  });
});

describe('DOWNLOAD_SLOTS', () => {
  it('gives one host its own concurrency and delay while another keeps the defaults', async () => {
    const ext = await externalSite({
      hosts: {
        'special.test': { address: '127.0.10.50', pages: 10, latency_ms: 30 },
        'plain.test': { address: '127.0.10.51', pages: 30, latency_ms: 30 },
      },
    });
    const { stats, crawler, records } = await crawl(
      crawlConfig({
        seeds: [`${ext.origin('special.test')}/`, `${ext.origin('plain.test')}/`],
        settings: {
          CONCURRENT_REQUESTS_PER_DOMAIN: 4,
          DOWNLOAD_DELAY: 0,
          DOWNLOAD_SLOTS: { 'special.test': { concurrency: 1, delay: 0.2, randomize_delay: false } },
        },
        resolve: ext.resolve,
      }),
    );
    const s = await ext.finish();
    expect(stats.status).toBe('finished');
    const special = arrivals(s, 'special.test');
    const plain = arrivals(s, 'plain.test');
    expect(special).toHaveLength(11);
    expect(plain).toHaveLength(31);
    expect(Math.max(...special.map((e) => e.in_flight))).toBe(1);
    const specialGaps = hostGaps(s, records, 'special.test');
    expect(Math.min(...specialGaps.map((g) => g.engine))).toBeGreaterThanOrEqual(200 - 0.5);
    expect(Math.min(...specialGaps.filter((g) => g.earlierLateBy <= ON_TIME_MS).map((g) => g.site))).toBeGreaterThanOrEqual(200 - 2);
    // The other host is not held to the override: up to 4 at once, with gaps well under 0.2 s.
    expect(Math.max(...plain.map((e) => e.in_flight))).toBe(4);
    expect(Math.min(...gaps(plain))).toBeLessThan(50);
    const slot = crawler.slot('special.test');
    expect(slot?.concurrency(crawler.currentSettings)).toBe(1);
    expect(crawler.slot('plain.test')?.concurrency(crawler.currentSettings)).toBe(4);
  });
});
