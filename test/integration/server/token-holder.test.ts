// Issue 15, "A host that cannot be made to misbehave": what a token holder may do over the
// WebSocket is what the README says. history.export writes only inside the data folder's
// exports/; THROTTLING_MANAGER set from the console names only a module inside its plugins/;
// per-slot actions on a slot that does not exist are refused; a deeply nested request is refused.

// Loopback addresses of this file: 127.0.93.50–59.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../../electron/core/create-core';
import { defer, openSocket, startTestServer, until, type TestSocket } from './fixtures';

const DEBUG_LINE = '2026-11-22 10:00:00 [scrapy.extensions.throttle] INFO: slot: a.test | conc: 1 | delay: 1500 ms (-500) | latency:  120 ms | size:  2000 bytes\n';

interface Host {
  readonly core: Core;
  readonly data: string;
  /** A folder beside the data folder, outside it. */
  readonly outside: string;
  readonly ws: TestSocket;
}

async function host(): Promise<Host> {
  const base = mkdtempSync(join(tmpdir(), 'slotscope-token-'));
  defer(() => rmSync(base, { recursive: true, force: true }));
  const data = join(base, 'data');
  const outside = join(base, 'outside');
  mkdirSync(data);
  mkdirSync(outside);
  const core = await createCore({ db: join(data, 'history.sqlite') });
  defer(() => core.close());
  const { wsUrl, origin } = await startTestServer({ dispatcher: core });
  return { core, data, outside, ws: await openSocket(wsUrl, { origin }) };
}

async function importedCrawl(ws: TestSocket): Promise<number> {
  const r = await ws.request('history.importScrapyLog', { name: 'tiny.log', text: DEBUG_LINE, tz: 'UTC' });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return (r.result as { crawlId: number }).crawlId;
}

describe('history.export from a token holder', () => {
  it('writes inside the data folder\'s exports/ and nowhere else', async () => {
    const { data, outside, ws } = await host();
    const crawlId = await importedCrawl(ws);
    const exports = join(data, 'exports');
    mkdirSync(exports, { recursive: true });
    symlinkSync(outside, join(exports, 'link'));

    for (const path of [
      join(outside, 'evil.jsonl'),
      join(data, 'evil.jsonl'),
      join(exports, '..', 'evil.jsonl'),
      join(exports, 'link', 'evil.jsonl'),
      join(tmpdir(), 'slotscope-evil.jsonl'),
    ]) {
      const r = await ws.request('history.export', { crawlId, format: 'jsonl', path });
      expect(r, path).toMatchObject({ ok: false, error: { code: 'invalid', field: 'path' } });
      expect((r.error as { message: string }).message).toContain('exports');
    }
    expect(existsSync(join(outside, 'evil.jsonl'))).toBe(false);
    expect(existsSync(join(data, 'evil.jsonl'))).toBe(false);
    expect(existsSync(join(tmpdir(), 'slotscope-evil.jsonl'))).toBe(false);

    // Inside exports/: written. Without a path: a new file there.
    const mine = join(exports, 'mine.jsonl');
    expect(await ws.request('history.export', { crawlId, format: 'jsonl', path: mine })).toMatchObject({ ok: true, result: { path: mine, rows: 1 } });
    expect(readFileSync(mine, 'utf8').trim().split('\n')).toHaveLength(1);
    const auto = await ws.request('history.export', { crawlId, format: 'csv' });
    expect(auto).toMatchObject({ ok: true });
    expect((auto.result as { path: string }).path.startsWith(exports)).toBe(true);
  });
});

describe('THROTTLING_MANAGER set from the console', () => {
  /** A plug-in that, once imported, leaves a file behind: proof that it ran. */
  function plugin(file: string, marker: string): void {
    writeFileSync(file, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport function getScopes() { return ['plugged']; }\n`);
  }

  it('names only a module inside the data folder\'s plugins/', async () => {
    const { data, outside, ws } = await host();
    const marker = join(outside, 'ran.txt');
    const evil = join(outside, 'evil.mjs');
    plugin(evil, marker);
    const plugins = join(data, 'plugins');
    mkdirSync(plugins);
    symlinkSync(evil, join(plugins, 'link.mjs'));
    const config = (manager: string) => ({ seeds: ['http://127.0.93.50:9/'], follow: { scope: 'none' }, settings: { THROTTLING_MANAGER: manager } });

    for (const manager of [evil, '../outside/evil.mjs', join(plugins, '..', '..', 'outside', 'evil.mjs'), 'link.mjs', join(plugins, 'link.mjs'), 'missing.mjs']) {
      const created = await ws.request('crawls.create', { config: config(manager) });
      expect(created, manager).toMatchObject({ ok: false, error: { code: 'invalid', field: 'settings.THROTTLING_MANAGER' } });
      expect((created.error as { message: string }).message).toContain(plugins);
    }

    // A crawl created without one cannot be given one from outside either.
    const plain = await ws.request('crawls.create', { config: { seeds: ['http://127.0.93.50:9/'], follow: { scope: 'none' } } });
    const id = (plain.result as { crawl: { id: number } }).crawl.id;
    const updated = await ws.request('settings.update', { id, changes: { THROTTLING_MANAGER: evil } });
    expect(updated).toMatchObject({ ok: false, error: { code: 'invalid', field: 'THROTTLING_MANAGER' } });
    expect(await ws.request('crawls.start', { id })).toMatchObject({ ok: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);

    // Inside plugins/: accepted (by name or by full path) and loaded when the crawl starts.
    const good = join(plugins, 'good.mjs');
    plugin(good, join(data, 'good-ran.txt'));
    const byName = await ws.request('crawls.create', { config: config('good.mjs') });
    expect(byName, JSON.stringify(byName)).toMatchObject({ ok: true });
    const goodId = (byName.result as { crawl: { id: number } }).crawl.id;
    expect(await ws.request('settings.get', { id: goodId })).toMatchObject({ ok: true, result: { THROTTLING_MANAGER: realpathSync(good) } });
    expect(await ws.request('crawls.create', { config: config(good) })).toMatchObject({ ok: true });
    expect(await ws.request('settings.update', { id, changes: { THROTTLING_MANAGER: '' } })).toMatchObject({ ok: true });
    expect(await ws.request('crawls.start', { id: goodId })).toMatchObject({ ok: true });
    await until(() => existsSync(join(data, 'good-ran.txt')), 5000, 'the plug-in inside plugins/ to load');
  });
});

describe('per-slot actions', () => {
  it('on a slot that does not exist: not-found, and no slot is made up', async () => {
    const { ws } = await host();
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>ok</html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.93.51', r));
    defer(() => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }));
    const port = (server.address() as { port: number }).port;
    const created = await ws.request('crawls.create', {
      config: {
        seeds: [`http://s.test:${port}/a`, `http://s.test:${port}/b`, `http://s.test:${port}/c`], follow: { scope: 'none' },
        resolve: { 's.test': '127.0.93.51' }, settings: { ROBOTSTXT_OBEY: false, DOWNLOAD_DELAY: 5, RANDOMIZE_DOWNLOAD_DELAY: false },
      },
    });
    const id = (created.result as { crawl: { id: number } }).crawl.id;
    expect(await ws.request('crawls.start', { id })).toMatchObject({ ok: true });
    // The slot that exists can be steered.
    const rowsOf = async () => ((await ws.request('slots.snapshot', { id })).result as { rows: unknown[][] }).rows.map((r) => r[0]);
    for (let i = 0; i < 100 && !(await rowsOf()).includes('s.test'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await ws.request('slots.pause', { id, slot: 's.test' })).toMatchObject({ ok: true });

    const actions: [string, Record<string, unknown>][] = [
      ['slots.pause', {}], ['slots.resume', {}], ['slots.pinDelay', { seconds: 1 }], ['slots.pinConcurrency', { value: 2 }],
      ['slots.clearPins', {}], ['slots.resetBackoff', {}],
    ];
    for (const [method, extra] of actions) {
      for (const slot of ['nope.test', '__proto__', 'x'.repeat(2000)]) {
        const r = await ws.request(method, { id, slot, ...extra });
        expect(r, `${method} ${slot.slice(0, 20)}`).toMatchObject({ ok: false, error: { code: 'not-found', field: 'slot' } });
      }
    }
    expect((await rowsOf()).sort()).toEqual(['s.test']);
    expect(await ws.request('crawls.stop', { id })).toMatchObject({ ok: true });
  });
});

describe('a request nested 200,000 levels deep', () => {
  it('is refused as invalid, not an internal error', async () => {
    const { ws } = await host();
    const plain = await ws.request('crawls.create', { config: { seeds: ['http://127.0.93.52:9/'], follow: { scope: 'none' } } });
    const id = (plain.result as { crawl: { id: number } }).crawl.id;
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    for (const [method, params] of [
      ['settings.update', { id, changes: { THROTTLING_SCOPES: { api: { backoff: { http_codes: deep } } } } }],
      ['crawls.create', { config: { seeds: ['http://127.0.93.52:9/'], extra: deep } }],
      ['history.whatIf', { crawlId: id, settings: { DOWNLOAD_DELAY: deep } }],
    ] as const) {
      // Sent as the text JSON.stringify cannot make: built by hand.
      const text = JSON.stringify({ id: `deep-${method}`, method, params: '__DEEP__' }).replace('"__DEEP__"', paramsText(params));
      ws.sendRaw(text);
      const r = await ws.next((m) => m.id === `deep-${method}`, 10_000);
      expect(r, method).toMatchObject({ ok: false, error: { code: 'invalid' } });
      expect((r.error as { message: string }).message).toMatch(/nested/);
    }
  });
});

/** JSON of `v`, where the array that is 200,000 levels deep is written out by hand. */
function paramsText(v: unknown): string {
  const depthOf = (x: unknown): number => {
    let d = 0;
    while (Array.isArray(x)) {
      d++;
      x = x[0];
    }
    return d;
  };
  if (Array.isArray(v) && depthOf(v) > 1000) return `${'['.repeat(depthOf(v))}${']'.repeat(depthOf(v))}`;
  if (Array.isArray(v)) return `[${v.map(paramsText).join(',')}]`;
  if (typeof v === 'object' && v !== null) return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${paramsText(x)}`).join(',')}}`;
  return JSON.stringify(v);
}
