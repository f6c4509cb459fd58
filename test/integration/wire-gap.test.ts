// A slot's gap counts from the moment its request was written, not from before (issue 17: "no gap
// on the wire shorter than the delay"). The crawler's process is made to stall for 8 ms right
// before writing every odd page, as a busy machine can stall it; on the wire (tcpdump on lo, the
// instrument of issue 17; the site's own log where no capture can run) every gap is at least
// DOWNLOAD_DELAY.
import { Socket } from 'node:net';
import { join } from 'node:path';
import { startCapture } from '../bench/lib/pcap';
import { beforeAll, describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, defer, ensureBuilt, externalSite, freshDir, gaps } from './helpers';

// Loopback addresses of this file: 127.0.96.10-19.

beforeAll(ensureBuilt, 120_000);

describe('the gap at the server', () => {
  it('is never shortened by a stall between handing a request over and writing it', async () => {
    const s = await externalSite({ hosts: { 'stall.test': { address: '127.0.96.10', pages: 8, latency_ms: 1 } } });
    const original = Socket.prototype.write;
    let stalls = 0;
    // Only the engine's writes of odd pages stall (the asymmetry is what shortens a gap).
    Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      if (typeof chunk === 'string' && /^GET \/page\/[1357] /.test(chunk)) {
        stalls++;
        const until = performance.now() + 8;
        while (performance.now() < until) { /* the process is not scheduled */ }
      }
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof Socket.prototype.write;
    defer(() => { Socket.prototype.write = original; });
    const o = s.origin('stall.test');
    // The site's own stamps wait whenever its process is not scheduled (a loaded machine); the
    // kernel's capture stamps do not.
    const capture = await startCapture(Number(new URL(o).port), join(freshDir(), 'gap.pcap'));
    await crawl(crawlConfig({
      seeds: Array.from({ length: 8 }, (_, i) => `${o}/page/${i + 1}`),
      follow: { scope: 'none' },
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 },
      resolve: s.resolve,
    }), { limitMs: 20_000 });
    Socket.prototype.write = original;
    expect(stalls).toBe(4);
    const wire = 'error' in capture ? null : (await capture.stop()).filter((r) => r.host === 'stall.test');
    const log = wire ?? arrivals(await s.finish(), 'stall.test');
    expect(log).toHaveLength(8);
    const g = gaps([...log].sort((a, b) => a.t - b.t));
    const where = wire ? 'on the wire' : `in the site's log (${(capture as { error: string }).error})`;
    expect(g.filter((x) => x < 100 - 1), `gaps ${where}: ${g.map((x) => x.toFixed(1)).join(', ')} ms`).toEqual([]);
  }, 30_000);
});
