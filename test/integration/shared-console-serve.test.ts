// Issue 18, the console's side with real `slotscope serve --redis` processes and a WebSocket client as
// the page has it: a worker lost reaches an open console live; a serve restarted finds its paused
// shared crawl in Redis and resumes it as a shared crawl (never as a one-process crawl beside the
// workers); a crawl marked shared that its Redis no longer has is refused by name.
// Judged at the test site's own log (every page once, never more in flight than the per-host limit)
// and by what the console's API says.

import { join } from 'node:path';
import { WebSocket } from 'ws';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AppError, CrawlInfo, WorkerWire } from '../../shared/contract';
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

const refusal = async (p: Promise<unknown>): Promise<AppError> => {
  try {
    await p;
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected a refusal');
};

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

  it('serve restarted: the paused shared crawl is listed as shared with its workers, and resumes as a shared crawl (every page once, never a second client)', async () => {
    const hosts = ['r1.test', 'r2.test'];
    const s = await site({ hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.112.${12 + i}`, pages: 150, latency_ms: { base: 30, jitter: 10 } }])) });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const first = await serve(db, redis.url);
    const id = await createCrawl(first.client, s, hosts);
    await first.client.invoke('crawls.start', { id });
    const w1 = slotscope(['worker', '--redis', redis.url, '--name', 'w1', '--concurrency', '3']);
    await until(async () => (await first.client.invoke('crawls.workers', { id })).workers.some((w) => w.name === 'w1' && w.responses > 0), 'w1 to fetch', 20_000);
    await first.client.invoke('crawls.pause', { id });
    await quit(first.proc, first.client);
    const atRestart = pages(s).length;
    expect(atRestart).toBeLessThan(300);
    await sleep(500);
    expect(pages(s).length, 'nothing fetched while paused').toBe(atRestart);

    const second = await serve(db, redis.url);
    const { client } = second;
    const listed = (await client.invoke('crawls.list', {})).find((c) => c.id === id)!;
    expect(listed).toEqual(expect.objectContaining({ status: 'paused', shared: true }));
    // The Workers tab: w1 (still attached to Redis) alive, and this host's fetcher again.
    let workers: readonly WorkerWire[] = [];
    await until(async () => {
      workers = (await client.invoke('crawls.workers', { id })).workers;
      return workers.filter((w) => w.alive).length === 2;
    }, 'w1 and this host alive in the Workers list', 10_000, async () => workers);
    const w1Before = workers.find((w) => w.name === 'w1')!;
    expect(w1Before.concurrency).toBe(3);
    // What the header adds up as the in-flight limit: w1's 3 and this host's 16 (CONCURRENT_REQUESTS).
    expect(workers.filter((w) => w.alive).reduce((n, w) => n + w.concurrency, 0)).toBe(19);
    const events: string[] = [];
    client.subscribe('workers.update', (p) => void (p.crawlId === id && events.push('workers.update')));
    await waitFor(() => events.length > 0, 'workers.update events of the paused shared crawl', 5000);
    await sleep(500);
    expect(pages(s).length, 'still paused after the restart').toBe(atRestart);

    const resumed = await client.invoke('crawls.resume', { id });
    expect(resumed).toEqual(expect.objectContaining({ shared: true, status: 'running' }));
    await until(async () => (await client.invoke('crawls.list', {})).find((c) => c.id === id)?.status === 'finished', 'the crawl to finish', 60_000,
      async () => (await client.invoke('crawls.list', {})).find((c) => c.id === id));
    // Every page once, from whichever process; at no time more than the per-host limit in flight at the site.
    const got = pages(s);
    expect(new Set(got.map((e) => `${e.host}${e.path}`)).size).toBe(300);
    expect(got).toHaveLength(300);
    for (const h of hosts) expect(s.inFlightStats(h).max, h).toBeLessThanOrEqual(2);
    // w1 kept fetching after the resume (the same shared crawl), and ends with it.
    const final = (await client.invoke('crawls.workers', { id })).workers;
    expect(final.find((w) => w.name === 'w1')!.responses).toBeGreaterThan(w1Before.responses);
    expect(await w1.exited, w1.stderr).toBe(0);
    // Recorded once, all of it: the history has every page the site served.
    expect((await client.invoke('crawls.stats', { id })).responses).toBe(got.filter((e) => e.status === 200).length);
    const changes = await client.invoke('log.changes', { id });
    expect(changes.filter((c) => c.setting === 'paused' && c.newValue === false)).toHaveLength(1);
    await quit(second.proc, client);
  }, 120_000);

  it('serve killed (-9) mid-crawl: restarted, it records what the workers fetched meanwhile and finishes the crawl, every page once', async () => {
    const s = await site({ hosts: { 'k.test': { address: '127.0.112.14', pages: 200, latency_ms: { base: 30, jitter: 10 } } } });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const first = await serve(db, redis.url);
    const id = await createCrawl(first.client, s, ['k.test']);
    await first.client.invoke('crawls.start', { id });
    const w1 = slotscope(['worker', '--redis', redis.url, '--name', 'w1']);
    await until(async () => (await first.client.invoke('crawls.workers', { id })).workers.some((w) => w.name === 'w1' && w.responses > 0), 'w1 to fetch', 20_000);
    first.proc.child.kill('SIGKILL');
    await first.proc.exited;
    // The worker goes on without a recorder where it can (a slot whose lanes the killed host held waits
    // until a recorder sweeps its leases back); what it fetches meanwhile waits in Redis's stream.
    await sleep(1500);

    const second = await serve(db, redis.url);
    const listed = (await second.client.invoke('crawls.list', {})).find((c) => c.id === id)!;
    expect(listed.shared).toBe(true);
    await until(async () => (await second.client.invoke('crawls.list', {})).find((c) => c.id === id)?.status === 'finished', 'the crawl to finish', 60_000);
    const got = pages(s);
    // The killed host's own requests in flight are fetched once more (its lease lapsed): at most its 16.
    const distinct = new Set(got.map((e) => `${e.host}${e.path}`)).size;
    expect(distinct).toBe(200);
    expect(got.length - distinct).toBeLessThanOrEqual(16);
    expect(s.inFlightStats('k.test').max).toBeLessThanOrEqual(2);
    expect(await w1.exited, w1.stderr).toBe(0);
    expect((await second.client.invoke('crawls.stats', { id })).responses).toBe(distinct);
    await quit(second.proc, second.client);
  }, 120_000);

  it('a crawl marked shared that its Redis no longer has (flushed, or serve without --redis): resume is refused naming the crawl and the Redis; nothing is fetched', async () => {
    const s = await site({ hosts: { 'gone.test': { address: '127.0.112.15', pages: 300, latency_ms: 20 } } });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const first = await serve(db, redis.url);
    const id = await createCrawl(first.client, s, ['gone.test']);
    await first.client.invoke('crawls.start', { id });
    await waitFor(() => pages(s).length > 5, 'some requests', 15_000);
    await first.client.invoke('crawls.pause', { id });
    await quit(first.proc, first.client);
    const n = s.log.length;

    redis.cli('FLUSHALL');
    const second = await serve(db, redis.url);
    const listed: CrawlInfo = (await second.client.invoke('crawls.list', {})).find((c) => c.id === id)!;
    expect(listed).toEqual(expect.objectContaining({ status: 'paused', shared: true }));
    const e = await refusal(second.client.invoke('crawls.resume', { id }));
    expect(e.code).toBe('conflict');
    expect(e.field).toBe('id');
    expect(e.message).toContain(`crawl ${id} is a shared crawl`);
    expect(e.message).toContain(`redis://127.0.0.1:${redis.port}/0`);
    expect(e.message).toMatch(/no longer has it/);
    // Its workers cannot be listed, and a setting is refused whole (it would live here only, not in its Redis).
    const w = await refusal(second.client.invoke('crawls.workers', { id }));
    expect(w.code).toBe('conflict');
    expect(w.message).toContain(`crawl ${id} is a shared crawl this host does not record now`);
    const before = await second.client.invoke('settings.get', { id });
    const st = await refusal(second.client.invoke('settings.update', { id, changes: { DOWNLOAD_DELAY: 1 } }));
    expect(st.code).toBe('conflict');
    expect(st.message).toMatch(/Nothing was changed/);
    expect(await second.client.invoke('settings.get', { id })).toEqual(before);
    await quit(second.proc, second.client);

    // Another Redis (not the one it was opened in): the same refusal, naming both.
    const other = await startRedis();
    const fourth = await serve(db, other.url);
    const e3 = await refusal(fourth.client.invoke('crawls.resume', { id }));
    expect(e3.code).toBe('conflict');
    expect(e3.message).toContain(`the Redis at redis://127.0.0.1:${other.port}/0 does not have it`);
    expect(e3.message).toContain(`opened in the Redis at redis://127.0.0.1:${redis.port}/0`);
    await quit(fourth.proc, fourth.client);

    // Without --redis: not resumed in one process either.
    const third = await serve(db);
    const e2 = await refusal(third.client.invoke('crawls.resume', { id }));
    expect(e2.code).toBe('conflict');
    expect(e2.message).toContain(`crawl ${id} is a shared crawl`);
    expect(e2.message).toContain(`redis://127.0.0.1:${redis.port}/0`);
    expect(e2.message).toContain('--redis');
    expect((await third.client.invoke('crawls.list', {})).find((c) => c.id === id)?.status).toBe('paused');
    await sleep(1000);
    expect(s.log.length, 'nothing fetched').toBe(n);
    await quit(third.proc, third.client);

    // `crawl --resume ID` without --redis: exit 2, the same words.
    const cli = slotscope(['crawl', '--db', db, '--resume', String(id)]);
    expect(await cli.exited, cli.stderr).toBe(2);
    expect(cli.stderr).toContain(`crawl ${id} is a shared crawl`);
    expect(s.log.length, 'nothing fetched').toBe(n);
  }, 120_000);
});
