// A request handed to the downloader ahead of its start time (issue 17.1, timing on the wire: the
// scheduler hands a slot over up to Clock.handoverLeadMs early so that a late timer and the HTTP
// client's deferred write do not make its gap late) is written at its start time, never before.
// Real HTTP over loopback; the server stamps arrivals on the engine's own clock (same process).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRealClock } from '../../electron/core/clock';
import { Downloader, type DownloadResult } from '../../electron/core/engine/downloader';

// Loopback addresses of this file: 127.0.110.1-9.

const servers: Server[] = [];
const downloaders: Downloader[] = [];
afterEach(async () => {
  await Promise.all(downloaders.splice(0).map((d) => d.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function stampingServer(address: string): Promise<{ origin: string; arrivals: Map<string, number> }> {
  const clock = createRealClock();
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    arrivals.set(req.url!, clock.now());
    res.end('ok');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, address, r));
  return { origin: `http://${address}:${(server.address() as AddressInfo).port}`, arrivals };
}

function fetchOnce(d: Downloader, origin: string, path: string, at?: number): Promise<{ res: DownloadResult; sentAt: number }> {
  return new Promise((resolve) => {
    let sentAt = NaN;
    d.fetch({ origin, path, method: 'GET', timeout: 10, maxSize: 0, keepBody: false, startedAt: at, notBefore: at },
      (res) => resolve({ res, sentAt }), (t) => (sentAt = t));
  });
}

describe('a request handed over before its start time', () => {
  it('is written at its start time, on a reused connection and on a new one', async () => {
    const clock = createRealClock();
    const s = await stampingServer('127.0.110.1');
    const d = new Downloader({ clock, userAgent: 'slotscope-test', connectionsPerOrigin: 1 });
    downloaders.push(d);
    // A new connection, handed over 3 ms early.
    let at = clock.now() + 3;
    let r = await fetchOnce(d, s.origin, '/new', at);
    expect(r.res.status).toBe(200);
    expect(s.arrivals.get('/new')!).toBeGreaterThanOrEqual(at);
    expect(r.sentAt).toBeGreaterThanOrEqual(at);
    // The same connection again (undici writes it a check phase after dispatch), 3 ms early.
    for (let i = 0; i < 5; i++) {
      at = clock.now() + 3;
      r = await fetchOnce(d, s.origin, `/reused/${i}`, at);
      expect(r.res.status).toBe(200);
      expect(r.res.reused).toBe(true);
      expect(s.arrivals.get(`/reused/${i}`)!).toBeGreaterThanOrEqual(at);
      expect(r.sentAt).toBeGreaterThanOrEqual(at);
      // Latency counts from the start time, never negative.
      expect(r.res.latency!).toBeGreaterThanOrEqual(0);
    }
  });

  it('without a start time ahead, is written at once', async () => {
    const clock = createRealClock();
    const s = await stampingServer('127.0.110.2');
    const d = new Downloader({ clock, userAgent: 'slotscope-test', connectionsPerOrigin: 1 });
    downloaders.push(d);
    await fetchOnce(d, s.origin, '/warm');
    const t0 = clock.now();
    const r = await fetchOnce(d, s.origin, '/now', t0 - 50);
    expect(r.res.status).toBe(200);
    // No hold: out well within the 5 ms a hold may last (a busy machine may still take a while).
    expect(r.sentAt - t0).toBeLessThan(200);
  });
});
