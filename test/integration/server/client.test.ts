// The renderer's reconnecting client against a real server: typed invoke, errors as InvokeError,
// events to listeners, and a server restart on the same port survived with listeners intact.

import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, InvokeError, type ConnectionState } from '../../../renderer/src/transport/ws-client';
import type { AppEvents } from '../../../shared/contract';
import { startServer } from '../../../electron/server/ws-server';
import { CounterDispatcher, defer, startTestServer, until } from './fixtures';

const crawlsChanged = (n: number): AppEvents['crawls.changed'] => ({ crawls: [{ id: n } as AppEvents['crawls.changed']['crawls'][number]] });

describe('client', () => {
  it('invokes, rejects with InvokeError on ok:false, and delivers events to its listeners', async () => {
    const { wsUrl, dispatcher } = await startTestServer();
    const listenerErrors: unknown[] = [];
    const client = connect(wsUrl, { WebSocketImpl: WebSocket, onListenerError: (e) => listenerErrors.push(e) });
    defer(() => client.close());
    const states: ConnectionState[] = [];
    client.onState((s) => states.push(s));

    const { crawl } = await client.invoke('crawls.create', { config: { name: 'c1' } });
    expect(crawl.name).toBe('c1');
    expect(states).toEqual(['connecting', 'open']);
    expect((await client.invoke('crawls.list', {})).map((c) => c.name)).toEqual(['c1']);

    const err = await client.invoke('crawls.stats', { id: 'x' as unknown as number }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvokeError);
    expect(err).toMatchObject({ code: 'invalid', field: 'id', message: 'id must be a number', transport: false, appError: { code: 'invalid' } });
    expect(await client.invoke('crawls.stop', { id: 1 }).catch((e: InvokeError) => e.code)).toBe('internal');
    expect(await client.invoke('nope' as 'crawls.list', {}).catch((e: InvokeError) => e.code)).toBe('unknown-method');

    const seen: unknown[] = [];
    const off = client.subscribe('crawls.changed', (p) => seen.push(p));
    const thrower = client.subscribe('crawls.changed', () => {
      throw new Error('a broken listener');
    });
    dispatcher.emit('crawls.changed', crawlsChanged(1));
    await until(() => seen.length === 1, 5000, 'event');
    off();
    thrower();
    dispatcher.emit('crawls.changed', crawlsChanged(2));
    expect((await client.invoke('crawls.list', {})).length).toBe(1);
    expect(seen).toEqual([crawlsChanged(1)]);
    expect(listenerErrors).toMatchObject([{ message: 'a broken listener' }]);

    client.close();
    expect(client.state).toBe('closed');
    await expect(client.invoke('crawls.list', {})).rejects.toMatchObject({ transport: true });
  });

  it('defers the events it is told to until its scheduler runs, one message a run, and delivers them before any later message', async () => {
    const { wsUrl, dispatcher } = await startTestServer();
    const runs: (() => void)[] = [];
    const client = connect(wsUrl, { WebSocketImpl: WebSocket, deferEvents: { events: ['slots.update'], schedule: (run) => runs.push(run) } });
    defer(() => client.close());
    const seen: string[] = [];
    client.subscribe('slots.update', (p) => seen.push(`update ${p.rows.length}`));
    client.subscribe('crawls.changed', (p) => seen.push(`changed ${p.crawls[0].id}`));
    await client.invoke('crawls.list', {});

    dispatcher.emit('slots.update', { crawlId: 1, rows: [], now: 1 });
    dispatcher.emit('slots.update', { crawlId: 1, rows: [['a.test'] as never], now: 2 });
    await until(() => runs.length === 1, 5000, 'a scheduled run');
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]); // received, held for the scheduler (one run asked for at a time)
    runs.shift()!();
    expect(seen).toEqual(['update 0']);
    expect(runs).toHaveLength(1); // the second is left for the next run
    // A message of another kind first delivers what is held, so the order is the server's.
    dispatcher.emit('crawls.changed', crawlsChanged(7));
    await until(() => seen.length === 3, 5000, 'the event');
    expect(seen).toEqual(['update 0', 'update 1', 'changed 7']);
    runs.shift()!(); // a stale run finds nothing to deliver
    expect(seen).toHaveLength(3);
  });

  it('reconnects after the server restarts on the same port; listeners keep receiving; queued invokes go through', async () => {
    const first = new CounterDispatcher();
    const log = () => {};
    let server = await startServer({ dispatcher: first, log });
    const { port, token } = server;
    defer(() => server.close());

    const client = connect(`ws://127.0.0.1:${port}/ws?token=${token}`, { WebSocketImpl: WebSocket });
    defer(() => client.close());
    const states: ConnectionState[] = [];
    client.onState((s) => states.push(s));
    const seen: number[] = [];
    client.subscribe('crawls.changed', (p) => seen.push(p.crawls[0].id));

    expect(await client.invoke('crawls.list', {})).toEqual([]);
    first.emit('crawls.changed', crawlsChanged(1));
    await until(() => seen.length === 1, 5000, 'first event');

    // A request in flight when the server goes away fails as a transport error.
    const inFlight = client.invoke('crawls.pause', { id: 1, ms: 2000 } as { id: number }).catch((e: InvokeError) => e);
    await until(() => first.calls.some((c) => c.method === 'crawls.pause'), 5000, 'pause sent');
    await server.close();
    expect(await inFlight).toMatchObject({ transport: true, code: 'internal' });
    await until(() => client.state === 'reconnecting', 5000, 'reconnecting');

    // Invokes made while the server is down wait for it.
    const queued = client.invoke('crawls.create', { config: { name: 'queued' } });
    await new Promise((r) => setTimeout(r, 400));

    const second = new CounterDispatcher();
    server = await startServer({ dispatcher: second, log, port, token });
    const created = await queued;
    expect(created.crawl.name).toBe('queued');
    expect(client.state).toBe('open');
    expect(second.listeners.size).toBe(1);

    second.emit('crawls.changed', crawlsChanged(2));
    await until(() => seen.length >= 3, 5000, 'events after the restart');
    // 'queued' created crawl 1 on the second server (its own crawls.changed), then the emitted one.
    expect(seen).toEqual([1, 1, 2]);
    expect(states.slice(0, 2)).toEqual(['connecting', 'open']);
    expect(states).toContain('reconnecting');
    expect(states.at(-1)).toBe('open');
  });

  it('fails queued invokes after the queue timeout when no server answers', async () => {
    const { server } = await startTestServer();
    const port = server.port;
    await server.close();
    const client = connect(`ws://127.0.0.1:${port}/ws?token=x`, { WebSocketImpl: WebSocket, queueTimeoutMs: 300 });
    defer(() => client.close());
    const t0 = Date.now();
    const err = await client.invoke('crawls.list', {}).catch((e: InvokeError) => e);
    expect(err).toMatchObject({ transport: true });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(client.state).toBe('reconnecting');
  });

  it('needs a WebSocket implementation in Node 20', () => {
    const g = globalThis as { WebSocket?: unknown };
    if (g.WebSocket) return; // Node 22+ has one
    expect(() => connect('ws://127.0.0.1:1/ws')).toThrow(/WebSocketImpl/);
  });
});
