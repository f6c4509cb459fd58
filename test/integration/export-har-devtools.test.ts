// The HAR export loaded by Chrome DevTools' own HAR importer (the code behind the network panel's
// "Import HAR file"), inside the real Chromium: every entry becomes a request with our URL, status and timings.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { chromium } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { exportHistory } from '../../electron/core/store/export/index';
import { openHistoryReader } from '../../electron/core/store/queries';
import { crawlConfig, defer, ensureBuilt, freshDir, site } from './helpers';

// Loopback addresses of this file: 127.0.46.30-39.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

beforeAll(ensureBuilt, 120_000);

interface Imported {
  url: string;
  status: number;
  method: string;
  issueTime: number;
  endTime: number;
  blockedEnd: number;
  receiveHeadersEnd: number;
  resourceSize: number;
  transferSize: number;
  mimeType: string;
  finished: boolean;
}

it("loads in Chrome DevTools' network panel importer, one request per entry with our figures", async () => {
  expect(existsSync(CHROMIUM), `Chromium is needed at ${CHROMIUM} (or set CHROMIUM_PATH)`).toBe(true);
  const s = await site({
    seed: 9,
    hosts: {
      'har.test': { address: '127.0.46.30', pages: 15, latency_ms: { base: 15, jitter: 5 }, gzip: true },
      'slow.test': { address: '127.0.46.31', pages: 6, latency_ms: 40, hang: ['/page/3'], statuses: { '404': 0.2 } },
    },
  });
  const db = join(freshDir(), 'history.sqlite');
  const { summary } = await runCrawl({
    config: crawlConfig({
      name: 'HAR in DevTools',
      seeds: [`${s.origin('har.test')}/`, `${s.origin('slow.test')}/`, `${s.origin('slow.test')}/page/3`],
      follow: { scope: 'host' },
      settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.02, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_TIMEOUT: 0.3, BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [] },
      resolve: s.resolve,
    }),
    db,
  });
  const reader = openHistoryReader(db);
  const rows = reader.responses(summary.crawl_id);
  reader.close();
  expect(rows.some((r) => r.errorKind !== null)).toBe(true);

  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportHistory(db, { crawlId: summary.crawl_id, format: 'har' }, out);
  const har = Buffer.concat(chunks).toString('utf8');

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  defer(() => browser.close());
  const page = await browser.newPage();
  await page.goto('devtools://devtools/bundled/devtools_app.html');
  // Written as a string: the test runner rewrites import() in test code, and this one runs in DevTools.
  const imported = (await page.evaluate(`(async (text) => {
    const mod = await import('./models/har/har.js');
    const root = new mod.HARFormat.HARRoot(JSON.parse(text));
    return mod.Importer.Importer.requestsFromHARLog(root.log).map((q) => ({
      url: q.url(),
      status: q.statusCode,
      method: q.requestMethod,
      issueTime: q.issueTime(),
      endTime: q.endTime,
      blockedEnd: q.timing.sendStart,
      receiveHeadersEnd: q.timing.receiveHeadersEnd,
      resourceSize: q.resourceSize,
      transferSize: q.transferSize,
      mimeType: q.mimeType,
      finished: q.finished,
    }));
  })(${JSON.stringify(har)})`)) as Imported[];

  expect(imported).toHaveLength(rows.length);
  // DevTools sorts by start time; match each request to its row by URL and start.
  const byKey = new Map(rows.map((r) => [`${r.url} ${Math.floor(r.startedAt - r.waitMs)}`, r]));
  for (const q of imported) {
    const r = byKey.get(`${q.url} ${Math.round(q.issueTime * 1000)}`);
    expect(r, `no row for ${q.url} issued at ${q.issueTime}`).toBeDefined();
    if (!r) continue;
    expect(q.finished).toBe(true);
    expect(q.method).toBe(r.method);
    expect(q.status).toBe(r.status ?? 0);
    expect(q.transferSize).toBe(r.bytes);
    // The queueing (blocked) time comes first, then the wait for the headers (latency), then the body.
    expect(q.blockedEnd).toBeCloseTo(r.waitMs, 2);
    if (r.latency !== null) expect(q.receiveHeadersEnd - q.blockedEnd).toBeCloseTo(r.latency * 1000, 2);
    expect(q.endTime - q.issueTime).toBeCloseTo((r.t - (r.startedAt - r.waitMs)) / 1000, 2);
    if (r.contentType) expect(r.contentType.startsWith(q.mimeType)).toBe(true);
  }
}, 60_000);
