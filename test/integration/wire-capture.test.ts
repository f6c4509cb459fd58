// The timing bench's instrument (issue 17): a tcpdump capture on the loopback interface, read by
// test/bench/lib/pcap.ts, gives each request's arrival on the wire with its Host and target.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startCapture } from '../bench/lib/pcap';
import { defer, freshDir, sleep } from './helpers';

// Loopback addresses of this file: 127.0.96.1.

const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const root = process.getuid?.() === 0;

describe('the wire capture', () => {
  it.skipIf(!hasTcpdump || !root)('reads every request line with its Host and its arrival time off the loopback interface', async () => {
    const server = createServer((req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.96.1', r));
    defer(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
    const port = (server.address() as { port: number }).port;
    const cap = await startCapture(port, join(freshDir(), 'c.pcap'));
    if ('error' in cap) throw new Error(cap.error);
    const agent = new Agent({ connections: 1 });
    defer(() => agent.close());
    const sent: number[] = [];
    for (let i = 0; i < 6; i++) {
      if (i > 0) await sleep(40);
      sent.push(performance.now());
      const r = await request(`http://127.0.96.1:${port}/p/${i}?b=2&a=1`, { dispatcher: agent, headers: { host: `h${i % 2}.test:${port}` } });
      await r.body.text();
    }
    const rows = await cap.stop();
    expect(rows.map((r) => [r.method, r.host, r.path]), cap.summary()).toEqual(
      Array.from({ length: 6 }, (_, i) => ['GET', `h${i % 2}.test`, `/p/${i}?b=2&a=1`]));
    // Gaps on the wire follow the sender's own gaps on the open connection (the first request also
    // opened it): the median difference is within a few ms, on a loaded machine too.
    const diffs: number[] = [];
    const words: string[] = [];
    for (let i = 2; i < 6; i++) {
      const wire = rows[i].t - rows[i - 1].t;
      const own = sent[i] - sent[i - 1];
      diffs.push(Math.abs(wire - own));
      words.push(`wire ${wire.toFixed(2)} / sender ${own.toFixed(2)} ms`);
    }
    diffs.sort((a, b) => a - b);
    expect((diffs[1] + diffs[2]) / 2, words.join('; ')).toBeLessThan(3);
  }, 30_000);
});
