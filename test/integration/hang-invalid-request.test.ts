// Issue 15, "Silent loss and hangs" item 2: a request the HTTP client refuses to start (a
// User-Agent it cannot send, a timeout it cannot arm) was never completed: undici rejects it
// synchronously, the crawler's callback read its handle before it was set, and the request
// stayed "in flight" forever, wedging its slot and the crawl. Now such values are refused by the
// schema (also live), and any request that fails to start is a recorded failure.

// Loopback addresses of this file: 127.0.47.x.

import { describe, expect, it } from 'vitest';
import { createRealClock } from '../../electron/core/clock';
import { Downloader, START_FAILURE_KIND, type DownloadResult } from '../../electron/core/engine/downloader';
import { parseSettings, type Settings } from '../../shared/settings';
import { crawlConfig, defer, launch, linkHub, waitFor } from './helpers';

/** A home page linking to `n` pages, each a leaf. */
function pages(n: number): Record<string, string> {
  const out: Record<string, string> = {};
  out['/'] = `<html><body>${Array.from({ length: n }, (_, i) => `<a href="/p${i}">p${i}</a>`).join(' ')}</body></html>`;
  for (let i = 0; i < n; i++) out[`/p${i}`] = `<html><body>page ${i}</body></html>`;
  return out;
}

const BASE = { ROBOTSTXT_OBEY: false, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2 };

describe('live settings the HTTP client cannot send are refused, and the crawl goes on', () => {
  it.each([
    ['USER_AGENT', 'Bot\u0100/1.0', /U\+00FF/],
    ['USER_AGENT', 'Bot\u0000/1.0', /U\+00FF/],
    ['USER_AGENT', 'Bot/1.0\r\nX-Evil: 1', /U\+00FF/],
    ['DOWNLOAD_TIMEOUT', 1.8e305, /<= 86400/],
  ])('%s = %j sent to a running crawl is refused naming the field, the value and what is allowed', async (name, value, allowed) => {
    const hub = await linkHub('127.0.47.1', pages(8));
    const run = launch(crawlConfig({
      seeds: [`http://127.0.47.1:${hub.port}/`],
      settings: { ...BASE, DOWNLOAD_DELAY: 0.05 },
    }), { limitMs: 10_000 });
    await waitFor(() => run.records.length >= 1, 'the first response');
    const r = run.crawler.updateSettings({ [name]: value });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].setting).toBe(name);
    expect(r.errors[0].value).toBe(value);
    expect(r.errors[0].allowed).toMatch(allowed);
    expect(r.errors[0].message.startsWith(`${name}: `)).toBe(true);
    // Nothing of it applied: the crawl finishes with every page fetched.
    const stats = await run.done;
    expect(stats.status).toBe('finished');
    expect(stats.failures).toBe(0);
    expect(run.records.filter((x) => x.status === 200)).toHaveLength(9);
    expect(run.changes.filter((c) => c.setting === name)).toEqual([]);
  });
});

describe('a request that fails to start is a recorded failure', () => {
  it('a crawl whose every request is refused by the HTTP client finishes, with each request recorded as failed', async () => {
    const hub = await linkHub('127.0.47.2', pages(0));
    const seeds = ['/', '/a', '/b'].map((p) => `http://127.0.47.2:${hub.port}${p}`);
    const config = crawlConfig({ seeds, settings: { ...BASE, DOWNLOAD_DELAY: 0 } });
    // Built by hand: the schema refuses this value, but it stands for any request undici refuses.
    const settings: Settings = { ...config.settings, USER_AGENT: 'Bot\u0100/1.0' };
    const run = launch({ ...config, settings }, { limitMs: 5_000 });
    const stats = await run.done;
    expect(stats.status).toBe('finished');
    expect(stats.inFlight).toBe(0);
    // Every attempt (however many the retry policy makes) is one recorded failure.
    expect(stats.requests).toBe(run.records.length);
    expect(stats.failures).toBe(run.records.length);
    expect(hub.served).toEqual([]);
    expect([...new Set(run.records.map((r) => r.url))].sort()).toEqual([...seeds].sort());
    for (const r of run.records) {
      expect(r.status).toBe(null);
      expect(r.errorKind).toBe(START_FAILURE_KIND);
      expect(r.errorMessage).toMatch(/^request not started: invalid user-agent header/);
    }
    expect(run.events.filter((e) => e.kind === 'error' && e.code === START_FAILURE_KIND)).toHaveLength(run.records.length);
  });

  it('a slot whose requests fail to start mid-crawl is not wedged: once the cause is gone, the rest is fetched', async () => {
    const hub = await linkHub('127.0.47.3', pages(10));
    let broke = false;
    let restored = false;
    const run = launch(crawlConfig({
      seeds: [`http://127.0.47.3:${hub.port}/`],
      settings: { ...BASE, DOWNLOAD_DELAY: 0.02 },
    }), {
      limitMs: 10_000,
      onResponse: (r, run) => {
        const dl = (run.crawler as unknown as { downloader: Downloader }).downloader;
        if (!broke && r.status === 200) {
          broke = true;
          dl.setUserAgent('Bot\u0000');
        } else if (!restored && run.records.filter((x) => x.errorKind !== null).length >= 2) {
          restored = true;
          dl.setUserAgent('Bot/1.0');
        }
      },
    });
    const stats = await run.done;
    expect(restored).toBe(true);
    expect(stats.status).toBe('finished');
    expect(stats.inFlight).toBe(0);
    const failed = run.records.filter((r) => r.errorKind !== null);
    const fetched = run.records.filter((r) => r.status === 200);
    expect(stats.requests).toBe(run.records.length);
    expect(stats.failures).toBe(failed.length);
    expect(failed.length).toBeGreaterThanOrEqual(2);
    for (const r of failed) expect(r.errorMessage).toMatch(/^request not started: invalid user-agent header/);
    expect(failed.length + fetched.length).toBe(run.records.length);
    // Requests after the restore went out (the slot and its connections were not left wedged),
    // and every page was tried.
    expect(hub.served.length).toBe(fetched.length);
    expect(fetched.length).toBeGreaterThan(1);
    expect(new Set(run.records.map((r) => r.url)).size).toBe(11);
  });
});

describe('the downloader, called directly with values undici refuses', () => {
  async function fetchOnce(userAgent: string, timeout: number, port: number): Promise<{ res: DownloadResult; calls: number; sync: boolean }> {
    const dl = new Downloader({ clock: createRealClock(), userAgent });
    defer(() => dl.close());
    let calls = 0;
    let returned = false;
    let sync = false;
    const res = await new Promise<DownloadResult>((resolve) => {
      dl.fetch({ origin: `http://127.0.47.4:${port}`, path: '/', method: 'GET', timeout, maxSize: 0, keepBody: false }, (r) => {
        calls++;
        if (!returned) sync = true;
        resolve(r);
      });
      returned = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    return { res, calls, sync };
  }

  it.each([
    ['a header value with CR LF', 'Bot\r\nX-Evil: 1', 180, /user-agent/],
    ['a header value above U+00FF', 'Bot\u0100', 180, /user-agent/],
    ['a timeout undici cannot arm', 'Bot/1.0', 1.8e305, /timeout/i],
  ])('%s: the callback runs once, after fetch returns, with a start failure', async (_what, ua, timeout, message) => {
    const hub = await linkHub('127.0.47.4', pages(0));
    const { res, calls, sync } = await fetchOnce(ua, timeout, hub.port);
    expect(calls).toBe(1);
    expect(sync).toBe(false);
    expect(res.status).toBe(null);
    expect(res.errorKind).toBe(START_FAILURE_KIND);
    expect(res.errorMessage).toMatch(/^request not started: /);
    expect(res.errorMessage).toMatch(message);
    expect(hub.served).toEqual([]);
  });

  it('a refusal undici makes for a reason not checked beforehand does not leave the origin\'s connection wedged', async () => {
    const hub = await linkHub('127.0.47.5', pages(0));
    const dl = new Downloader({ clock: createRealClock(), userAgent: 'Bot/1.0', connectionsPerOrigin: 1 });
    defer(() => dl.close());
    // Stands for any request undici refuses synchronously: its pool then marks the connection
    // it picked as busy for good (undici 7), and with one connection per origin nothing else
    // would go out.
    const agent = dl.agent;
    const dispatch = agent.dispatch.bind(agent);
    let poison = true;
    agent.dispatch = ((opts: Parameters<typeof dispatch>[0], handler: Parameters<typeof dispatch>[1]) =>
      dispatch(poison ? { ...opts, headersTimeout: -1 } : opts, handler)) as typeof agent.dispatch;
    const get = (path: string) => new Promise<DownloadResult>((resolve) =>
      dl.fetch({ origin: `http://127.0.47.5:${hub.port}`, path, method: 'GET', timeout: 5, maxSize: 0, keepBody: false }, resolve));
    const first = await get('/');
    expect(first.status).toBe(null);
    expect(first.errorKind).toBe(START_FAILURE_KIND);
    expect(first.errorMessage).toBe('request not started: invalid headersTimeout');
    poison = false;
    const second = await get('/');
    expect(second.errorMessage).toBe(null);
    expect(second.status).toBe(200);
    expect(hub.served).toEqual(['/']);
  });

  it('a good request on the same server is fetched (the failures above are the values, not the server)', async () => {
    const hub = await linkHub('127.0.47.4', pages(0));
    const { res, calls } = await fetchOnce(parseSettings({}).USER_AGENT, 180, hub.port);
    expect(calls).toBe(1);
    expect(res.status).toBe(200);
    expect(hub.served).toEqual(['/']);
  });
});
