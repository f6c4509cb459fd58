// The browser host's download route in front of the real core: a crawl run by the core against the
// test site, then GET /export behind the same token, Host and Origin checks as every other request.

import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { openHistoryReader } from '../../electron/core/store/queries';
import { createCore, type Core } from '../../electron/core/create-core';
import { exportHistory, type ExportQuery } from '../../electron/core/store/export/index';
import { EXPORT_FORMATS, type CrawlInfo } from '../../shared/contract';
import { ensureBuilt, freshDir, site, waitFor } from './helpers';
import { httpGet, startTestServer } from './server/fixtures';

// Loopback addresses of this file: 127.0.46.20-29.

beforeAll(ensureBuilt, 120_000);

async function exportText(db: string, q: ExportQuery): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportHistory(db, q, out);
  return Buffer.concat(chunks).toString('utf8');
}

/** A core with one finished crawl of the test site. */
async function coreWithCrawl(): Promise<{ core: Core; db: string; crawlId: number }> {
  const s = await site({
    seed: 3,
    hosts: {
      'one.test': { address: '127.0.46.20', pages: 12, latency_ms: 5 },
      'two.test': { address: '127.0.46.21', pages: 8, latency_ms: 5, statuses: { '500': 0.2 } },
    },
  });
  const db = join(freshDir('slotscope-export-http-'), 'history.sqlite');
  const core = await createCore({ db });
  const created = await core.dispatch('crawls.create', {
    config: {
      name: 'download test',
      seeds: [`${s.origin('one.test')}/`, `${s.origin('two.test')}/`],
      follow: { scope: 'host' },
      settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.01, BACKOFF_HTTP_CODES: [] },
      resolve: s.resolve,
    },
  });
  expect(created.ok, JSON.stringify(created)).toBe(true);
  const crawlId = (created as { result: { crawl: CrawlInfo } }).result.crawl.id;
  expect((await core.dispatch('crawls.start', { id: crawlId })).ok).toBe(true);
  let status = '';
  await waitFor(() => {
    void core.dispatch('crawls.stats', { id: crawlId }).then((r) => {
      if (r.ok) status = (r.result as { status: string }).status;
    });
    return status === 'finished';
  }, 'the crawl to finish', 20_000);
  // The crawl's stored row says finished only once every record is committed (read the file, as the
  // tests below do, after that).
  const reader = openHistoryReader(db);
  try {
    await waitFor(() => reader.getCrawl(crawlId)?.status === 'finished', 'the stored crawl to be finished', 20_000);
  } finally {
    reader.close();
  }
  return { core, db, crawlId };
}

describe('GET /export', () => {
  it('needs the token, then streams each format as an attachment equal to the export itself', async () => {
    const { core, db, crawlId } = await coreWithCrawl();
    const { server } = await startTestServer({ dispatcher: core });
    const path = `/export?crawlId=${crawlId}&format=jsonl`;

    // Refused exactly like any other request without the right token, Host or Origin.
    expect((await httpGet(server.port, path)).status).toBe(401);
    expect((await httpGet(server.port, `${path}&token=wrong`)).status).toBe(401);
    expect((await httpGet(server.port, path, { cookie: 'slotscope_token=wrong' })).status).toBe(401);
    expect((await httpGet(server.port, `${path}&token=${server.token}`, { host: 'evil.example:80' })).status).toBe(421);
    expect((await httpGet(server.port, `${path}&token=${server.token}`, { origin: 'http://evil.example' })).status).toBe(403);

    for (const format of EXPORT_FORMATS) {
      const r = await httpGet(server.port, `/export?token=${encodeURIComponent(server.token)}&crawlId=${crawlId}&format=${format}`);
      expect(r.status, r.body).toBe(200);
      const ext = { 'scrapy-debug': 'log', jsonl: 'jsonl', csv: 'csv', har: 'har' }[format];
      expect(r.headers['content-disposition']).toBe(`attachment; filename="slotscope-crawl-${crawlId}.${ext}"`);
      expect(r.headers['content-type']).toMatch({ 'scrapy-debug': /^text\/plain/, jsonl: /^application\/x-ndjson/, csv: /^text\/csv/, har: /^application\/json/ }[format]);
      expect(r.headers['cache-control']).toBe('no-store');
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['set-cookie']).toBeUndefined();
      expect(r.body).toBe(await exportText(db, { crawlId, format }));
      expect(r.body.length).toBeGreaterThan(100);
    }
    // The cookie the page got carries the token too.
    const withCookie = await httpGet(server.port, path, { cookie: `slotscope_token=${server.token}` });
    expect(withCookie.status).toBe(200);
    expect(withCookie.body.trimEnd().split('\n').length).toBeGreaterThan(10);
  });

  it('filters by slot and time, and answers a bad query with 400 or 404 naming the parameter', async () => {
    const { core, db, crawlId } = await coreWithCrawl();
    const { server } = await startTestServer({ dispatcher: core });
    const t = `token=${encodeURIComponent(server.token)}`;
    const all = (await exportText(db, { crawlId, format: 'jsonl' })).trimEnd().split('\n').map((l) => JSON.parse(l) as { slot: string; t: number });
    const mid = all[Math.floor(all.length / 2)].t;

    const slot = await httpGet(server.port, `/export?${t}&crawlId=${crawlId}&format=jsonl&slot=two.test`);
    expect(slot.status).toBe(200);
    expect(slot.headers['content-disposition']).toBe(`attachment; filename="slotscope-crawl-${crawlId}-two.test.jsonl"`);
    expect(slot.body.trimEnd().split('\n').map((l) => JSON.parse(l).slot)).toEqual(all.filter((r) => r.slot === 'two.test').map((r) => r.slot));
    const later = await httpGet(server.port, `/export?${t}&crawlId=${crawlId}&format=jsonl&from=${mid}`);
    expect(later.body.trimEnd().split('\n')).toHaveLength(all.filter((r) => r.t >= mid).length);
    const iso = new Date(Math.ceil(mid)).toISOString();
    const before = await httpGet(server.port, `/export?${t}&crawlId=${crawlId}&format=jsonl&to=${encodeURIComponent(iso)}`);
    expect(before.body.trimEnd().split('\n')).toHaveLength(all.filter((r) => r.t < Math.ceil(mid)).length);

    const bad: [string, number, RegExp][] = [
      [`format=xml&crawlId=${crawlId}`, 400, /^format: "xml" is not allowed \(scrapy-debug, jsonl, csv, har\)/],
      [`format=csv`, 400, /^crawlId: missing \(a crawl id, a whole number >= 1\)/],
      [`format=csv&crawlId=0`, 400, /^crawlId: "0" is not allowed/],
      [`format=csv&crawlId=${crawlId}&from=soon`, 400, /^from: "soon" is not allowed \(epoch milliseconds/],
      [`format=csv&crawlId=${crawlId}&from=20&to=10`, 400, /^to: "10" is not allowed \(a time after from/],
      [`format=csv&crawlId=${crawlId}&colour=red`, 400, /^colour: "red" is not allowed \(not a parameter of \/export; known: token, crawlId, format, slot, from, to\)/],
      [`format=csv&crawlId=${crawlId}&format=har`, 400, /^format: "csv,har" is not allowed \(one value\)/],
      [`format=csv&crawlId=9999`, 404, /^crawlId: 9999 is not allowed \(a crawl of this database: /],
      [`format=csv&crawlId=${crawlId}&slot=three.test`, 404, /^slot: "three.test" is not allowed \(a slot of crawl \d+: one.test, two.test\)/],
    ];
    for (const [query, status, message] of bad) {
      const r = await httpGet(server.port, `/export?${t}&${query}`);
      expect(r.status, `${query}: ${r.body}`).toBe(status);
      expect(r.body).toMatch(message);
      expect(r.headers['content-disposition']).toBeUndefined();
    }
    // HEAD checks the query and sends the headers only.
    const head = await httpGet(server.port, `/export?${t}&crawlId=${crawlId}&format=csv`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-disposition']).toMatch(/\.csv"$/);
  });
});
