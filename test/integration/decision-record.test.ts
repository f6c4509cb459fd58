// One record of every throttle decision (issue 14.2): the Log tab's AutoThrottle lines (stored
// debug events, rendered by the line function the Log tab uses) and the exported Scrapy debug log agree line for line
// on a real crawl with backoff, a Retry-After block and a delay pin, all read back from SQLite.
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { exportHistory } from '../../electron/core/store/export/index';
import { openHistoryReader } from '../../electron/core/store/queries';
import { eventLogLine } from '../../shared/debug-line';
import { crawlConfig, ensureBuilt, freshDir, site } from './helpers';

// Loopback addresses of this file: 127.0.90.20-29.

beforeAll(() => ensureBuilt(), 120_000);

describe('the Log tab and the scrapy-debug export', () => {
  it('agree on every response of a crawl with backoff, Retry-After and a pin', async () => {
    const s = await site({ seed: 3, hosts: {
      'mix.test': { address: '127.0.90.20', pages: 30, latency_ms: 4, statuses: { '503': 0.25 } },
      'ra.test': { address: '127.0.90.21', pages: 15, latency_ms: 2, rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } },
    } });
    const db = join(freshDir(), 'h.sqlite');
    let pinned = false;
    const { summary } = await runCrawl({
      config: crawlConfig({
        seeds: [`${s.origin('mix.test')}/`, `${s.origin('ra.test')}/`],
        follow: { scope: 'host' },
        settings: {
          AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_START_DELAY: 0.02, AUTOTHROTTLE_MAX_DELAY: 2,
          RANDOMIZE_DOWNLOAD_DELAY: false, BACKOFF_MIN_DELAY: 0.05, BACKOFF_MAX_DELAY: 1.5, BACKOFF_WINDOW: 0.3, RETRY_TIMES: 6, ROBOTSTXT_OBEY: false,
          CONCURRENT_REQUESTS_PER_DOMAIN: 2,
        },
        resolve: s.resolve,
      }),
      db,
      onStart: (crawler) => {
        const timer = setInterval(() => {
          if (pinned) return clearInterval(timer);
          if (crawler.stats().responses >= 12) {
            pinned = true;
            crawler.pinDelay('mix.test', 0.03);
          }
        }, 5);
      },
    });
    expect(pinned).toBe(true);
    const reader = openHistoryReader(db);
    const rows = reader.responses(summary.crawl_id);
    const events = reader.events(summary.crawl_id, { kind: 'debug' }).filter((e) => e.code === 'autothrottle');
    reader.close();
    // The crawl has what the check needs: lines during backoff, inside a Retry-After block, after the pin.
    expect(rows.some((r) => r.backoffLevel > 0 && r.latency !== null)).toBe(true);
    expect(rows.some((r) => r.delayCause === 'retry-after')).toBe(true);
    expect(rows.some((r) => r.delayCause === 'pin')).toBe(true);

    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await exportHistory(db, { crawlId: summary.crawl_id, format: 'scrapy-debug' }, out);
    const exported = Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '');
    const shown = events.map((e) => eventLogLine(e));
    expect(shown.length).toBeGreaterThan(30);
    // Same lines, same order (both by time, then by record), byte for byte, prefix included.
    expect(shown).toEqual(exported);
  }, 60_000);
});
