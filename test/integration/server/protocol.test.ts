// The WebSocket wire protocol against a real server and a stand-in core: replies, errors as data
// for every kind of malformed frame, events to every client, and a slow reader's shedding.

import { describe, expect, it } from 'vitest';
import type { AppEvents } from '../../../shared/contract';
import { CounterDispatcher, openSocket, slotRow, SNAPSHOT_NOW, startTestServer, until } from './fixtures';

const crawlStatus = (crawlId: number): AppEvents['crawl.status'] => ({
  crawlId,
  stats: { status: 'running', requests: 1, responses: 1, failures: 0, byStatus: {}, bytes: 0, inFlight: 0, queued: 0, slots: 1, robotsDisallowed: 0, startedAt: 1, finishedAt: null },
});

describe('requests', () => {
  it('answers requests by id, concurrently, and passes the dispatcher\'s errors through', async () => {
    const { wsUrl, origin } = await startTestServer();
    const c = await openSocket(wsUrl, { origin });
    const created = await c.request('crawls.create', { config: { name: 'first' } }, 'a-string-id');
    expect(created).toMatchObject({ id: 'a-string-id', ok: true, result: { crawl: { id: 1, name: 'first' } } });
    expect(await c.request('crawls.list', {})).toMatchObject({ ok: true, result: [{ id: 1, name: 'first' }] });

    // A slow reply does not hold up a fast one.
    const slow = c.request('crawls.pause', { id: 1, ms: 300 });
    const fast = await c.request('crawls.list', {});
    expect(fast.ok).toBe(true);
    expect(c.messages.indexOf(fast)).toBeLessThan(c.messages.length);
    expect((await slow).ok).toBe(true);
    expect(c.messages.indexOf(fast)).toBeLessThan(c.messages.indexOf(await slow));

    // Params of the wrong type reach the dispatcher; its error comes back as it was.
    expect(await c.request('crawls.stats', { id: 'one' }, 7)).toEqual({
      id: 7, ok: false, error: { code: 'invalid', message: 'id must be a number', field: 'id' },
    });
    expect(await c.request('crawls.stats', { id: 99 })).toMatchObject({ ok: false, error: { code: 'not-found', field: 'id' } });
  });

  it('answers every malformed frame with an error and keeps serving that client and the others', async () => {
    const { wsUrl, origin, dispatcher } = await startTestServer();
    const bystander = await openSocket(wsUrl, { origin });
    const c = await openSocket(wsUrl, { origin });
    const nullIdErrors = () => c.messages.filter((m) => m.id === null && m.ok === false);

    c.sendRaw('{not json');
    await until(() => nullIdErrors().length === 1, 5000, 'bad JSON reply');
    expect(nullIdErrors()[0]).toMatchObject({ id: null, ok: false, error: { code: 'invalid' } });

    for (const raw of ['[1,2]', '"text"', '42', 'null', '{"method":"crawls.list"}', '{"id":{},"method":"crawls.list"}', '{"id":1.5e999}']) c.sendRaw(raw);
    c.sendRaw(Buffer.from('binary'));
    await until(() => nullIdErrors().length === 9, 5000, 'null-id replies');
    expect(nullIdErrors().every((m) => (m.error as { code: string }).code === 'invalid')).toBe(true);

    c.sendRaw('{"id":1,"params":{}}');
    expect(await c.next((m) => m.id === 1)).toMatchObject({ ok: false, error: { code: 'invalid', field: 'method' } });
    c.sendRaw('{"id":2,"method":42}');
    expect(await c.next((m) => m.id === 2)).toMatchObject({ ok: false, error: { code: 'invalid', field: 'method' } });

    const callsBefore = dispatcher.calls.length;
    expect(await c.request('crawls.explode', {}, 3)).toMatchObject({ id: 3, ok: false, error: { code: 'unknown-method' } });
    expect(await c.request('__proto__', {}, 4)).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(await c.request('toString', {}, 5)).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(dispatcher.calls.length).toBe(callsBefore);

    // A dispatcher that throws: `internal`, with nothing else disturbed.
    expect(await c.request('crawls.stop', { id: 1 }, 6)).toMatchObject({ id: 6, ok: false, error: { code: 'internal' } });

    // A method the stand-in does not implement: the dispatcher's own 'unknown-method' comes back.
    expect(await c.request('log.changes', { id: 1 })).toMatchObject({ ok: false, error: { code: 'unknown-method' } });

    expect((await c.request('crawls.list', {})).ok).toBe(true);
    expect((await bystander.request('crawls.list', {})).ok).toBe(true);
    expect(bystander.messages.filter((m) => m.ok === false)).toEqual([]);
  });

  it('closes a connection that sends more than maxPayload with 1009, and the others keep working', async () => {
    const { wsUrl, origin, dispatcher, logs } = await startTestServer();
    const bystander = await openSocket(wsUrl, { origin });
    const big = await openSocket(wsUrl, { origin });
    big.sendRaw(JSON.stringify({ id: 1, method: 'crawls.create', params: { config: { pad: 'x'.repeat(10 * 1024 * 1024) } } }));
    expect(await big.closed).toBe(1009);
    expect(dispatcher.calls.filter((c) => c.method === 'crawls.create')).toEqual([]);
    expect(logs.some((l) => l.includes('size limit'))).toBe(true);

    expect((await bystander.request('crawls.list', {})).ok).toBe(true);
    dispatcher.emit('crawl.status', crawlStatus(3));
    expect(await bystander.next((m) => m.event === 'crawl.status')).toEqual({ event: 'crawl.status', payload: crawlStatus(3) });
    // Its subscription ended with it.
    await until(() => dispatcher.listeners.size === 1, 5000, 'unsubscribe');
  });

  it('honours a smaller maxPayload', async () => {
    const { wsUrl, origin } = await startTestServer({ maxPayload: 1000 });
    const c = await openSocket(wsUrl, { origin });
    expect((await c.request('crawls.list', { pad: 'x'.repeat(500) })).ok).toBe(true);
    c.sendRaw(JSON.stringify({ id: 1, method: 'crawls.list', params: { pad: 'x'.repeat(2000) } }));
    expect(await c.closed).toBe(1009);
  });
});

describe('events', () => {
  it('pushes every event to every client and stops at close', async () => {
    const { wsUrl, origin, dispatcher, server } = await startTestServer();
    const a = await openSocket(wsUrl, { origin });
    const b = await openSocket(wsUrl);
    expect(dispatcher.listeners.size).toBe(2);

    dispatcher.emit('crawl.status', crawlStatus(1));
    dispatcher.emit('slots.update', { crawlId: 1, rows: [slotRow('example.com', 3)], now: 5 });
    await b.request('crawls.create', { config: { name: 'from b' } });
    for (const s of [a, b]) {
      await until(() => s.events('crawls.changed').length === 1, 5000, 'crawls.changed');
      expect(s.events('crawl.status')).toEqual([crawlStatus(1)]);
      expect(s.events('slots.update')).toEqual([{ crawlId: 1, rows: [slotRow('example.com', 3)], now: 5 }]);
      expect(s.events('crawls.changed')).toMatchObject([{ crawls: [{ name: 'from b' }] }]);
    }

    a.ws.close();
    await a.closed;
    await until(() => dispatcher.listeners.size === 1, 5000, 'unsubscribe');
    dispatcher.emit('crawl.status', crawlStatus(2));
    await b.next((m) => m.event === 'crawl.status' && (m.payload as { crawlId: number }).crawlId === 2);

    await server.close();
    expect(dispatcher.listeners.size).toBe(0);
    expect(await b.closed).toBe(1001);
  });

  it('drops slot updates for a client that does not read, never its replies, and heals its table with a snapshot', async () => {
    const dispatcher = new CounterDispatcher();
    dispatcher.slots = [slotRow('a.example', 1000), slotRow('b.example', 2000)];
    const { wsUrl, origin, logs } = await startTestServer({ dispatcher, backpressureBytes: 1024 * 1024 });
    const slow = await openSocket(wsUrl, { origin });
    const fast = await openSocket(wsUrl, { origin });
    const socket = (slow.ws as unknown as { _socket: import('node:net').Socket })._socket;

    // The slow client stops reading, then asks something and floods itself with updates.
    socket.pause();
    slow.ws.send(JSON.stringify({ id: 'mine', method: 'crawls.pause', params: { ms: 50 } }));
    const pad = 'p'.repeat(256 * 1024);
    const updates = 80;
    for (let i = 0; i < updates; i++) {
      dispatcher.emit('slots.update', { crawlId: 1, rows: [slotRow(`${pad}${i}`, i)], now: i });
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(logs.some((l) => l.includes('dropping slot updates'))).toBe(true);
    dispatcher.emit('crawl.status', crawlStatus(1));

    // The fast client got every update.
    await until(() => fast.events('slots.update').length === updates, 10_000, 'fast client updates');

    socket.resume();
    const reply = await slow.next((m) => m.id === 'mine', 10_000);
    expect(reply.ok).toBe(true);
    await slow.next((m) => m.event === 'crawl.status', 10_000);
    const got = slow.events('slots.update').length;
    expect(got).toBeLessThan(updates);
    expect(got).toBeGreaterThan(0);

    // Caught up: the next update for that crawl comes as a full snapshot, then updates flow again.
    dispatcher.emit('slots.update', { crawlId: 1, rows: [slotRow('a.example', 1001)], now: 1001 });
    await until(() => slow.events('slots.update').length === got + 1, 5000, 'snapshot');
    expect(slow.events('slots.update').at(-1)).toEqual({ crawlId: 1, rows: dispatcher.slots, now: SNAPSHOT_NOW });
    expect(dispatcher.calls.filter((c) => c.method === 'slots.snapshot')).toEqual([{ method: 'slots.snapshot', params: { id: 1 } }]);
    dispatcher.emit('slots.update', { crawlId: 1, rows: [slotRow('a.example', 1002)], now: 1002 });
    await until(() => slow.events('slots.update').length === got + 2, 5000, 'update after snapshot');
    expect(slow.events('slots.update').at(-1)).toEqual({ crawlId: 1, rows: [slotRow('a.example', 1002)], now: 1002 });
    expect(logs.some((l) => l.includes('caught up'))).toBe(true);
  });
});
