// Steering a real Scrapy spider from the console: a DOWNLOAD_DELAY change, pause/resume, stop and the
// per-slot controls reach the spider within a second (checked in the test site's own request log),
// each is recorded once in the crawl's change journal, and what Scrapy cannot do is refused in words.

import { beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../electron/core/testsite';
import { openHistoryReader } from '../../electron/core/store/queries';
import type { ChangeRecord, ResponseRecord } from '../../shared/types';
import { defer, ensureBuilt, externalSite, gaps, pathOf, sleep, waitFor } from './helpers';
import { PYTHON, runSpider, scrapyCrawlId, SKIP_REASON, startHost, type Host } from './scrapy-helpers';

// Loopback addresses of this file: 127.0.97.11-19.

beforeAll(async () => {
  if (PYTHON) await ensureBuilt();
}, 180_000);

async function responsesAtLeast(host: Host, id: number, n: number): Promise<void> {
  let got = 0;
  await waitFor(() => {
    void host.call('crawls.stats', { id }).then((s) => (got = s.responses));
    return got >= n;
  }, `${n} responses`, 20_000);
}

function recorded(host: Host, id: number): ResponseRecord[] {
  const reader = openHistoryReader(host.db);
  defer(() => reader.close());
  return reader.responses(id);
}

/**
 * Maps an epoch-ms time to the test site's log clock (ms since it started), from the pairs of a
 * request's recorded start and its arrival at the site (the median offset; each path once).
 */
function siteClock(records: readonly ResponseRecord[], log: readonly LogEntry[], host: string): (epochMs: number) => number {
  const byPath = new Map<string, LogEntry[]>();
  for (const e of log) if (e.host === host) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
  const offsets: number[] = [];
  for (const r of records) {
    const es = byPath.get(pathOf(r.url));
    if (es?.length === 1) offsets.push(es[0].t - r.startedAt);
  }
  if (offsets.length < 3) throw new Error(`too few requests of ${host} to align the clocks (${offsets.length})`);
  offsets.sort((x, y) => x - y);
  const mid = offsets[Math.floor(offsets.length / 2)];
  return (epochMs) => epochMs + mid;
}

const arrivals = (log: readonly LogEntry[], host: string) => log.filter((e) => e.host === host).sort((a, b) => a.t - b.t);

async function changes(host: Host, id: number): Promise<readonly ChangeRecord[]> {
  return host.call('log.changes', { id });
}

async function refused(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return (e as { appError: { code: string; message: string } }).appError;
  }
  throw new Error('expected the command to be refused');
}

describe.skipIf(!PYTHON)(`Scrapy bridge: steering${SKIP_REASON}`, () => {
  it('a DOWNLOAD_DELAY change reaches the gaps at the site within 1 s; stop closes the spider; each is journalled once', async () => {
    const site = await externalSite({ seed: 3, hosts: { 'delay.test': { address: '127.0.97.11', pages: 400, latency_ms: { base: 5, jitter: 1 } } } });
    const origin = `http://127.0.97.11:${new URL(site.origin('delay.test')).port}`;
    const host = await startHost();
    const spider = runSpider({
      name: 'delay', startUrls: [`${origin}/`], slotscopeUrl: host.server.url,
      settings: { DOWNLOAD_DELAY: 0.5, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
    });
    const id = await scrapyCrawlId(host);
    await responsesAtLeast(host, id, 5);
    const changedAt = Date.now();
    const r = await host.call('settings.update', { id, changes: { DOWNLOAD_DELAY: 0.1 } });
    expect(r.changed).toEqual(['DOWNLOAD_DELAY']);
    expect(Date.now() - changedAt).toBeLessThan(1000);
    expect((await host.call('settings.get', { id })).DOWNLOAD_DELAY).toBe(0.1);
    await sleep(2500);
    const stopAt = Date.now();
    await host.call('crawls.stop', { id });
    const { code, stats, log } = await spider.done;
    expect(code, log.slice(-2000)).toBe(0);
    expect(stats.finish_reason).toBe('slotscope_stop');
    let status = '';
    await waitFor(() => {
      void host.call('crawls.stats', { id }).then((s) => (status = s.status));
      return status === 'stopped';
    }, 'the crawl to be stopped', 10_000);
    const siteLog = (await site.finish()).log;
    const toSite = siteClock(recorded(host, id), siteLog, 'delay.test');
    const all = arrivals(siteLog, 'delay.test');
    const before = all.filter((e) => e.t < toSite(changedAt));
    const after = all.filter((e) => e.t > toSite(changedAt + 1000) && e.t < toSite(stopAt));
    expect(before.length).toBeGreaterThanOrEqual(5);
    // Scrapy's 0.5 s before the change (the site's stamps carry a few ms of its own scheduling; 0.1 s after is far below).
    for (const g of gaps(before)) expect(g).toBeGreaterThan(450);
    expect(after.length).toBeGreaterThanOrEqual(10);
    const firstAfter = all.findIndex((e) => e.t > toSite(changedAt + 1000));
    for (const g of gaps(all.slice(firstAfter - 1, firstAfter + after.length))) expect(g).toBeLessThan(250);
    // Stop: nothing new arrives a second after it.
    expect(all.filter((e) => e.t > toSite(stopAt + 1000))).toEqual([]);

    const journal = await changes(host, id);
    expect(journal.filter((c) => c.setting === 'DOWNLOAD_DELAY')).toEqual([
      expect.objectContaining({ slot: null, source: 'user', oldValue: 0.5, newValue: 0.1 }),
    ]);
    expect(journal.filter((c) => c.setting === 'stopped')).toEqual([expect.objectContaining({ slot: null, source: 'user', newValue: 'slotscope_stop' })]);
    expect(journal).toHaveLength(2);
  });

  it('pause stops new arrivals within 1 s and resume restarts them, each journalled once', async () => {
    const site = await externalSite({ seed: 4, hosts: { 'pause.test': { address: '127.0.97.12', pages: 400, latency_ms: { base: 5, jitter: 1 } } } });
    const origin = `http://127.0.97.12:${new URL(site.origin('pause.test')).port}`;
    const host = await startHost();
    const spider = runSpider({
      name: 'pause', startUrls: [`${origin}/`], slotscopeUrl: host.server.url,
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2 },
    });
    const id = await scrapyCrawlId(host);
    await responsesAtLeast(host, id, 5);
    const pausedAt = Date.now();
    expect((await host.call('crawls.pause', { id })).status).toBe('paused');
    expect(Date.now() - pausedAt).toBeLessThan(1000);
    await sleep(3000);
    expect((await host.call('crawls.stats', { id })).status).toBe('paused');
    const resumedAt = Date.now();
    expect((await host.call('crawls.resume', { id })).status).toBe('running');
    await sleep(1500);
    await host.call('crawls.stop', { id });
    expect((await spider.done).code).toBe(0);
    const siteLog = (await site.finish()).log;
    const toSite = siteClock(recorded(host, id), siteLog, 'pause.test');
    const all = arrivals(siteLog, 'pause.test');
    expect(all.filter((e) => e.t > toSite(pausedAt + 1000) && e.t < toSite(resumedAt))).toEqual([]);
    expect(all.filter((e) => e.t >= toSite(resumedAt) && e.t <= toSite(resumedAt + 1000)).length).toBeGreaterThanOrEqual(3);
    const paused = (await changes(host, id)).filter((c) => c.setting === 'paused');
    expect(paused.map((c) => [c.slot, c.oldValue, c.newValue, c.source])).toEqual([[null, false, true, 'user'], [null, true, false, 'user']]);
  });

  it('per-slot pause, delay pin and concurrency pin reach their slot only; what Scrapy cannot do is refused in words', async () => {
    const site = await externalSite({
      seed: 5,
      hosts: {
        'one.test': { address: '127.0.97.13', pages: 400, latency_ms: { base: 5, jitter: 1 } },
        'two.test': { address: '127.0.97.14', pages: 400, latency_ms: { base: 5, jitter: 1 } },
      },
    });
    const one = `http://127.0.97.13:${new URL(site.origin('one.test')).port}`;
    const two = `http://127.0.97.14:${new URL(site.origin('two.test')).port}`;
    const host = await startHost();
    const spider = runSpider({
      name: 'slots', startUrls: [`${one}/`, `${two}/`], slotscopeUrl: host.server.url,
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
    });
    const id = await scrapyCrawlId(host);
    await responsesAtLeast(host, id, 8);

    // Refusals first: nothing of them reaches the journal.
    const backoff = await refused(host.call('slots.resetBackoff', { id, slot: '127.0.97.13' }));
    expect(backoff).toMatchObject({ code: 'conflict' });
    expect(backoff.message).toContain('Scrapy has no backoff');
    const engineOnly = await refused(host.call('settings.update', { id, changes: { BACKOFF_MAX_DELAY: 10, DOWNLOAD_DELAY: 0.2 } }));
    expect(engineOnly.message).toContain("BACKOFF_MAX_DELAY is a setting of Slotscope's own engine");
    expect(engineOnly.message).toContain('Nothing was changed');
    const atOff = await refused(host.call('settings.update', { id, changes: { AUTOTHROTTLE_TARGET_CONCURRENCY: 3 } }));
    expect(atOff.message).toContain('AutoThrottle is off in this crawl');
    const enable = await refused(host.call('settings.update', { id, changes: { AUTOTHROTTLE_ENABLED: true } }));
    expect(enable.message).toContain('cannot be switched on or off while the spider runs');
    const randomize = await refused(host.call('settings.update', { id, changes: { RANDOMIZE_DOWNLOAD_DELAY: 0.2 } }));
    expect(randomize.message).toContain('0.5x to 1.5x');
    expect((await host.call('settings.get', { id })).DOWNLOAD_DELAY).toBe(0.1);

    const pausedAt = Date.now();
    const row = await host.call('slots.pause', { id, slot: '127.0.97.13' });
    expect(row[1]).toBe('paused');
    expect(Date.now() - pausedAt).toBeLessThan(1000);
    const pinnedAt = Date.now();
    const pinned = await host.call('slots.pinDelay', { id, slot: '127.0.97.14', seconds: 0.4 });
    expect(pinned[20]).toBe(0.4);
    expect(pinned[5]).toBe(0.4);
    const conc = await host.call('slots.pinConcurrency', { id, slot: '127.0.97.14', value: 3 });
    expect(conc[3]).toBe(3);
    await sleep(3000);
    const resumedAt = Date.now();
    await host.call('slots.resume', { id, slot: '127.0.97.13' });
    await host.call('slots.clearPins', { id, slot: '127.0.97.14' });
    await sleep(1000);
    await host.call('crawls.stop', { id });
    expect((await spider.done).code).toBe(0);
    const siteLog = (await site.finish()).log;
    const rows = recorded(host, id);
    const toSite = siteClock(rows, siteLog, 'one.test');
    const oneArrivals = arrivals(siteLog, 'one.test');
    const twoArrivals = arrivals(siteLog, 'two.test');
    expect(oneArrivals.filter((e) => e.t > toSite(pausedAt + 1000) && e.t < toSite(resumedAt))).toEqual([]);
    expect(oneArrivals.filter((e) => e.t >= toSite(resumedAt) && e.t <= toSite(resumedAt + 1000)).length).toBeGreaterThanOrEqual(3);
    const pinnedGaps = gaps(twoArrivals.filter((e) => e.t > toSite(pinnedAt + 1000) && e.t < toSite(resumedAt)));
    expect(pinnedGaps.length).toBeGreaterThanOrEqual(4);
    for (const g of pinnedGaps) expect(g).toBeGreaterThan(370);
    // The pinned slot's records say so.
    expect(rows.some((r) => r.slot === '127.0.97.14' && r.delayCause === 'pin' && r.delayAfter === 0.4)).toBe(true);

    const journal = (await changes(host, id)).map((c) => [c.slot, c.setting, c.oldValue, c.newValue, c.source]);
    expect(journal).toEqual([
      ['127.0.97.13', 'paused', false, true, 'user'],
      ['127.0.97.14', 'pin_delay', null, 0.4, 'user'],
      ['127.0.97.14', 'pin_concurrency', null, 3, 'user'],
      ['127.0.97.13', 'paused', true, false, 'user'],
      ['127.0.97.14', 'pin_delay', 0.4, null, 'user'],
      ['127.0.97.14', 'pin_concurrency', 3, null, 'user'],
      [null, 'stopped', null, 'slotscope_stop', 'user'],
    ]);
  });
});
