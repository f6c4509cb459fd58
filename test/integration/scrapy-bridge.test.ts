// A real Scrapy spider (Debian's python3-scrapy) with the slotscope-scrapy extension, crawling the
// test site in its own process, streamed into the real core through the real ingest route: every
// response and failed download Scrapy counted is recorded once, with the slot, status, URL, latency
// and delays Scrapy's own AUTOTHROTTLE_DEBUG lines show, and the Log tab and exports say the same.

import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { openHistoryReader } from '../../electron/core/store/queries';
import { recordDebugLine } from '../../shared/debug-line';
import type { ResponseRecord } from '../../shared/types';
import { defer, ensureBuilt, externalSite, pathOf, waitFor } from './helpers';
import { PYTHON, runSpider, scrapyCrawlId, SKIP_REASON, startHost, throttleLines, type Host } from './scrapy-helpers';

// Loopback addresses of this file: 127.0.97.1-9.

beforeAll(async () => {
  if (PYTHON) await ensureBuilt();
}, 180_000);

async function finished(host: Host, id: number): Promise<void> {
  let status = '';
  await waitFor(() => {
    void host.call('crawls.stats', { id }).then((s) => (status = s.status));
    return status !== '' && status !== 'running' && status !== 'paused';
  }, 'the Scrapy crawl to end', 30_000);
}

function recorded(host: Host, id: number): ResponseRecord[] {
  const reader = openHistoryReader(host.db);
  defer(() => reader.close());
  return reader.responses(id);
}

describe.skipIf(!PYTHON)(`Scrapy bridge: recording${SKIP_REASON}`, () => {
  it('records every response and failed download Scrapy counted once, with what its AUTOTHROTTLE_DEBUG lines show', async () => {
    const site = await externalSite({
      seed: 19,
      hosts: {
        'rec-a.test': { address: '127.0.97.1', pages: 40, latency_ms: { base: 15, jitter: 5 }, reset: ['/broken'] },
        'rec-b.test': { address: '127.0.97.2', pages: 25, latency_ms: { base: 30, jitter: 5 } },
      },
    });
    const a = `http://127.0.97.1:${new URL(site.origin('rec-a.test')).port}`;
    const b = `http://127.0.97.2:${new URL(site.origin('rec-b.test')).port}`;
    const host = await startHost();
    const spider = runSpider({
      name: 'recording',
      startUrls: [`${a}/`, `${b}/`, `${a}/broken`, `${b}/nothing-here`],
      slotscopeUrl: host.server.url,
      settings: {
        AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_START_DELAY: 0.05, AUTOTHROTTLE_TARGET_CONCURRENCY: 1.5,
        CONCURRENT_REQUESTS_PER_DOMAIN: 2, RETRY_TIMES: 1,
      },
    });
    const id = await scrapyCrawlId(host);
    const { code, stats, log } = await spider.done;
    expect(code, log.slice(-3000)).toBe(0);
    await finished(host, id);
    const siteLog = (await site.finish()).log;

    // The crawl: source, spider name, Scrapy's settings, how it ended.
    const info = (await host.call('crawls.list', {})).find((c) => c.id === id)!;
    expect(info).toMatchObject({ name: 'recording', source: 'Scrapy', status: 'finished' });
    const settings = await host.call('settings.get', { id });
    expect(settings).toMatchObject({
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_START_DELAY: 0.05, AUTOTHROTTLE_TARGET_CONCURRENCY: 1.5,
      CONCURRENT_REQUESTS_PER_DOMAIN: 2, RETRY_TIMES: 1, DOWNLOAD_DELAY: 0,
    });

    const rows = recorded(host, id);
    const responses = rows.filter((r) => r.status !== null);
    const failures = rows.filter((r) => r.status === null);
    // Every response Scrapy counted, once each; every failed attempt Scrapy's downloader counted.
    // 65 pages, the 404, and `/` of each host twice (Scrapy's start requests are not de-duplicated).
    expect(stats.response_received_count).toBe(65 + 1 + 2);
    expect(responses.length).toBe(stats.response_received_count);
    expect(responses.length).toBe(stats['downloader/response_count']);
    expect(failures.length).toBe(stats['downloader/exception_count']);
    expect(failures.length).toBe(2);
    for (const f of failures) expect(f).toMatchObject({ url: `${a}/broken`, slot: '127.0.97.1', errorKind: 'connect-reset', latency: null });
    const failedPage = await host.call('requests.page', { crawlId: id, order: 'oldest', filter: { errorKind: 'connect-reset' } });
    expect(failedPage.rows.map((f) => f.attempt)).toEqual([0, 1]);
    expect(stats['slotscope/records_sent']).toBe(rows.length);
    expect(stats['slotscope/records_unsent']).toBe(0);

    // Slot, status and URL as the site served them, each request once (the slot is Scrapy's: the URL's host).
    const nameOf = (ip: string) => (ip === '127.0.97.1' ? 'rec-a.test' : 'rec-b.test');
    expect(responses.map((r) => `${nameOf(r.slot)} ${pathOf(r.url)} ${r.status}`).sort())
      .toEqual(siteLog.filter((e) => e.status !== 0).map((e) => `${e.host} ${e.path} ${e.status}`).sort());
    for (const r of responses) {
      expect(new URL(r.url).hostname).toBe(r.slot);
      expect(r.latency).toBeGreaterThan(0);
      expect(r.startedAt).toBeLessThanOrEqual(r.t);
    }
    expect(responses.filter((r) => r.status === 404).map((r) => pathOf(r.url))).toEqual(['/nothing-here']);

    // Scrapy's own AUTOTHROTTLE_DEBUG lines, byte for byte: from the records, in the Log tab, in the export.
    const scrapyLines = throttleLines(log);
    expect(scrapyLines.length).toBe(responses.length);
    const fromRecords = responses.map((r) => recordDebugLine(r));
    expect([...fromRecords].sort()).toEqual([...scrapyLines].sort());
    const logTab = (await host.call('log.events', { id, kind: 'debug', limit: 10_000 })).map((e) => e.text);
    expect(logTab).toEqual(scrapyLines);
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await host.core.exportHistory({ crawlId: id, format: 'scrapy-debug' }, out);
    const exported = Buffer.concat(chunks).toString('utf8').trim().split('\n').map((l) => l.slice(l.indexOf('INFO: ') + 6));
    expect(exported).toEqual(scrapyLines);

    // The slot table of the finished crawl: Scrapy's two downloader slots with their figures.
    const snap = await host.call('slots.snapshot', { id });
    const byKey = new Map(snap.rows.map((r) => [r[0], r]));
    expect([...byKey.keys()].sort()).toEqual(['127.0.97.1', '127.0.97.2']);
    expect(byKey.get('127.0.97.1')![10]).toBe(40 + 1 + 2);
    expect(byKey.get('127.0.97.2')![10]).toBe(25 + 1 + 1);

    // What-if with the crawl's own settings gives back the delays Scrapy applied.
    const w = await host.call('history.whatIf', { crawlId: id, settings: {} });
    const replayed = recorded(host, w.crawlId).filter((r) => r.status !== null);
    const key = (r: ResponseRecord) => `${r.slot} ${r.t}`;
    const replayedBy = new Map(replayed.map((r) => [key(r), r]));
    for (const r of responses) expect(replayedBy.get(key(r))?.delayAfter, r.url).toBeCloseTo(r.delayAfter, 9);
  });
});
