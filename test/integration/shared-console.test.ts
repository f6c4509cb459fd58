// Issue 18, the console's side: a core built with a Redis starts a crawl as a shared crawl, records
// it, and steers every worker (one here, one a `slotscope worker` process) with each change recorded once.
// Judged at the test site's own log and in the history.

import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CrawlInfo, Reply, SlotTuple, WorkerWire } from '../../shared/contract';
import type { ChangeRecord } from '../../shared/types';
import { createCore } from '../../electron/core/create-core';
import { SharedCrawlError } from '../../electron/core/cluster/redis';
import { defer, ensureBuilt, freshDir, site, sleep, waitFor } from './helpers';
import { hasRedis, slotscope, startRedis } from './redis-helpers';

// Loopback addresses of this file: 127.0.104.1x.

beforeAll(ensureBuilt, 120_000);

describe.skipIf(!hasRedis)('a shared crawl from the console (core with --redis)', () => {
  it('refuses a bad Redis URL by name', async () => {
    const db = join(freshDir(), 'h.sqlite');
    await expect(createCore({ db, redis: 'http://127.0.0.1:1' })).rejects.toThrow(SharedCrawlError);
    await expect(createCore({ db, redis: 'http://127.0.0.1:1' })).rejects.toThrow(/--redis: .* has the scheme http/);
  });

  it('serve --redis with a bad value exits 2 naming what was wrong, before it serves anything', async () => {
    const db = join(freshDir(), 'h.sqlite');
    for (const [url, said] of [
      ['http://127.0.0.1:6379', /--redis: "http:\/\/127\.0\.0\.1:6379\/?" has the scheme http/],
      ['redis://127.0.0.1:6379/x', /--redis: the database "x" .* is not a number from 0 to 15/],
      ['redis://127.0.104.1:1', /--redis: cannot connect to Redis at redis:\/\/127\.0\.104\.1:1/],
    ] as const) {
      const p = slotscope(['serve', '--db', db, '--redis', url]);
      expect(await p.exited, p.stderr).toBe(2);
      expect(p.stderr).toMatch(said);
      expect(p.stdout).not.toMatch(/ready/);
    }
  }, 60_000);

  it('starts as a shared crawl; pause, a setting and a slot\'s pause reach every worker within 1 s; every control is recorded once', async () => {
    const hosts = ['a.test', 'b.test'];
    const s = await site({
      hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.104.${11 + i}`, pages: 400, latency_ms: { base: 30, jitter: 10 } }])),
    });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const core = await createCore({ db, redis: redis.url, slotUpdateMs: 100 });
    defer(() => core.close());
    const call = async <T>(method: string, params: unknown): Promise<T> => {
      const r: Reply = await core.dispatch(method, params);
      if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
      return r.result as T;
    };
    const until = async (f: () => Promise<boolean>, what: string, ms: number) => {
      const end = Date.now() + ms;
      while (!(await f())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await sleep(50);
      }
    };
    const events: { event: string; payload: unknown }[] = [];
    core.subscribe((event, payload) => void events.push({ event, payload }));
    const { crawl } = await call<{ crawl: CrawlInfo }>('crawls.create', {
      config: {
        name: 'shared from the console', seeds: hosts.map((h) => `${s.origin(h)}/`), resolve: s.resolve, follow: { scope: 'host' },
        settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
      },
    });
    const id = crawl.id;
    // A crawl that is not shared has no workers to list.
    expect((await core.dispatch('crawls.workers', { id })).ok).toBe(false);
    const started = await call<CrawlInfo>('crawls.start', { id });
    expect(started.shared).toBe(true);
    expect(started.status).toBe('running');
    const w = slotscope(['worker', '--redis', redis.url, '--name', 'w1']);

    // Both workers alive, both fetching.
    let workers: readonly WorkerWire[] = [];
    await until(async () => {
      workers = (await call<{ workers: WorkerWire[] }>('crawls.workers', { id })).workers;
      return workers.length === 2 && workers.every((x) => x.alive && x.responses > 0);
    }, 'two workers alive with responses', 20_000);
    expect(workers.map((x) => x.name)).toContain('w1');
    await waitFor(() => events.some((e) => e.event === 'workers.update'), 'a workers.update event', 5000);
    await waitFor(() => events.some((e) => e.event === 'slots.update'), 'a slots.update event', 5000);
    const list = await call<CrawlInfo[]>('crawls.list', {});
    expect(list.find((c) => c.id === id)?.shared).toBe(true);

    // Pause: nothing new arrives at the site 1 s after it, from any worker.
    const t0 = Date.now();
    const paused = await call<CrawlInfo>('crawls.pause', { id });
    expect(paused.status).toBe('paused');
    await sleep(2500);
    const late = s.log.filter((e) => s.startedAt + e.t > t0 + 1000);
    expect(late, JSON.stringify(late.slice(0, 3))).toHaveLength(0);
    const quiet = s.log.length;
    await sleep(1000);
    expect(s.log.length).toBe(quiet);
    const snapshot = await call<{ rows: SlotTuple[] }>('slots.snapshot', { id });
    expect(snapshot.rows.length).toBe(2);
    expect(snapshot.rows.every((r) => r[1] === 'paused')).toBe(true);
    const queue = await call<{ queued: number; items: { url: string; depth: number }[] }>('slots.queue', { id, slot: 'a.test', limit: 5 });
    expect(queue.queued).toBeGreaterThan(5);
    expect(queue.items).toHaveLength(5);
    expect(queue.items.every((q) => q.url.startsWith(s.origin('a.test')) && q.depth >= 1)).toBe(true);

    // Resume, a setting, a slot's pin: each reaches the workers and is recorded once.
    await call('crawls.resume', { id });
    await waitFor(() => s.log.length > quiet, 'requests again after resume', 5000);
    const upd = await call<{ changed: string[] }>('settings.update', { id, changes: { DOWNLOAD_DELAY: 0.2 } });
    expect(upd.changed).toEqual(['DOWNLOAD_DELAY']);
    expect((await core.dispatch('settings.update', { id, changes: { DOWNLOAD_DELAY_PER_SLOT: 1 } })).ok).toBe(false);
    // The new delay binds every worker within 1 s: b.test's starts are 0.2 s apart from then on.
    const tSet = Date.now();
    await waitFor(() => s.log.filter((e) => e.host === 'b.test' && s.startedAt + e.t > tSet + 1000).length >= 6, 'b.test requests after the new delay', 10_000);
    const bAfter = s.log.filter((e) => e.host === 'b.test' && s.startedAt + e.t > tSet + 1000);
    const bGaps = bAfter.slice(1).map((e, i) => e.t - bAfter[i]!.t);
    expect(Math.min(...bGaps), bGaps.join(' ')).toBeGreaterThanOrEqual(185);
    // A slot paused from the console: nothing new for it at the site 1 s later, from any worker.
    const tPause = Date.now();
    await call<SlotTuple>('slots.pause', { id, slot: 'b.test' });
    await sleep(2000);
    expect(s.log.filter((e) => e.host === 'b.test' && s.startedAt + e.t > tPause + 1000)).toHaveLength(0);
    await call<SlotTuple>('slots.resume', { id, slot: 'b.test' });
    await waitFor(() => s.log.some((e) => e.host === 'b.test' && s.startedAt + e.t > tPause + 2000), 'b.test again after its resume', 5000);
    const row = await call<SlotTuple>('slots.pinDelay', { id, slot: 'a.test', seconds: 0.5 });
    expect(row[20]).toBe(0.5);
    expect((await core.dispatch('slots.pinDelay', { id, slot: 'nope.test', seconds: 1 })).ok).toBe(false);
    const n0 = s.log.filter((e) => e.host === 'a.test').length;
    await waitFor(() => s.log.filter((e) => e.host === 'a.test').length >= n0 + 5, 'a.test requests after the pin', 10_000);
    const after = s.log.filter((e) => e.host === 'a.test').slice(n0 + 1);
    const gaps = after.slice(1).map((e, i) => e.t - after[i]!.t);
    expect(Math.min(...gaps), gaps.join(' ')).toBeGreaterThanOrEqual(480);

    // Stop: every worker ends, the crawl is stopped, the worker process exits 0.
    await call('crawls.stop', { id });
    await waitFor(() => w.child.exitCode !== null, 'the worker to exit', 15_000);
    expect(w.child.exitCode, w.stderr).toBe(0);
    await until(async () => (await call<CrawlInfo[]>('crawls.list', {})).find((c) => c.id === id)?.status === 'stopped', 'the crawl to be stopped', 15_000);

    const changes = await call<ChangeRecord[]>('log.changes', { id });
    const user = changes.filter((c) => c.source === 'user');
    expect(user.filter((c) => c.setting === 'started')).toHaveLength(1);
    expect(user.filter((c) => c.slot === null && c.setting === 'paused' && c.newValue === true)).toHaveLength(1);
    expect(user.filter((c) => c.slot === null && c.setting === 'paused' && c.newValue === false)).toHaveLength(1);
    expect(user.filter((c) => c.setting === 'DOWNLOAD_DELAY')).toEqual([expect.objectContaining({ oldValue: 0.05, newValue: 0.2 })]);
    expect(user.filter((c) => c.setting === 'pin_delay')).toEqual([expect.objectContaining({ slot: 'a.test', newValue: 0.5 })]);
    expect(user.filter((c) => c.setting === 'stopped')).toHaveLength(1);
    expect(user.filter((c) => c.slot === 'b.test' && c.setting === 'paused').map((c) => c.newValue)).toEqual([true, false]);
    const stats = await call<{ responses: number }>('crawls.stats', { id });
    expect(stats.responses).toBeGreaterThan(10);
    // The workers stay listed with their final counts.
    const final = await call<{ workers: WorkerWire[] }>('crawls.workers', { id });
    expect(final.workers.map((x) => x.name).sort()).toEqual(expect.arrayContaining(['w1']));
  }, 90_000);
});

describe.skipIf(!hasRedis)('a shared crawl from the console, to its end', () => {
  const setup = async (pages: number) => {
    const s = await site({ hosts: { 'c.test': { address: '127.0.104.14', pages, latency_ms: 5 }, 'd.test': { address: '127.0.104.15', pages, latency_ms: 5 } } });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const core = await createCore({ db, redis: redis.url });
    const call = async <T>(method: string, params: unknown): Promise<T> => {
      const r: Reply = await core.dispatch(method, params);
      if (!r.ok) throw new Error(`${method}: ${r.error.code}: ${r.error.message}`);
      return r.result as T;
    };
    const { crawl } = await call<{ crawl: CrawlInfo }>('crawls.create', {
      config: {
        name: 'to its end', seeds: ['c.test', 'd.test'].map((h) => `${s.origin(h)}/`), resolve: s.resolve, follow: { scope: 'host' },
        settings: { DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
      },
    });
    return { s, redis, db, core, call, id: crawl.id };
  };

  it('finishes: the crawl row says finished with every page once, and a second start is refused', async () => {
    const { s, core, call, id } = await setup(20);
    defer(() => core.close());
    await call('crawls.start', { id });
    const end = Date.now() + 30_000;
    while ((await call<CrawlInfo[]>('crawls.list', {})).find((c) => c.id === id)?.status !== 'finished') {
      if (Date.now() > end) throw new Error('the shared crawl did not finish');
      await sleep(100);
    }
    const pages = s.log.filter((e) => e.path !== '/robots.txt');
    expect(pages).toHaveLength(40);
    expect(new Set(pages.map((e) => `${e.host}${e.path}`)).size).toBe(40);
    expect((await call<{ responses: number }>('crawls.stats', { id })).responses).toBe(40);
    const again = await core.dispatch('crawls.start', { id });
    expect(again.ok).toBe(false);
  }, 60_000);

  it('quitting the host pauses it for every worker; `crawl --resume ID --redis` finishes it, nothing fetched twice', async () => {
    const { s, redis, db, core, call, id } = await setup(150);
    await call('crawls.start', { id });
    await waitFor(() => s.log.length > 20, 'some requests', 15_000);
    await core.close();
    const n = s.log.length;
    await sleep(600);
    expect(s.log.length).toBe(n);
    expect(redis.cli('HGET', `ss:c:{1}:meta`, 'status')).toBe('paused');
    const rec = slotscope(['crawl', '--db', db, '--resume', String(id), '--redis', redis.url]);
    expect(await rec.exited, rec.stderr).toBe(0);
    const pages = s.log.filter((e) => e.path !== '/robots.txt');
    expect(new Set(pages.map((e) => `${e.host}${e.path}`)).size).toBe(300);
    expect(pages).toHaveLength(300);
  }, 90_000);
});
