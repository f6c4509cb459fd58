// Issue 15, "A host that cannot be made to misbehave": a WebSocket client that sends requests and
// never reads the replies must not grow the host's memory. The host stops reading a client whose
// unsent replies pass the cap, and closes (and counts) one that reads nothing for a while.

import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openSocket, startTestServer, until } from './fixtures';

const MiB = 1024 * 1024;

/** Node's memory outside the JS heap that holds unsent socket data. */
const buffers = () => process.memoryUsage().arrayBuffers;

async function settle(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

describe('a client that never reads its replies', () => {
  it('60,000 unread replies: the host\'s unsent bytes stay under the cap, and the client is closed and counted', async () => {
    const { server, dispatcher, wsUrl, origin, logs } = await startTestServer({ backpressureBytes: 4 * MiB, slowClientMs: 1500 });
    // Each 'crawls.list' reply is about 4 KB.
    for (let i = 0; i < 10; i++) await dispatcher.dispatch('crawls.create', { config: { name: `crawl ${i} ${'n'.repeat(240)}` } });
    const bystander = await openSocket(wsUrl, { origin });
    const slow = await openSocket(wsUrl, { origin });
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();

    global.gc?.();
    const before = buffers();
    const frame = JSON.stringify({ id: 1, method: 'crawls.list', params: {} });
    for (let i = 0; i < 60_000; i++) {
      slow.ws.send(frame);
      if (i % 5000 === 0) await settle(5);
    }
    let peakBuffered = 0;
    let peakMemory = 0;
    const sampler = setInterval(() => {
      peakBuffered = Math.max(peakBuffered, server.stats().bufferedBytes);
      peakMemory = Math.max(peakMemory, buffers() - before);
    }, 5);
    await settle(1000);

    // Unbounded, this is 60,000 x 4 KB = 240 MB of replies held for a client that reads none.
    expect(peakBuffered).toBeLessThan(5 * MiB);
    expect(peakMemory).toBeLessThan(40 * MiB);
    expect(dispatcher.calls.filter((c) => c.method === 'crawls.list').length).toBeLessThan(20_000);

    // It read nothing for slowClientMs: closed, counted and named in the log; its buffers given back.
    await until(() => server.stats().slowClientsClosed === 1, 10_000, 'the slow client to be closed');
    clearInterval(sampler);
    expect(server.stats().clients).toBe(1);
    expect(logs.some((l) => /ws client \d+: closed: .*read nothing for 1\.5 s/.test(l))).toBe(true);
    await settle(100);
    global.gc?.();
    expect(buffers() - before).toBeLessThan(20 * MiB);

    // The other client was served all along.
    expect((await bystander.request('crawls.list', {})).ok).toBe(true);
  });

  it('a client that sends 20,000 requests and reads slowly gets every reply, and is not closed', async () => {
    const { server, dispatcher, wsUrl, origin } = await startTestServer({ backpressureBytes: 1 * MiB, slowClientMs: 1500 });
    for (let i = 0; i < 10; i++) await dispatcher.dispatch('crawls.create', { config: { name: `crawl ${i} ${'n'.repeat(240)}` } });
    const c = await openSocket(wsUrl, { origin });
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    // Reads in bursts: 200 ms paused, 50 ms reading.
    let reading = true;
    const flip = setInterval(() => {
      reading = !reading;
      if (reading) socket.resume();
      else socket.pause();
    }, 200);
    const frame = (i: number) => JSON.stringify({ id: i, method: 'crawls.list', params: {} });
    for (let i = 0; i < 20_000; i++) c.ws.send(frame(i));
    await until(() => c.messages.length === 20_000, 60_000, 'every reply');
    clearInterval(flip);
    socket.resume();
    expect(new Set(c.messages.map((m) => m.id)).size).toBe(20_000);
    expect(c.messages.every((m) => m.ok === true)).toBe(true);
    expect(server.stats().slowClientsClosed).toBe(0);
    expect(server.stats().clients).toBe(1);
  });

  it('events to a client that reads nothing: closed after slowClientMs, the others keep theirs', async () => {
    const { server, dispatcher, wsUrl, origin } = await startTestServer({ backpressureBytes: 1 * MiB, slowClientMs: 1000 });
    const reader = await openSocket(wsUrl, { origin });
    const slow = await openSocket(wsUrl, { origin });
    (slow.ws as unknown as { _socket: Socket })._socket.pause();
    const big = 'w'.repeat(64 * 1024);
    for (let i = 0; i < 200; i++) {
      dispatcher.emit('warning', { crawlId: 1, event: { t: i, slot: null, kind: 'warning', code: 'x', text: `${i} ${big}` } });
      await settle(2);
      expect(server.stats().bufferedBytes).toBeLessThan(40 * MiB);
    }
    await until(() => server.stats().slowClientsClosed === 1, 10_000, 'the slow client to be closed');
    await until(() => reader.events('warning').length === 200, 10_000, 'every warning for the reading client');
  });
});
