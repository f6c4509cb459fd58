// Issue 18: one crawl fetched by several processes, politeness shared through a real redis-server.
// Judged at the test site (its own request log, in its own process) and in the recorder's SQLite.

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { arrivals, ensureBuilt, externalSite, freshDir, gaps } from './helpers';
import { configFile, freePort, hasRedis, slotscope, startRedis, summaryOf } from './redis-helpers';
import { startCapture, type WireRequest } from '../bench/lib/pcap';
import { spawnSync } from 'node:child_process';

/** The wire is the instrument for gaps (issue 17): the site's own stamps put a new connection's first request late. */
const canCapture = spawnSync('tcpdump', ['--version']).status === 0 && process.getuid?.() === 0;

// Loopback addresses of this file: 127.0.103.x.

beforeAll(ensureBuilt, 120_000);

describe.skipIf(!hasRedis)('a shared crawl', () => {
  it('four processes over 20 hosts: no gap under the delay, never more than 2 in flight per host, every page once', async () => {
    const hosts = Array.from({ length: 20 }, (_, i) => `s${i}.test`);
    const port = await freePort();
    const ext = await externalSite({
      port,
      hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.103.${10 + i}`, pages: 12, latency_ms: { base: 40, jitter: 20 } }])),
    });
    const cap = canCapture ? await startCapture(port, join(freshDir(), 'wire.pcap')) : null;
    if (cap && 'error' in cap) throw new Error(cap.error);
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const delay = 0.3;
    const config = configFile({
      name: 'shared', seeds: hosts.map((h) => `${ext.origin(h)}/`), follow: { scope: 'host' }, resolve: ext.resolve,
      settings: { CONCURRENT_REQUESTS: 16, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: delay, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
    });
    const rec = slotscope(['crawl', '--config', config, '--db', db, '--redis', redis.url, '--name', 'rec']);
    const workers = [1, 2, 3].map((i) => slotscope(['worker', '--redis', redis.url, '--name', `w${i}`]));
    const code = await rec.exited;
    expect(code, rec.stderr).toBe(0);
    for (const w of workers) expect(await w.exited, w.stderr).toBe(0);
    const wire: WireRequest[] | null = cap ? await cap.stop() : null;
    const s = await ext.finish();
    const summary = summaryOf(rec);
    // Every page once, at the site and in the history.
    for (const h of hosts) {
      const pages = arrivals(s, h, { robots: false });
      expect(new Set(pages.map((e) => e.path)).size).toBe(12);
      expect(pages).toHaveLength(12);
      // No gap under the delay − 2 ms, on the wire (the site's log where no capture can run); never more than 2 in flight at the server.
      const g = wire ? gaps(wire.filter((r) => r.host === h)) : gaps(arrivals(s, h));
      expect(g).toHaveLength(12);
      expect(Math.min(...g), `${h} (${wire ? 'wire' : 'site log'}): ${g.map((x) => x.toFixed(1)).join(' ')}`).toBeGreaterThanOrEqual(delay * 1000 - 2);
      expect(Math.max(...arrivals(s, h).map((e) => e.in_flight))).toBeLessThanOrEqual(2);
    }
    const sql = new Database(db, { readonly: true });
    const rows = sql.prepare('SELECT url FROM responses WHERE crawl_id = ?').all(summary.crawl_id) as { url: string }[];
    sql.close();
    expect(rows).toHaveLength(20 * 12);
    expect(new Set(rows.map((r) => r.url)).size).toBe(20 * 12);
    expect(summary.responses).toBe(20 * 12);
    // Every process fetched a share.
    expect(Object.keys(summary.workers).sort()).toEqual(['rec', 'w1', 'w2', 'w3']);
    for (const n of Object.values(summary.workers)) expect(n).toBeGreaterThan(0);
  }, 120_000);

  it('a host paced by its RateLimit headers: no refusal at the site, and its pacing window counts each request from its send', async () => {
    const host = 'paced.test';
    const pages = 50;
    const port = await freePort();
    const ext = await externalSite({
      port,
      hosts: { [host]: { address: '127.0.103.40', pages, latency_ms: 20, rate_limit: { requests: 20, per_seconds: 1, status: 429, retry_after: 1, headers: 'ratelimit' } } },
    });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const config = configFile({
      name: 'paced', seeds: Array.from({ length: pages }, (_, i) => (i === 0 ? `${ext.origin(host)}/` : `${ext.origin(host)}/page/${i}`)), resolve: ext.resolve,
      settings: { ROBOTSTXT_OBEY: false },
    });
    const rec = slotscope(['crawl', '--config', config, '--db', db, '--redis', redis.url, '--name', 'rec']);
    const worker = slotscope(['worker', '--redis', redis.url, '--name', 'w1']);
    expect(await rec.exited, rec.stderr).toBe(0);
    expect(await worker.exited, worker.stderr).toBe(0);
    const s = await ext.finish();
    const log = arrivals(s, host, { robots: false });
    expect(log).toHaveLength(pages);
    expect(log.filter((e) => e.status !== 200), 'refused at the site').toEqual([]);
    // The slot's state in Redis: header pacing's ring of starts holds each request's send, later
    // than its start (the engine's paceSent); a ring of the starts themselves undercounts the
    // server's window by every send's lateness.
    const key = redis.cli('--scan', '--pattern', 'ss:c:*:s:*').split('\n').filter((k) => k !== '');
    expect(key).toHaveLength(1);
    const pol = JSON.parse(redis.cli('HGET', key[0], 'pol')) as { headerPace: { starts: { buf: { $runs: [unknown, number][] } } } | null };
    expect(pol.headerPace, 'header pacing in the shared state').not.toBeNull();
    const ring = pol.headerPace!.starts.buf.$runs.map(([v]) => v).filter((v): v is number => typeof v === 'number');
    expect(ring.length).toBeGreaterThanOrEqual(20);
    const sql = new Database(db, { readonly: true });
    const starts = (sql.prepare('SELECT started_at AS t FROM responses').all() as { t: number }[]).map((r) => r.t);
    sql.close();
    expect(starts).toHaveLength(pages);
    // The one exception is the engine's own: header pacing begins at the first response that says
    // a limit, with its request's start (as the one-process engine does), the ring's oldest entry.
    const seed = Math.min(...ring);
    const later = ring.filter((v) => v !== seed);
    const atAStart = later.filter((v) => starts.some((t) => Math.abs(t - v) < 0.001));
    expect(atAStart, 'ring entries still at a request\'s start, not its send').toEqual([]);
    // Each entry is a send: after some request's start, by less than a second.
    for (const v of later) expect(starts.some((t) => v > t && v - t < 1000), String(v)).toBe(true);
  }, 120_000);

  it("a worker's --concurrency bounds its requests on the wire, while its commits travel", async () => {
    const hosts = Array.from({ length: 8 }, (_, i) => `c${i}.test`);
    const port = await freePort();
    const latency = 100;
    const ext = await externalSite({
      port,
      hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: `127.0.103.${50 + i}`, pages: 6, latency_ms: latency }])),
    });
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    const config = configFile({
      name: 'bounded', seeds: hosts.map((h) => `${ext.origin(h)}/`), follow: { scope: 'host' }, resolve: ext.resolve,
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0, AUTOTHROTTLE_ENABLED: false, ROBOTSTXT_OBEY: false },
    });
    const rec = slotscope(['crawl', '--config', config, '--db', db, '--redis', redis.url, '--name', 'rec', '--no-fetch']);
    const worker = slotscope(['worker', '--redis', redis.url, '--name', 'w1', '--concurrency', '3']);
    expect(await rec.exited, rec.stderr).toBe(0);
    expect(await worker.exited, worker.stderr).toBe(0);
    const log = arrivals(await ext.finish(), undefined, { robots: false });
    expect(log).toHaveLength(8 * 6);
    // Every request is served for exactly `latency` ms: those at the site when one arrives came within that time before it.
    const atSite = log.map((e) => log.filter((x) => x.t <= e.t && x.t > e.t - (latency - 1)).length);
    expect(Math.max(...atSite)).toBeLessThanOrEqual(3);
    expect(Math.max(...atSite)).toBe(3);
  }, 120_000);
});
