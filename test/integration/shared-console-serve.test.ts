// Issue 18, the console's side with real `slotscope serve --redis` processes and a WebSocket client as
// the page has it: a worker lost reaches an open console live; a serve restarted finds its paused
// shared crawl in Redis and resumes it as a shared crawl (never as a one-process crawl beside the
// workers); a crawl marked shared that its Redis no longer has is refused by name.
// Judged at the test site's own log (every page once, never more in flight than the per-host limit)
// and by what the console's API says.

import { join } from 'node:path';
import { WebSocket } from 'ws';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../shared/types';
import { connect, type Client } from '../../renderer/src/transport/ws-client';
import type { TestSite } from '../../electron/core/testsite';
import { defer, ensureBuilt, freshDir, site, sleep, waitFor } from './helpers';
import { hasRedis, slotscope, startRedis, type Proc } from './redis-helpers';

// Loopback addresses of this file: 127.0.112.1x.

beforeAll(ensureBuilt, 120_000);

/** `slotscope serve --db DB [--redis URL]` in a process of its own, and a console's WebSocket client to it. */
async function serve(db: string, redis?: string): Promise<{ proc: Proc; client: Client }> {
  const proc = slotscope(['serve', '--db', db, ...(redis ? ['--redis', redis] : [])]);
  await waitFor(() => proc.stdout.includes('\n') || proc.child.exitCode !== null, 'slotscope serve to print its URL', 30_000);
  if (!proc.stdout.includes('\n')) throw new Error(`slotscope serve exited with ${proc.child.exitCode}: ${proc.stderr}`);
  const url = new URL((JSON.parse(proc.stdout.slice(0, proc.stdout.indexOf('\n'))) as { url: string }).url);
  const client = connect(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`, { WebSocketImpl: WebSocket });
  defer(() => client.close());
  return { proc, client };
}

/** Stops a serve as Ctrl-C does (SIGTERM): it pauses its shared crawls for every worker and exits. */
async function quit(p: Proc, client: Client): Promise<void> {
  client.close();
  p.child.kill('SIGTERM');
  const code = await Promise.race([p.exited, sleep(20_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') throw new Error(`serve did not exit on SIGTERM:\n${p.stderr.slice(-2000)}`);
}

async function until(f: () => Promise<boolean>, what: string, ms: number, show?: () => Promise<unknown>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${show ? `: ${JSON.stringify(await show())}` : ''}`);
    await sleep(100);
  }
}

const pages = (s: TestSite) => s.log.filter((e) => e.path !== '/robots.txt');

async function createCrawl(client: Client, s: TestSite, hosts: readonly string[]): Promise<number> {
  const { crawl } = await client.invoke('crawls.create', {
    config: {
      name: 'shared, across a restart', seeds: hosts.map((h) => `${s.origin(h)}/`), resolve: s.resolve, follow: { scope: 'host' },
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.03, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
    },
  });
  return crawl.id;
}

describe.skipIf(!hasRedis)('shared crawls in a real `slotscope serve --redis`', () => {
  it('a worker killed (-9): its worker-lost warning reaches an open console live, naming the worker', async () => {
    const s = await site({ hosts: { 'lost.test': { address: '127.0.112.11', pages: 2000, latency_ms: { base: 40, jitter: 10 } } } });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const { proc, client } = await serve(db, redis.url);
    const warnings: { at: number; event: EventRecord }[] = [];
    client.subscribe('warning', (p) => void warnings.push({ at: Date.now(), event: p.event }));
    const id = await createCrawl(client, s, ['lost.test']);
    expect((await client.invoke('crawls.start', { id })).shared).toBe(true);
    const doomed = slotscope(['worker', '--redis', redis.url, '--name', 'doomed-7']);
    await until(async () => (await client.invoke('crawls.workers', { id })).workers.some((w) => w.name === 'doomed-7' && w.responses > 0),
      'doomed-7 to fetch', 20_000);
    const tKill = Date.now();
    doomed.child.kill('SIGKILL');
    // Its heartbeat lapses after 3 s and the recorder sweeps once a second: then the console hears of it at once.
    await waitFor(() => warnings.some((w) => w.event.code === 'worker-lost'), 'a worker-lost warning event', 10_000);
    const lost = warnings.find((w) => w.event.code === 'worker-lost')!;
    expect(lost.event.kind).toBe('warning');
    expect(lost.event.text).toContain('doomed-7');
    expect(lost.at - tKill).toBeLessThan(7000);
    // Live: it arrived within 2 s of being recorded, not at the next reload.
    expect(lost.at - lost.event.t).toBeLessThan(2000);
    // And it is the one a reload reads.
    const stored = await client.invoke('log.events', { id, kind: 'warning' });
    expect(stored.filter((e) => e.code === 'worker-lost')).toEqual([expect.objectContaining({ t: lost.event.t, text: lost.event.text })]);
    await client.invoke('crawls.stop', { id });
    await quit(proc, client);
  }, 90_000);
});
