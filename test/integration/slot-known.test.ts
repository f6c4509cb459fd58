// A per-slot action on a slot the crawl set aside after a long idle is still an action on a known
// slot (issue 15 refuses only slots that do not exist): the crawler knows its long-idle slots.
import { describe, expect, it } from 'vitest';
import { Crawler } from '../../electron/core/engine/crawler';
import { crawlConfig, defer, site, sleep, waitFor } from './helpers';

// Loopback addresses of this file: 127.0.96.30-39.

describe('known slots', () => {
  it('a slot cleaned up after its idle time is still known, and a pin brings it back with what it learned', async () => {
    const s = await site({ hosts: {
      'idle.test': { address: '127.0.96.30', pages: 3, latency_ms: 1 },
      'slow.test': { address: '127.0.96.31', pages: 3, latency_ms: 1500 },
    } });
    const o = s.origin('idle.test');
    const crawler = new Crawler({
      config: crawlConfig({ seeds: [`${o}/page/1`, `${s.origin('slow.test')}/page/1`], follow: { scope: 'none' }, settings: { ROBOTSTXT_OBEY: false, AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.3 } , resolve: s.resolve }),
      idleSlotMs: 100,
    });
    defer(() => crawler.close());
    crawler.start();
    // Keep the crawl going (a second host's slow page) while idle.test sits idle.
    await waitFor(() => crawler.stats().responses >= 1, 'the first response');
    const learned = crawler.slot('idle.test')!.delay;
    await sleep(400);
    expect(crawler.slot('idle.test')).toBeUndefined(); // out of the working set
    expect(crawler.hasSlot('idle.test')).toBe(true);
    expect(crawler.hasSlot('never.test')).toBe(false);
    crawler.pinDelay('idle.test', 0.5);
    expect(crawler.slot('idle.test')!.delay).toBe(learned);
    expect(crawler.slot('idle.test')!.pinDelay).toBe(0.5);
  });
});
