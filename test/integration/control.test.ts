// Live control of a running crawl, checked at the site: pause/resume, stop (in-flight requests
// cancelled and recorded), pausing one slot, and setting changes applied whole or not at all.

import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import type { Crawler } from '../../electron/core/engine/crawler';
import { openHistoryReader } from '../../electron/core/store/queries';
import { arrivals, crawl, crawlConfig, defer, ensureBuilt, entryFor, externalSite, freshDir, gaps, hostGaps, launch, ON_TIME_MS, site, sleep, waitFor } from './helpers';

// Loopback addresses of this file: 127.0.15.x.

beforeAll(ensureBuilt, 120_000);

describe('crawl actions', () => {
  it('pause lets in-flight requests finish and starts nothing until resume', async () => {
    const s = await site({ hosts: { 'pause.test': { address: '127.0.15.1', pages: 40, latency_ms: 60 } } });
    const run = launch(
      crawlConfig({
        seeds: [`${s.origin('pause.test')}/`],
        settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 3, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false },
        resolve: s.resolve,
      }),
    );
    await waitFor(() => s.log.length >= 8, '8 requests served');
    run.crawler.pause();
    expect(run.crawler.status).toBe('paused');
    const requestsAtPause = run.crawler.stats().requests;
    await waitFor(() => run.crawler.stats().inFlight === 0, 'in-flight requests to finish', 5000);
    // Everything started before the pause completed and reached the site.
    expect(run.crawler.stats().requests).toBe(requestsAtPause);
    const served = s.log.length;
    expect(served).toBe(requestsAtPause);
    expect(run.records).toHaveLength(requestsAtPause);
    expect(run.records.every((r) => r.errorKind === null)).toBe(true);
    await sleep(500);
    expect(s.log.length).toBe(served);
    expect(run.crawler.stats().requests).toBe(requestsAtPause);
    expect(run.crawler.stats().queued).toBeGreaterThan(0);
    const lastBefore = Math.max(...s.log.map((e) => e.t));

    run.crawler.resume();
    const stats = await run.done;
    expect(stats.status).toBe('finished');
    const log = arrivals(s, 'pause.test');
    expect(log.filter((e) => e.path !== '/robots.txt')).toHaveLength(40);
    // The pause shows in the site's log as a gap of at least the time we waited.
    const after = log.filter((e) => e.t > lastBefore);
    expect(after.length).toBe(41 - served);
    expect(after[0].t - lastBefore).toBeGreaterThanOrEqual(500);
    expect(run.statuses).toEqual(['running', 'paused', 'running', 'finished']);
  });

  it('stop cancels in-flight requests, records them as cancelled and ends with status stopped', async () => {
    // The seeds never get an answer; the site logs each one when the client gives up on it.
    const hang = ['/', '/page/1', '/page/2', '/page/3', '/page/4', '/page/5'];
    const s = await site({ hosts: { 'stop.test': { address: '127.0.15.2', pages: 30, hang } } });
    const o = s.origin('stop.test');
    const run = launch(
      crawlConfig({
        seeds: [`${o}/`, `${o}/page/1`, `${o}/page/2`, `${o}/page/3`, `${o}/page/4`, `${o}/page/5`],
        settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false },
        resolve: s.resolve,
      }),
    );
    await waitFor(() => run.crawler.stats().inFlight === 4, '4 requests in flight');
    await sleep(100);
    const t0 = Date.now();
    const stats = await run.crawler.stop();
    expect(Date.now() - t0).toBeLessThan(1000); // did not wait for answers that never come
    expect(stats.status).toBe('stopped');
    expect(run.crawler.status).toBe('stopped');
    expect(stats.inFlight).toBe(0);
    expect(run.records).toHaveLength(4);
    for (const r of run.records) {
      expect(r.errorKind).toBe('cancelled');
      expect(r.status).toBeNull();
    }
    expect(stats.requests).toBe(4);
    await sleep(300);
    // The four were cut off (status 0: no answer sent) and nothing new was sent after the stop.
    const log = arrivals(s, 'stop.test');
    expect(log).toHaveLength(4);
    expect(log.every((e) => e.status === 0)).toBe(true);
    expect(new Set(log.map((e) => e.path))).toEqual(new Set(run.records.map((r) => new URL(r.url).pathname)));
    expect(run.statuses[run.statuses.length - 1]).toBe('stopped');
  });
});

describe('slot actions', () => {
  it('pauseSlot holds one host while the others continue', async () => {
    const s = await site({
      hosts: {
        'held.test': { address: '127.0.15.10', pages: 30, latency_ms: 20 },
        'free.test': { address: '127.0.15.11', pages: 30, latency_ms: 20 },
      },
    });
    const settings = { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false };
    const run = launch(crawlConfig({ seeds: [`${s.origin('held.test')}/`, `${s.origin('free.test')}/`], settings, resolve: s.resolve }));
    await waitFor(() => arrivals(s, 'held.test').length >= 4, 'held.test to serve 4 requests');
    run.crawler.pauseSlot('held.test', true);
    await waitFor(() => (run.crawler.slot('held.test')?.inFlight ?? 0) === 0, 'held.test in-flight requests to finish');
    const heldCount = arrivals(s, 'held.test').length;
    const freeCount = arrivals(s, 'free.test').length;
    await sleep(600);
    expect(arrivals(s, 'held.test')).toHaveLength(heldCount);
    // 0.05 s delay: about 12 more requests in 0.6 s on the other host.
    expect(arrivals(s, 'free.test').length).toBeGreaterThanOrEqual(freeCount + 4);
    expect(run.crawler.status).toBe('running');
    expect(run.changes.some((c) => c.slot === 'held.test' && c.source === 'user' && c.newValue === true)).toBe(true);

    run.crawler.pauseSlot('held.test', false);
    const stats = await run.done;
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'held.test', { robots: false })).toHaveLength(30);
    expect(arrivals(s, 'free.test', { robots: false })).toHaveLength(30);
  });
});

describe('settings changes', () => {
  it('applies a DOWNLOAD_DELAY change to the next requests and stores the change', async () => {
    // The site runs in its own process here, so its arrival times are free of this process's load.
    const ext = await externalSite({ hosts: { 'live.test': { address: '127.0.15.20', pages: 40, latency_ms: 5 } } });
    const db = join(freshDir(), 'history.sqlite');
    let crawler: Crawler | undefined;
    let changedAt = 0;
    const result = runCrawl({
      config: crawlConfig({
        seeds: [`${ext.origin('live.test')}/`],
        follow: { max_pages: 16 },
        settings: { DOWNLOAD_DELAY: 0, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
        resolve: ext.resolve,
      }),
      db,
      onStart: (c) => {
        crawler = c;
        const timer = setInterval(() => {
          if (c.stats().responses >= 8 && changedAt === 0) {
            const r = c.updateSettings({ DOWNLOAD_DELAY: 0.4 }, 'user');
            expect(r.ok).toBe(true);
            changedAt = Date.now();
            clearInterval(timer);
          }
        }, 2);
        defer(() => clearInterval(timer));
      },
    });
    const { summary } = await result;
    const s = await ext.finish();
    expect(changedAt).toBeGreaterThan(0);
    expect(crawler!.currentSettings.DOWNLOAD_DELAY).toBe(0.4);

    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const records = reader.responses(summary.crawl_id);
    expect(records).toHaveLength(17);
    const changes = reader.changes(summary.crawl_id).filter((c) => c.setting === 'DOWNLOAD_DELAY');
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ slot: null, source: 'user', oldValue: 0, newValue: 0.4 });

    // Split the requests at the change: before it they ran back to back, after it 0.4 s apart.
    const change = changes[0];
    const before = records.filter((r) => r.startedAt < change.t);
    const afterIt = records.filter((r) => r.startedAt >= change.t);
    expect(before.length).toBeGreaterThanOrEqual(8);
    expect(afterIt.length).toBeGreaterThanOrEqual(3);
    const all = hostGaps(s, records, 'live.test');
    const afterUrls = new Set(afterIt.map((r) => r.url));
    const beforeGaps = all.filter((g) => !afterUrls.has(g.url));
    const beforeSorted = beforeGaps.map((g) => g.site).sort((a, b) => a - b);
    expect(beforeSorted[Math.floor(beforeSorted.length / 2)]).toBeLessThan(50);
    // Every start after the change, the first one included, waited the new delay since the previous start.
    const tail = all.filter((g) => afterUrls.has(g.url));
    expect(tail).toHaveLength(afterIt.length);
    for (const g of tail) {
      expect(g.engine).toBeGreaterThanOrEqual(400 - 0.5);
      if (g.earlierLateBy <= ON_TIME_MS) expect(g.site).toBeGreaterThanOrEqual(400 - 2);
    }
    expect(afterIt.every((r) => r.delayBefore === 0.4 && r.delayAfter === 0.4)).toBe(true);
  });

  it('refuses an invalid change set whole: nothing of it is applied', async () => {
    const s = await site({ hosts: { 'refuse.test': { address: '127.0.15.30', pages: 30, latency_ms: 5 } } });
    let result: ReturnType<Crawler['updateSettings']> | undefined;
    let at = 0;
    const { crawler, changes, stats, records } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('refuse.test')}/`],
        settings: { DOWNLOAD_DELAY: 0, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1, AUTOTHROTTLE_TARGET_CONCURRENCY: 2 },
        resolve: s.resolve,
      }),
      {
        onResponse: (r, run) => {
          if (run.records.length === 5) {
            result = run.crawler.updateSettings({ DOWNLOAD_DELAY: 0.5, AUTOTHROTTLE_TARGET_CONCURRENCY: 0 }, 'user');
            at = r.t;
          }
        },
      },
    );
    expect(stats.status).toBe('finished');
    expect(result).toBeDefined();
    expect(result!.ok).toBe(false);
    if (result!.ok) return;
    expect(result!.errors.map((e) => e.setting)).toEqual(['AUTOTHROTTLE_TARGET_CONCURRENCY']);
    expect(result!.errors[0].message).toContain('AUTOTHROTTLE_TARGET_CONCURRENCY');
    expect(result!.errors[0].message).toContain('> 0');
    expect(crawler.currentSettings.DOWNLOAD_DELAY).toBe(0);
    expect(crawler.currentSettings.AUTOTHROTTLE_TARGET_CONCURRENCY).toBe(2);
    expect(changes).toEqual([]);
    // The site saw no 0.5 s delay after the refused change.
    const later = records.filter((r) => r.startedAt > at).map((r) => entryFor(s, r)).sort((a, b) => a.t - b.t);
    expect(later.length).toBeGreaterThanOrEqual(10);
    const laterGaps = gaps(later).sort((a, b) => a - b);
    expect(laterGaps[Math.floor(laterGaps.length / 2)]).toBeLessThan(100); // a 0.5 s delay would put every gap >= 500 ms
    expect(records.filter((r) => r.startedAt > at).every((r) => r.delayBefore === 0 && r.delayAfter === 0)).toBe(true);
  });
});
