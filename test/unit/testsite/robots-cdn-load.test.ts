// Checks failing robots.txt (always, or a few times then fine), a CDN-looking host built from
// plain headers and latency, and the per-host in-flight statistics, over real HTTP.

import { describe, expect, it } from 'vitest';
import { get, sleep, start, type Fetched } from './site-helpers';


async function times(url: string, n: number): Promise<Fetched[]> {
  const out: Fetched[] = [];
  for (let i = 0; i < n; i++) out.push(await get(url));
  return out;
}

describe('robots.txt failures', () => {
  it('answers robots.status 500 or 503 on every request', async () => {
    const site = await start({
      hosts: { 'e500.test': { address: '127.0.0.2', robots: { status: 500 } }, 'e503.test': { address: '127.0.0.3', robots: { status: 503 } } },
    });
    const a = await times(`${site.hosts['e500.test']}/robots.txt`, 3);
    const b = await times(`${site.hosts['e503.test']}/robots.txt`, 3);
    expect(a.map((r) => r.status)).toEqual([500, 500, 500]);
    expect(b.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(b[0].text).toBe('503 Service Unavailable\n');
    expect((await get(`${site.hosts['e503.test']}/`)).status).toBe(200); // pages are unaffected
  });

  it('with fail_times fails that many times, then serves the rules with 200', async () => {
    const site = await start({
      hosts: {
        'later.test': { address: '127.0.0.2', robots: { status: 503, fail_times: 2, crawl_delay: 1, disallow: ['/private/'] } },
        'raw.test': { address: '127.0.0.3', robots: { status: 500, fail_times: 1, body: 'User-agent: *\nDisallow: /secret\n' } },
      },
    });
    const later = await times(`${site.hosts['later.test']}/robots.txt`, 4);
    expect(later.map((r) => r.status)).toEqual([503, 503, 200, 200]);
    expect(later[0].text).toBe('503 Service Unavailable\n');
    expect(later[2].text).toBe('User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n');
    expect(later[3].headers['content-type']).toBe('text/plain; charset=utf-8');
    const raw = await times(`${site.hosts['raw.test']}/robots.txt`, 2);
    expect(raw.map((r) => [r.status, r.text])).toEqual([
      [500, '500 Internal Server Error\n'],
      [200, 'User-agent: *\nDisallow: /secret\n'],
    ]);
    expect(site.log.filter((e) => e.host === 'later.test').map((e) => e.status)).toEqual([503, 503, 200, 200]);
  });
});

describe('CDN-style host', () => {
  it('carries Age, X-Cache and CF-Cache-Status on its answers, quickly', async () => {
    const site = await start({
      hosts: {
        'cdn.test': {
          address: '127.0.0.2',
          headers: { Age: '120', 'X-Cache': 'HIT', 'CF-Cache-Status': 'HIT' },
          latency_ms: 2,
          gzip: true,
        },
      },
    });
    const base = site.hosts['cdn.test'];
    await get(`${base}/page/2`); // warm the connection
    for (const r of [await get(`${base}/`), await get(`${base}/page/1`, { headers: { 'accept-encoding': 'gzip' } }), await get(`${base}/missing`)]) {
      expect(r.headers.age).toBe('120');
      expect(r.headers['x-cache']).toBe('HIT');
      expect(r.headers['cf-cache-status']).toBe('HIT');
      expect(r.ms).toBeGreaterThanOrEqual(1.5);
      expect(r.ms).toBeLessThan(150);
    }
    expect((await get(`${base}/page/1`, { headers: { 'accept-encoding': 'gzip' } })).headers['content-encoding']).toBe('gzip');
  });
});

describe('inFlightStats', () => {
  it('integrates in_flight over the time the host was busy: mean, max and samples', async () => {
    const site = await start({ hosts: { 'busy.test': { address: '127.0.0.2', latency_ms: 100 }, 'idle.test': {} } });
    const base = site.hosts['busy.test'];
    expect(site.inFlightStats('busy.test')).toEqual({ mean: 0, max: 0, samples: 0 });
    await get(`${base}/page/9`); // warm one connection; counted: 1 request alone for ~100 ms
    await Promise.all(Array.from({ length: 4 }, (_, i) => get(`${base}/page/${i + 1}`)));
    const burst = site.inFlightStats('busy.test');
    expect(burst.max).toBe(4);
    expect(burst.samples).toBe(5);
    // ~100 ms at 1, then ~100 ms at 4 (timers fire a little late, arrivals a few ms apart): about 2.5.
    expect(burst.mean).toBeGreaterThan(2.2);
    expect(burst.mean).toBeLessThan(2.7);

    await sleep(200); // idle time does not count
    await get(`${base}/`);
    const after = site.inFlightStats('busy.test');
    expect(after.samples).toBe(6);
    expect(after.max).toBe(4);
    expect(after.mean).toBeGreaterThan(1.9); // (100·1 + 100·4 + 100·1) / 300 = 2
    expect(after.mean).toBeLessThan(2.2);
    expect(site.inFlightStats('IDLE.test')).toEqual({ mean: 0, max: 0, samples: 0 });
    expect(() => site.inFlightStats('nope.test')).toThrow(/unknown host "nope.test"/);
  });

  it('includes requests still being served, and the load a per_inflight host saw', async () => {
    const site = await start({ hosts: { 'o.test': { address: '127.0.0.2', latency_ms: { base: 300, per_inflight: 10 } } } });
    const base = site.hosts['o.test'];
    const pending = Promise.all(Array.from({ length: 3 }, (_, i) => get(`${base}/page/${i + 1}`)));
    await sleep(150);
    const mid = site.inFlightStats('o.test');
    expect(mid).toMatchObject({ max: 3, samples: 3 });
    expect(mid.mean).toBeGreaterThan(2.5);
    expect(mid.mean).toBeLessThanOrEqual(3);
    await pending;
    const done = site.inFlightStats('o.test');
    // The three leave 10 ms apart (per_inflight): the mean drops a little below 3.
    expect(done.mean).toBeGreaterThan(2.6);
    expect(done.mean).toBeLessThan(3);
    expect(Math.max(...site.log.map((e) => e.in_flight))).toBe(done.max);
  });
});
