// The ingest route of the Scrapy bridge on its own (no Python needed): the same token, Host and
// Origin checks as every other request, a batch validated whole (a bad one refused with its reason,
// nothing of it applied), a retried batch applied once, and a command's round trip to the journal.

import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openHistoryReader } from '../../electron/core/store/queries';
import { openHistoryWriter } from '../../electron/core/store/history-writer';
import { RESPONSE_FIELDS, SLOT_FIELDS } from '../../electron/core/scrapy/ingest-wire';
import { ScrapyCrawls, SILENCE_MS } from '../../electron/core/scrapy/scrapy-crawls';
import type { AppEvents, EventName } from '../../shared/contract';
import { defer, ensureBuilt, freshDir, sleep, waitFor } from './helpers';
import { startHost, type Host } from './scrapy-helpers';

beforeAll(ensureBuilt, 180_000);

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

function post(url: string, body: string, headers: Record<string, string> = {}, method = 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = { text };
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const T = 1_795_341_600_000;

/** A response tuple in RESPONSE_FIELDS order. */
function response(path: string, at: number, overrides: Partial<Record<(typeof RESPONSE_FIELDS)[number], unknown>> = {}): unknown[] {
  const r: Record<string, unknown> = {
    t: at, startedAt: at - 20, waitMs: 1, slot: 'example.com', url: `http://example.com${path}`, method: 'GET', status: 200, latency: 0.015,
    downloadTime: 0.001, bytes: 1234, inFlight: 1, delayBefore: 0.5, delayAfter: 0.2575, delayCause: 'autothrottle', depth: 1,
    contentType: 'text/html', attempt: 0, errorKind: null, errorMessage: null, debug: true, ...overrides,
  };
  return RESPONSE_FIELDS.map((f) => r[f]);
}

const slotRow = (paused: boolean) => SLOT_FIELDS.map((f) => ({
  key: 'example.com', transferring: 1, queued: 2, active: 3, delay: 0.2575, concurrency: 8, randomize: true, paused, pinDelay: null,
  pinConcurrency: null, nextStartAt: T + 500,
})[f]);

const OPEN = {
  spider: 'quotes', scrapyVersion: '2.8.0', bridgeVersion: '0.1.0', python: '3.11.2', pid: 4242, startedAt: T - 1000,
  startUrls: ['http://example.com/'], autothrottle: true,
  settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, DOWNLOAD_DELAY: 0.2, CONCURRENT_REQUESTS_PER_DOMAIN: 8, SOME_SCRAPY_ONLY: 1 },
  overridden: { AUTOTHROTTLE_ENABLED: true },
};

const SESSION = 'abcdef0123456789';

function ingestUrl(host: Host): string {
  const u = new URL(host.server.url);
  return `${u.origin}/ingest/scrapy?token=${encodeURIComponent(host.server.token)}`;
}

describe('POST /ingest/scrapy', () => {
  it('is behind the token, Host and Origin checks; takes only POSTed JSON', async () => {
    const host = await startHost();
    const u = new URL(host.server.url);
    const body = JSON.stringify({ v: 1, session: SESSION, seq: 1, open: OPEN });
    expect((await post(`${u.origin}/ingest/scrapy`, body)).status).toBe(401);
    expect((await post(`${u.origin}/ingest/scrapy?token=wrong`, body)).status).toBe(401);
    expect((await post(ingestUrl(host), body, { Host: `evil.example:${u.port}` })).status).toBe(421);
    expect((await post(ingestUrl(host), body, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(ingestUrl(host), '', {}, 'GET')).status).toBe(405);
    expect((await post(ingestUrl(host), body, { 'Content-Type': 'text/plain' })).status).toBe(415);
    const notJson = await post(ingestUrl(host), '{"v": 1,');
    expect(notJson.status).toBe(400);
    expect(String(notJson.json.error)).toContain('not JSON');
    expect(await host.call('crawls.list', {})).toEqual([]);
  });

  it('refuses a bad batch whole, naming the field; applies a good one once, even when it comes again', async () => {
    const host = await startHost();
    const bad = await post(ingestUrl(host), JSON.stringify({
      v: 1, session: SESSION, seq: 1, open: OPEN,
      responses: [response('/a', T), response('/b', T + 10), response('/c', T + 20, { status: 'abc' })],
    }));
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('batch refused, nothing of it applied: responses[2][6] (status): "abc" is not allowed (a whole number from 100 to 999)');
    expect(await host.call('crawls.list', {})).toEqual([]);
    const version = await post(ingestUrl(host), JSON.stringify({ v: 2, session: SESSION, seq: 1, open: OPEN }));
    expect(version.status).toBe(400);
    expect(String(version.json.error)).toContain('v: 2 is not allowed');

    const unknown = await post(ingestUrl(host), JSON.stringify({ v: 1, session: SESSION, seq: 1, responses: [] }));
    expect(unknown.status).toBe(409);

    const good = JSON.stringify({
      v: 1, session: SESSION, seq: 1, open: OPEN, responses: [response('/a', T), response('/b', T + 10)], slots: [slotRow(false)],
      state: { paused: false, held: false, inFlight: 1, scheduled: 5 },
    });
    const ok = await post(ingestUrl(host), good);
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json).toMatchObject({ ok: true, commands: [] });
    const id = ok.json.crawlId as number;
    const again = await post(ingestUrl(host), good);
    expect(again.json).toMatchObject({ ok: true, crawlId: id, duplicate: true });

    const list = await host.call('crawls.list', {});
    expect(list).toEqual([expect.objectContaining({ id, name: 'quotes', source: 'Scrapy', status: 'running', responses: 2 })]);
    const snap = await host.call('slots.snapshot', { id });
    expect(snap.rows).toEqual([['example.com', 'active', 1, 8, 1, 0.2575, 'autothrottle', T + 500, 0.015, 0.015, 3, 2, 0, 0, 0, 0, 0, 0, 2, 2468, null, null]]);
    const events = await host.call('log.events', { id, limit: 100 });
    expect(events.filter((e) => e.kind === 'debug').map((e) => e.text)).toEqual([
      'slot: example.com | conc: 1 | delay:  257 ms (-242) | latency:   15 ms | size:  1234 bytes',
      'slot: example.com | conc: 1 | delay:  257 ms (-242) | latency:   15 ms | size:  1234 bytes',
    ]);
    expect(events.find((e) => e.code === 'scrapy-setting')?.text).toBe('SOME_SCRAPY_ONLY not taken over: Slotscope has no such setting');
    const reader = openHistoryReader(host.db);
    defer(() => reader.close());
    expect(reader.responses(id).map((r) => r.url)).toEqual(['http://example.com/a', 'http://example.com/b']);
  });

  it('carries a command to the spider in its next answer and journals the change once, when the spider acknowledges it', async () => {
    const host = await startHost();
    let seq = 0;
    const send = (extra: Record<string, unknown> = {}) =>
      post(ingestUrl(host), JSON.stringify({ v: 1, session: SESSION, seq: ++seq, ...(seq === 1 ? { open: OPEN } : {}), ...extra }));
    const first = await send({ slots: [slotRow(false)] });
    const id = first.json.crawlId as number;
    const pausing = host.call('crawls.pause', { id });
    await sleep(50);
    const next = await send();
    const commands = next.json.commands as { id: string; op: string }[];
    expect(commands).toEqual([{ id: expect.any(String) as string, op: 'pause' }]);
    // The command is repeated until acknowledged.
    expect(((await send()).json.commands as unknown[]).length).toBe(1);
    const ack = { id: commands[0].id, ok: true, at: T + 2000, changes: [[null, 'paused', false, true]] };
    await send({ acks: [ack], state: { paused: true, held: true, inFlight: 0, scheduled: 5 } });
    expect((await pausing).status).toBe('paused');
    await send({ acks: [ack] });
    expect(((await send()).json.commands as unknown[]).length).toBe(0);
    expect(await host.call('log.changes', { id })).toEqual([{ t: T + 2000, slot: null, setting: 'paused', source: 'user', oldValue: false, newValue: true }]);

    // Refused by the spider: said in words, nothing journalled.
    const pinning = host.call('slots.pinDelay', { id, slot: 'example.com', seconds: 2 });
    pinning.catch(() => undefined);
    await sleep(50);
    const pin = ((await send()).json.commands as { id: string; op: string }[])[0];
    expect(pin).toMatchObject({ op: 'pin-delay', slot: 'example.com', seconds: 2 });
    await send({ acks: [{ id: pin.id, ok: false, at: T + 3000, message: 'no such slot', changes: [] }] });
    await expect(pinning).rejects.toThrow('Scrapy refused it: no such slot');
    expect(await host.call('log.changes', { id })).toHaveLength(1);

    // What Scrapy has not got is refused by Slotscope without asking the spider.
    await expect(host.call('slots.resetBackoff', { id, slot: 'example.com' })).rejects.toThrow('Scrapy has no backoff');
    await expect(host.call('crawls.duplicate', { id })).rejects.toThrow('Slotscope cannot run a Scrapy spider');

    // The spider closes: the crawl ends with Scrapy's reason.
    await send({ close: { t: T + 5000, reason: 'finished', stats: { response_received_count: 0 }, unsent: 3 } });
    await sleep(100);
    const done = (await host.call('crawls.list', {})).find((c) => c.id === id)!;
    expect(done).toMatchObject({ status: 'finished', finishedAt: T + 5000, source: 'Scrapy' });
    const closeEvent = (await host.call('log.events', { id, limit: 100 })).find((e) => e.code === 'scrapy-close');
    expect(closeEvent).toMatchObject({ kind: 'warning' });
    expect(closeEvent?.text).toContain('3 records could not be sent');
    await expect(host.call('crawls.resume', { id })).rejects.toThrow('run `scrapy crawl quotes` again');
  });
  it('shows a spider that went silent as interrupted, and lets it be deleted; if it reports again it opens a new crawl', async () => {
    const writer = await openHistoryWriter(join(freshDir('slotscope-scrapy-silent-'), 'history.sqlite'));
    defer(() => writer.close());
    let clock = T;
    const statuses: string[] = [];
    const emit = <E extends EventName>(event: E, payload: AppEvents[E]) => {
      if (event === 'crawl.status') statuses.push((payload as AppEvents['crawl.status']).stats.status);
    };
    const crawls = new ScrapyCrawls({ writer, emit, listChanged: () => undefined, stored: () => undefined, now: () => clock });
    defer(() => crawls.close());
    const opened = await crawls.ingest({ v: 1, session: SESSION, seq: 1, open: OPEN, responses: [response('/a', T)] });
    const id = (opened.body as { crawlId: number }).crawlId;
    expect(crawls.info(id)?.status).toBe('running');
    clock += SILENCE_MS + 1000;
    await waitFor(() => crawls.info(id)?.status === 'interrupted', 'the silent crawl to be interrupted', 5000);
    expect(statuses).toContain('interrupted');
    await expect(crawls.route('crawls.pause', { id })!).rejects.toThrow('the spider has not reported for 16 s');
    expect(crawls.route('crawls.delete', { id })).toBeUndefined();
    expect(crawls.info(id)).toBeUndefined();
    expect((await crawls.ingest({ v: 1, session: SESSION, seq: 2, responses: [] })).status).toBe(409);
    const again = await crawls.ingest({ v: 1, session: SESSION, seq: 2, open: OPEN });
    expect((again.body as { crawlId: number }).crawlId).not.toBe(id);
  });
});
