// What the browser-host tests share: a small real Dispatcher standing in for the core (a counter
// with an event source), a real server per test, and real HTTP and WebSocket clients.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as HttpClient } from 'undici';
import { onTestFinished } from 'vitest';
import WebSocket from 'ws';
import {
  SLOT_COLUMNS, type AppEvents, type CrawlInfo, type Dispatcher, type EventName, type Reply, type SlotTuple,
} from '../../../shared/contract';
import { startServer, type RunningServer, type ServerOptions } from '../../../electron/server/ws-server';

// ---------------------------------------------------------------------------------------------
// Clean-up, last opened first, when the current test ends.

const stack: (() => unknown)[] = [];

export function defer(fn: () => unknown): void {
  if (stack.length === 0) {
    onTestFinished(async () => {
      while (stack.length > 0) {
        try {
          await stack.pop()!();
        } catch {
          /* best effort */
        }
      }
    });
  }
  stack.push(fn);
}

// ---------------------------------------------------------------------------------------------
// The stand-in core.

type Listener = <E extends EventName>(event: E, payload: AppEvents[E]) => void;

const ok = (result: unknown): Reply => ({ ok: true, result });
const invalid = (message: string, field: string): Reply => ({ ok: false, error: { code: 'invalid', message, field } });

/** A slot row with only its key and request count set. */
/** The host clock CounterDispatcher's 'slots.snapshot' answers with. */
export const SNAPSHOT_NOW = 1_700_000_000_000;

export function slotRow(key: string, requests: number): SlotTuple {
  return [key, 'active', 0, 1, null, 0, 'none' as SlotTuple[6], null, null, null, requests, 0, 0, 0, 0, 0, 0, 0, 0, 0, null, null];
}

/**
 * Implements the contract for a handful of methods, for real: 'crawls.create' and 'crawls.list'
 * keep a list, 'crawls.stats' validates `id`, 'crawls.stop' throws (a broken core),
 * 'crawls.pause' answers after `params.ms`, 'slots.snapshot' returns `slots`. Every call is
 * recorded; `emit` pushes an event to every subscriber.
 */
export class CounterDispatcher implements Dispatcher {
  readonly calls: { method: string; params: unknown }[] = [];
  readonly listeners = new Set<Listener>();
  readonly crawls: CrawlInfo[] = [];
  /** Rows 'slots.snapshot' answers with. */
  slots: SlotTuple[] = [];

  async dispatch(method: string, params: unknown): Promise<Reply> {
    this.calls.push({ method, params });
    const p = (typeof params === 'object' && params !== null ? params : {}) as Record<string, unknown>;
    switch (method) {
      case 'crawls.list':
        return ok(this.crawls);
      case 'crawls.create': {
        const id = this.crawls.length + 1;
        const crawl: CrawlInfo = {
          id, name: String((p.config as { name?: unknown } | undefined)?.name ?? `crawl ${id}`), status: 'created', createdAt: Date.now(),
          startedAt: null, finishedAt: null, requests: 0, responses: 0, failures: 0, slots: 0,
        } as CrawlInfo;
        this.crawls.unshift(crawl);
        this.emit('crawls.changed', { crawls: [...this.crawls] });
        return ok({ crawl, seedErrors: [] });
      }
      case 'crawls.stats': {
        if (typeof p.id !== 'number') return invalid('id must be a number', 'id');
        if (!this.crawls.some((c) => c.id === p.id)) return { ok: false, error: { code: 'not-found', message: `crawl ${p.id} does not exist`, field: 'id' } };
        return ok({ requests: 0 });
      }
      case 'crawls.stop':
        throw new Error('boom: the stand-in core broke');
      case 'crawls.pause':
        await new Promise((r) => setTimeout(r, typeof p.ms === 'number' ? p.ms : 0));
        return ok({ paused: true });
      case 'slots.snapshot':
        return ok({ columns: SLOT_COLUMNS, rows: this.slots, now: SNAPSHOT_NOW });
      default:
        return { ok: false, error: { code: 'unknown-method', message: `not implemented: ${method}` } };
    }
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  emit<E extends EventName>(event: E, payload: AppEvents[E]): void {
    for (const l of this.listeners) l(event, payload);
  }
}

// ---------------------------------------------------------------------------------------------
// Servers and clients.

export interface TestServer {
  readonly server: RunningServer;
  readonly dispatcher: CounterDispatcher;
  readonly logs: string[];
  readonly origin: string;
  readonly wsUrl: string;
}

/** A static folder with an index page, a script, a stylesheet and an image, and a secret beside it. */
export function staticFixture(): { dir: string; secret: string } {
  const base = mkdtempSync(join(tmpdir(), 'slotscope-static-'));
  defer(() => rmSync(base, { recursive: true, force: true }));
  const dir = join(base, 'renderer');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Slotscope</title><script type="module" src="/assets/app.js"></script>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log("app");');
  writeFileSync(join(dir, 'assets', 'app.css'), 'body { margin: 0 }');
  writeFileSync(join(dir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dir, '.env'), 'HIDDEN=1');
  const secret = join(base, 'secret.txt');
  writeFileSync(secret, 'TOP-SECRET');
  return { dir, secret };
}

export async function startTestServer(o: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dispatcher = (o.dispatcher as CounterDispatcher | undefined) ?? new CounterDispatcher();
  const logs: string[] = [];
  const server = await startServer({ log: (l) => logs.push(l), ...o, dispatcher });
  defer(() => server.close());
  const origin = `http://127.0.0.1:${server.port}`;
  return { server, dispatcher, logs, origin, wsUrl: `ws://127.0.0.1:${server.port}/ws?token=${server.token}` };
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A raw GET: the path is sent exactly as given (no URL normalisation), headers as given. */
export async function httpGet(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<HttpAnswer> {
  const client = new HttpClient(`http://127.0.0.1:${port}`);
  try {
    const r = await client.request({ path, method: method as 'GET', headers });
    return { status: r.statusCode, headers: r.headers, body: await r.body.text() };
  } finally {
    await client.close();
  }
}

/** A WebSocket client that records everything it receives. */
export interface TestSocket {
  readonly ws: WebSocket;
  readonly messages: Record<string, unknown>[];
  /** Resolves with the close code. */
  readonly closed: Promise<number>;
  /** Sends a request frame and resolves with the reply carrying its id. */
  request(method: string, params?: unknown, id?: number | string): Promise<Record<string, unknown>>;
  /** Sends a raw frame. */
  sendRaw(data: string | Buffer): void;
  /** Resolves with the first message (already received or coming) that matches. */
  next(match: (m: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The payloads of the events received so far with this name. */
  events(name: string): unknown[];
}

let autoId = 1000;

export function openSocket(url: string, options: WebSocket.ClientOptions = {}): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options);
    const messages: Record<string, unknown>[] = [];
    const waiters: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] = [];
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('error', () => {
      /* seen through 'close' or 'unexpected-response' */
    });
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.match(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    const next: TestSocket['next'] = (match, timeoutMs = 5000) => {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((res, rej) => {
        const t = setTimeout(() => rej(new Error(`no matching message within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ match, resolve: (m) => (clearTimeout(t), res(m)) });
      });
    };
    const socket: TestSocket = {
      ws,
      messages,
      closed,
      sendRaw: (data) => ws.send(data),
      request(method, params, id = autoId++) {
        ws.send(JSON.stringify({ id, method, params }));
        return next((m) => m.id === id && 'ok' in m);
      },
      next,
      events: (name) => messages.filter((m) => m.event === name).map((m) => m.payload),
    };
    ws.once('open', () => {
      defer(() => ws.terminate());
      resolve(socket);
    });
    ws.once('unexpected-response', (_req, res) => {
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      res.resume();
      ws.terminate();
    });
    ws.once('close', () => reject(new Error('closed before open')));
  });
}

/** The HTTP status an upgrade attempt was refused with (or 101 when it was accepted). */
export async function upgradeStatus(url: string, options: WebSocket.ClientOptions = {}): Promise<number> {
  try {
    const s = await openSocket(url, options);
    s.ws.close();
    return 101;
  } catch (e) {
    return (e as { status?: number }).status ?? -1;
  }
}

/** Polls until `check` is true. */
export async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
