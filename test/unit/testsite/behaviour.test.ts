// Checks the test site's scripted misbehaviour: latency that grows with load, random statuses,
// the rate limit, resets, hangs, and a close() that never waits on a stuck request.

import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startTestSite, type ScenarioInput, type TestSite } from '../../../electron/core/testsite';
import { get, sleep, start } from './site-helpers';


describe('latency', () => {
  it('delays the response by base, and answers at once with latency 0', async () => {
    const site = await start({ hosts: { 'slow.test': { address: '127.0.0.2', latency_ms: 120 }, 'fast.test': { address: '127.0.0.3' } } });
    await get(`${site.hosts['slow.test']}/page/1`); // warm the connection
    await get(`${site.hosts['fast.test']}/page/1`);
    const slow = await get(`${site.hosts['slow.test']}/`);
    const fast = await get(`${site.hosts['fast.test']}/`);
    expect(slow.ms).toBeGreaterThanOrEqual(115);
    expect(fast.ms).toBeLessThan(slow.ms - 60);
  });

  it('keeps jitter within base ± jitter', async () => {
    const site = await start({ hosts: { 'j.test': { address: '127.0.0.2', latency_ms: { base: 60, jitter: 40 } } } });
    const times: number[] = [];
    for (let i = 0; i < 8; i++) times.push((await get(`${site.hosts['j.test']}/`)).ms);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(18);
    expect(Math.max(...times)).toBeLessThan(400);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(10);
  });

  it('grows with concurrent load (per_inflight) and logs in_flight per arrival', async () => {
    const site = await start({ hosts: { 'busy.test': { address: '127.0.0.2', latency_ms: { base: 150, per_inflight: 20 } } } });
    const base = site.hosts['busy.test'];
    const single = await get(`${base}/`);
    site.log.length = 0;
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => get(`${base}/page/${i + 1}`)));
    const slowest = Math.max(...all.map((r) => r.ms));
    expect(single.ms).toBeGreaterThanOrEqual(145);
    expect(slowest).toBeGreaterThanOrEqual(150 + 9 * 20 - 5);
    expect(slowest).toBeGreaterThan(single.ms + 100);
    expect(site.log.map((e) => e.in_flight).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('statuses', () => {
  const scenario: ScenarioInput = { hosts: { 'flaky.test': { address: '127.0.0.2', statuses: { '503': 0.3, '500': 0.1 } } }, seed: 7 };

  async function statuses(site: TestSite, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => get(`${site.hosts['flaky.test']}/`)));
      out.push(...batch.map((r) => r.status));
    }
    return out;
  }

  it('answers each status with about its probability, the rest with the page', async () => {
    const got = await statuses(await start(scenario), 1000);
    const share = (code: number): number => got.filter((s) => s === code).length / got.length;
    expect(share(503)).toBeGreaterThan(0.25);
    expect(share(503)).toBeLessThan(0.35);
    expect(share(500)).toBeGreaterThan(0.06);
    expect(share(500)).toBeLessThan(0.14);
    expect(share(200)).toBeGreaterThan(0.53);
    expect(share(200) + share(503) + share(500)).toBe(1);
  });

  it('draws the same sequence for the same seed, another for another seed', async () => {
    const seq = async (seed: number): Promise<number[]> => {
      const site = await start({ ...scenario, seed });
      const out: number[] = [];
      for (let i = 0; i < 40; i++) out.push((await get(`${site.hosts['flaky.test']}/`)).status);
      return out;
    };
    const a = await seq(7);
    expect(await seq(7)).toEqual(a);
    expect(await seq(8)).not.toEqual(a);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After beyond the limit, and admits again once the window slides', async () => {
    const site = await start({
      hosts: { 'limited.test': { address: '127.0.0.2', rate_limit: { requests: 5, per_seconds: 1, retry_after: 2 } } },
    });
    const base = site.hosts['limited.test'];
    const first: number[] = [];
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < 8; i++) {
      const r = await get(`${base}/page/${i + 1}`);
      first.push(r.status);
      if (r.status === 429) refused = r;
    }
    expect(first).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(refused?.headers['retry-after']).toBe('2');
    expect(refused!.body.length).toBeLessThan(200);
    expect((await get(`${base}/robots.txt`)).status).toBe(404); // robots.txt is exempt
    // The window slides: a second after the admitted arrivals, requests are admitted again.
    await sleep(site.log[4].t + 1050 - site.log.at(-1)!.t);
    expect((await get(`${base}/`)).status).toBe(200);
  });

  it('uses the configured status and can leave out Retry-After', async () => {
    const site = await start({ hosts: { 'l.test': { address: '127.0.0.2', rate_limit: { requests: 1, status: 503, retry_after: null } } } });
    expect((await get(`${site.hosts['l.test']}/`)).status).toBe(200);
    const r = await get(`${site.hosts['l.test']}/`);
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBeUndefined();
  });
});

describe('reset, hang and close', () => {
  it('resets the connection without a response', async () => {
    const site = await start({ hosts: { 'r.test': { address: '127.0.0.2', reset: ['/reset'] } } });
    await expect(get(`${site.hosts['r.test']}/reset`)).rejects.toMatchObject({ code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/) });
    expect(site.log.find((e) => e.path === '/reset')?.status).toBe(0);
    expect((await get(`${site.hosts['r.test']}/`)).status).toBe(200);
  });

  it('hangs until the client gives up, then logs status 0 and frees the slot', async () => {
    const site = await start({ hosts: { 'h.test': { address: '127.0.0.2', hang: ['/hang'] } } });
    const base = site.hosts['h.test'];
    const began = performance.now();
    await expect(get(`${base}/hang`, { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - began).toBeGreaterThanOrEqual(190);
    await sleep(50);
    expect(site.log.find((e) => e.path === '/hang')).toMatchObject({ host: 'h.test', in_flight: 1, status: 0 });
    await get(`${base}/`);
    expect(site.log.at(-1)).toMatchObject({ path: '/', in_flight: 1, status: 200 });
  });

  it('closes promptly with a hanging request, a pending latency timer and idle keep-alive sockets', async () => {
    const site = await startTestSite(
      { hosts: { 'h.test': { address: '127.0.0.2', hang: ['/hang'], latency_ms: 10_000 }, 'idle.test': {} } },
      { keepLog: true },
    );
    const base = site.hosts['h.test'];
    const hanging = get(`${base}/hang`).then(
      () => 'answered',
      () => 'failed',
    );
    const slow = get(`${base}/`).then(
      () => 'answered',
      () => 'failed',
    );
    await get(`${site.origin('idle.test')}/`.replace('idle.test', '127.0.0.1'), { headers: { host: 'idle.test' } });
    await sleep(50);
    const t = performance.now();
    await site.close();
    expect(performance.now() - t).toBeLessThan(1000);
    expect(await hanging).toBe('failed');
    expect(await slow).toBe('failed');
    expect(site.log.find((e) => e.path === '/hang')?.status).toBe(0);
    await site.close(); // idempotent
    await expect(request(`${base}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('request log', () => {
  it('writes one JSON line per request with t, host, path, in_flight and status', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'testsite-'));
    try {
      const file = join(dir, 'requests.jsonl');
      const site = await startTestSite(
        { hosts: { 'a.test': { address: '127.0.0.2', latency_ms: { base: 100 }, statuses: { '503': 0.5 } } }, seed: 3 },
        { log: file, keepLog: true },
      );
      await Promise.all(Array.from({ length: 6 }, (_, i) => get(`${site.hosts['a.test']}/page/${i + 1}?n=${i}`)));
      await get(`${site.hosts['a.test']}/missing`);
      await site.close();
      const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
      expect(lines).toHaveLength(7);
      const entries = lines.map((l) => JSON.parse(l));
      expect(entries).toEqual(site.log);
      for (const e of entries) {
        expect(Object.keys(e)).toEqual(['t', 'host', 'path', 'in_flight', 'status']);
        expect(e.t).toBeGreaterThan(0);
        expect(Math.round(e.t * 1000) / 1000).toBe(e.t);
        expect(e.host).toBe('a.test');
      }
      expect(entries.slice(0, 6).map((e) => e.in_flight).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(new Set(entries.slice(0, 6).map((e) => e.status))).toEqual(new Set([200, 503]));
      expect(entries.slice(0, 6).map((e) => e.path).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `/page/${i + 1}?n=${i}`));
      expect(entries[6]).toMatchObject({ path: '/missing', in_flight: 1, status: 404 });
      // t is the arrival time: the concurrent six arrived before the last one, within a few ms.
      expect(entries[6].t).toBeGreaterThan(Math.max(...entries.slice(0, 6).map((e) => e.t)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects at start when the log file cannot be created', async () => {
    await expect(startTestSite({ hosts: { 'a.test': {} } }, { log: '/nonexistent-dir/x/requests.jsonl' })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
