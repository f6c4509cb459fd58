// Importing a Scrapy log from the window: the contract's 'history.importScrapyLog' (Electron, and
// logs up to 1 MiB over the WebSocket) and the browser host's POST /import upload (any size),
// both into the real core's database; the imported crawl's slots come back from 'slots.snapshot'
// like a live crawl's, and a refused import writes nothing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/create-core';
import { SLOT_COLUMNS, type CrawlInfo, type ImportReport, type Reply, type SlotTuple } from '../../shared/contract';
import { defer, ensureBuilt, freshDir, ROOT } from './helpers';
import { httpGet, startTestServer } from './server/fixtures';

beforeAll(ensureBuilt, 120_000);

const FIXTURE = join(ROOT, 'test', 'fixtures', 'scrapy-logs', 'scrapy-2.8.0-debug.log');
const LOG = readFileSync(FIXTURE, 'utf8');
/** Debug lines per slot, counted from the log itself. */
const PER_SLOT = (() => {
  const m = new Map<string, number>();
  for (const x of LOG.matchAll(/\[scrapy\.extensions\.throttle\] INFO: slot: (\S+) \|/g)) m.set(x[1], (m.get(x[1]) ?? 0) + 1);
  return m;
})();

async function freshCore(): Promise<Core> {
  const core = await createCore({ db: join(freshDir('slotscope-import-host-'), 'history.sqlite') });
  defer(() => core.close());
  return core;
}

function ok<T>(r: Reply): T {
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.error)}`);
  return r.result as T;
}

const col = (name: (typeof SLOT_COLUMNS)[number]) => SLOT_COLUMNS.indexOf(name);

async function expectSlotsOf(core: Core, crawlId: number): Promise<void> {
  const { rows } = ok<{ rows: SlotTuple[] }>(await core.dispatch('slots.snapshot', { id: crawlId }));
  expect(new Map(rows.map((r) => [r[col('key')], r[col('requests')]]))).toEqual(PER_SLOT);
  for (const r of rows) {
    expect(r[col('state')]).toBe('idle');
    expect(r[col('inFlight')]).toBe(0);
    expect(r[col('delay')]).toBeGreaterThan(0);
    expect(r[col('avgLatency')]).toBeGreaterThan(0);
  }
}

describe("'history.importScrapyLog'", () => {
  it('stores the log as a finished crawl whose slots the snapshot lists, and announces it', async () => {
    const core = await freshCore();
    const seen: CrawlInfo[][] = [];
    core.subscribe((event, payload) => {
      if (event === 'crawls.changed') seen.push([...(payload as { crawls: CrawlInfo[] }).crawls]);
    });
    const report = ok<ImportReport>(await core.dispatch('history.importScrapyLog', { name: 'scrapy-2.8.0-debug.log', text: LOG, tz: 'UTC' }));
    expect(report.crawlId).not.toBeNull();
    expect(report.debugLines).toBe([...PER_SLOT.values()].reduce((a, b) => a + b, 0));
    expect(report.slots).toBe(PER_SLOT.size);
    expect(report.scrapyVersion).toBe('2.8.0');
    expect(report.unreadable).toBe(0);
    const list = ok<CrawlInfo[]>(await core.dispatch('crawls.list', {}));
    expect(list.map((c) => [c.id, c.name, c.status])).toEqual([[report.crawlId, 'Scrapy log scrapy-2.8.0-debug.log', 'finished']]);
    expect(seen.at(-1)?.map((c) => c.id)).toEqual([report.crawlId]);
    await expectSlotsOf(core, report.crawlId!);
  });

  it('refuses a log without debug lines and bad params, naming the field, and writes nothing', async () => {
    const core = await freshCore();
    const noDebug = LOG.split('\n').filter((l) => !l.includes('[scrapy.extensions.throttle]')).join('\n');
    const refused = await core.dispatch('history.importScrapyLog', { name: 'plain.log', text: noDebug });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.field).toBe('text');
      expect(refused.error.message).toMatch(/^no AUTOTHROTTLE_DEBUG line in plain\.log \(\d+ lines read, 0 unreadable\).*AUTOTHROTTLE_DEBUG = True\. Nothing was imported\.$/);
    }
    for (const [params, field, allowed] of [
      [{ name: 'x.log', text: LOG, tz: 'Mars/Olympus' }, 'tz', /local, UTC, or an offset/],
      [{ name: '', text: LOG }, 'name', /the log file's name/],
      [{ name: 'x.log', text: 42 }, 'text', /the log's text, a string/],
    ] as const) {
      const r = await core.dispatch('history.importScrapyLog', params);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.field).toBe(field);
        expect(r.error.message).toMatch(allowed);
      }
    }
    expect(ok<CrawlInfo[]>(await core.dispatch('crawls.list', {}))).toEqual([]);
  });
});

describe('POST /import', () => {
  const post = (port: number, path: string, body: string, headers: Record<string, string> = {}) =>
    request(`http://127.0.0.1:${port}${path}`, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...headers } })
      .then(async (r) => ({ status: r.statusCode, headers: r.headers, body: await r.body.text() }));

  it('needs the token like every request, then streams a log of any size into a crawl', async () => {
    const core = await freshCore();
    const { server } = await startTestServer({ dispatcher: core });
    const path = '/import?name=big.log&tz=UTC';
    expect((await post(server.port, path, LOG)).status).toBe(401);
    expect((await post(server.port, `${path}&token=wrong`, LOG)).status).toBe(401);
    expect((await post(server.port, `${path}&token=${server.token}`, LOG, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(server.port, `${path}&token=${server.token}`, LOG, { host: 'evil.example:80' })).status).toBe(421);
    expect(ok<CrawlInfo[]>(await core.dispatch('crawls.list', {}))).toEqual([]);

    // Copies of the log up to 1.5 MiB (more than a WebSocket message may carry), with the cookie the page holds.
    let big = '';
    while (Buffer.byteLength(big) < 1.5 * 1024 * 1024) big += `${LOG}\n`;
    const sent = big.split('\n').filter((l) => l.includes('[scrapy.extensions.throttle]')).length;
    const r = await post(server.port, path, big, { cookie: `slotscope_token=${server.token}` });
    expect(r.status, r.body).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const report = JSON.parse(r.body) as ImportReport;
    expect(report.debugLines).toBe(sent);
    expect(report.name).toBe('Scrapy log big.log');
    const { rows } = ok<{ rows: SlotTuple[] }>(await core.dispatch('slots.snapshot', { id: report.crawlId! }));
    expect(rows.reduce((n, row) => n + (row[col('requests')] as number), 0)).toBe(sent);
  });

  it('answers a bad query or an unreadable log with 400 in words, and other methods with 405', async () => {
    const core = await freshCore();
    const { server } = await startTestServer({ dispatcher: core });
    const t = `token=${encodeURIComponent(server.token)}`;
    const noName = await post(server.port, `/import?${t}`, LOG);
    expect([noName.status, noName.body]).toEqual([400, "name: missing (the log file's name, 1 to 255 characters)\n"]);
    const badTz = await post(server.port, `/import?${t}&name=a.log&tz=later`, LOG);
    expect(badTz.status).toBe(400);
    expect(badTz.body).toMatch(/^tz: "later" is not allowed \(local, UTC, or an offset/);
    const extra = await post(server.port, `/import?${t}&name=a.log&crawlId=3`, LOG);
    expect(extra.body).toMatch(/^crawlId: "3" is not allowed \(not a parameter of \/import; known: token, name, tz\)/);
    const empty = await post(server.port, `/import?${t}&name=empty.log`, 'nothing to see here\n');
    expect(empty.status).toBe(400);
    expect(empty.body).toMatch(/^no AUTOTHROTTLE_DEBUG line in empty\.log \(1 line read/);
    const get = await httpGet(server.port, `/import?${t}&name=a.log`);
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(ok<CrawlInfo[]>(await core.dispatch('crawls.list', {}))).toEqual([]);
  });
});
