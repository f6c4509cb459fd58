// The frontier in a real crawl: follow scopes (host, registrable domain, any, none), depth and
// page limits, include/exclude, de-duplication, canonical URLs and seed lists with bad lines.

import { describe, expect, it } from 'vitest';
import { pageLinks, pagePath, type TestSite } from '../../electron/core/testsite';
import { Crawler } from '../../electron/core/engine/crawler';
import type { CrawlRequest } from '../../electron/core/engine/request';
import type { FrontierSink } from '../../electron/core/engine/resume';
import type { EventRecord } from '../../shared/types';
import { arrivals, crawl, crawlConfig, defer, linkHub, pathCounts, pathOf, site } from './helpers';

// Loopback addresses of this file: 127.0.12.x.

const FAST = { CONCURRENT_REQUESTS_PER_DOMAIN: 4, DOWNLOAD_DELAY: 0 };

/** Pages reachable from `/` through links whose path passes `allow`, with their link distance. */
function reachable(pages: number, allow: (path: string) => boolean = () => true, maxDepth = Infinity): Map<string, number> {
  const depth = new Map<number, number>([[0, 0]]);
  const queue = [0];
  while (queue.length > 0) {
    const i = queue.shift()!;
    const d = depth.get(i)!;
    if (d >= maxDepth) continue;
    for (const j of pageLinks(i, pages)) {
      if (depth.has(j) || !allow(pagePath(j))) continue;
      depth.set(j, d + 1);
      queue.push(j);
    }
  }
  return new Map([...depth].map(([i, d]) => [pagePath(i), d]));
}

/** Page paths (robots.txt left out) the site served to `host`. */
function served(s: TestSite, host: string): string[] {
  return arrivals(s, host, { robots: false }).map((e) => e.path);
}

describe('follow scope', () => {
  // a.site.test and b.site.test share the registrable domain site.test; www.other.test does not.
  // The test site only links within a host, so a small hub page (hub.site.test) links across hosts.
  async function world() {
    const s = await site({
      hosts: {
        'a.site.test': { address: '127.0.12.1', pages: 8 },
        'b.site.test': { address: '127.0.12.2', pages: 5 },
        'www.other.test': { address: '127.0.12.3', pages: 4 },
      },
    });
    const links = [`${s.origin('a.site.test')}/page/5`, `${s.origin('b.site.test')}/`, `${s.origin('www.other.test')}/`];
    const hub = await linkHub('127.0.12.9', {
      '/': `<!doctype html><html><body>${links.map((l) => `<a href="${l}">x</a>`).join('\n')}</body></html>`,
    });
    const hubUrl = `http://hub.site.test:${hub.port}/`;
    const resolve = { ...s.resolve, 'hub.site.test': '127.0.12.9' };
    return { s, hub, hubUrl, resolve };
  }

  it('host: follows links only to the seeds\' hosts', async () => {
    const { s, hub, hubUrl, resolve } = await world();
    const { stats } = await crawl(
      crawlConfig({ seeds: [hubUrl, `${s.origin('a.site.test')}/`], follow: { scope: 'host' }, settings: FAST, resolve }),
    );
    expect(stats.status).toBe('finished');
    expect(hub.served).toContain('/');
    expect(new Set(served(s, 'a.site.test'))).toEqual(new Set(reachable(8).keys()));
    expect(arrivals(s, 'b.site.test')).toEqual([]);
    expect(arrivals(s, 'www.other.test')).toEqual([]);
  });

  it('domain: follows links to every host of the seeds\' registrable domain', async () => {
    const { s, hubUrl, resolve } = await world();
    const { stats } = await crawl(crawlConfig({ seeds: [hubUrl], follow: { scope: 'domain' }, settings: FAST, resolve }));
    expect(stats.status).toBe('finished');
    expect(new Set(served(s, 'a.site.test'))).toEqual(new Set(reachable(8).keys()));
    expect(new Set(served(s, 'b.site.test'))).toEqual(new Set(reachable(5).keys()));
    expect(arrivals(s, 'www.other.test')).toEqual([]);
  });

  it('any: follows links to every host', async () => {
    const { s, hubUrl, resolve } = await world();
    const { stats } = await crawl(crawlConfig({ seeds: [hubUrl], follow: { scope: 'any' }, settings: FAST, resolve }));
    expect(stats.status).toBe('finished');
    expect(new Set(served(s, 'a.site.test'))).toEqual(new Set(reachable(8).keys()));
    expect(new Set(served(s, 'b.site.test'))).toEqual(new Set(reachable(5).keys()));
    expect(new Set(served(s, 'www.other.test'))).toEqual(new Set(reachable(4).keys()));
  });

  it('none: fetches the seeds only', async () => {
    const { s, hub, hubUrl, resolve } = await world();
    const { stats } = await crawl(
      crawlConfig({ seeds: [hubUrl, `${s.origin('a.site.test')}/page/2`], follow: { scope: 'none' }, settings: FAST, resolve }),
    );
    expect(stats.status).toBe('finished');
    expect(hub.served.filter((p) => p !== '/robots.txt')).toEqual(['/']);
    expect(served(s, 'a.site.test')).toEqual(['/page/2']);
    expect(arrivals(s, 'b.site.test')).toEqual([]);
    expect(arrivals(s, 'www.other.test')).toEqual([]);
  });
});

describe('limits and filters', () => {
  it('max_depth: stops at the given link distance from the seeds and records each page\'s depth', async () => {
    const s = await site({ hosts: { 'deep.test': { address: '127.0.12.20', pages: 60 } } });
    // One lane: breadth-first order, so each page is first found at its shortest distance.
    const { records, stats } = await crawl(
      crawlConfig({
        seeds: [`${s.origin('deep.test')}/`],
        follow: { scope: 'host', max_depth: 2 },
        settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 1, DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false },
        resolve: s.resolve,
      }),
    );
    expect(stats.status).toBe('finished');
    const expected = reachable(60, () => true, 2);
    expect(expected.size).toBeLessThan(60); // the limit cuts the tree
    expect(new Set(served(s, 'deep.test'))).toEqual(new Set(expected.keys()));
    for (const r of records) expect([pathOf(r.url), r.depth]).toEqual([pathOf(r.url), expected.get(pathOf(r.url))]);
  });

  it('max_pages: requests exactly that many pages (robots.txt not counted)', async () => {
    const s = await site({ hosts: { 'many.test': { address: '127.0.12.21', pages: 50 } } });
    const { stats } = await crawl(
      crawlConfig({ seeds: [`${s.origin('many.test')}/`], follow: { max_pages: 7 }, settings: FAST, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    expect(served(s, 'many.test')).toHaveLength(7);
    expect(arrivals(s, 'many.test').filter((e) => e.path === '/robots.txt')).toHaveLength(1);
    expect(stats.requests).toBe(8);
  });

  it('include/exclude: follows only links matching include and not exclude', async () => {
    const s = await site({ hosts: { 'filter.test': { address: '127.0.12.22', pages: 60 } } });
    const include = ['/page/'];
    const exclude = ['/page/\\d*[13579]$'];
    const { stats } = await crawl(
      crawlConfig({ seeds: [`${s.origin('filter.test')}/`], follow: { include, exclude }, settings: FAST, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const inc = include.map((r) => new RegExp(r));
    const exc = exclude.map((r) => new RegExp(r));
    const expected = reachable(60, (p) => inc.some((r) => r.test(p)) && !exc.some((r) => r.test(p)));
    expect(expected.size).toBeGreaterThan(3);
    expect(expected.size).toBeLessThan(30);
    const got = served(s, 'filter.test');
    expect(new Set(got)).toEqual(new Set(expected.keys()));
    expect(got.filter((p) => /[13579]$/.test(p))).toEqual([]);
  });
});

describe('de-duplication and canonical URLs', () => {
  it('fetches every URL once, though every page links home and its neighbours', async () => {
    const s = await site({ hosts: { 'dup.test': { address: '127.0.12.30', pages: 40 } } });
    const { stats } = await crawl(
      crawlConfig({ seeds: [`${s.origin('dup.test')}/`, `${s.origin('dup.test')}/`, `${s.origin('dup.test')}/page/1`], settings: { ...FAST, CONCURRENT_REQUESTS_PER_DOMAIN: 6 }, resolve: s.resolve }),
    );
    expect(stats.status).toBe('finished');
    const counts = pathCounts(s).get('dup.test')!;
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(counts.keys())).toEqual(new Set(['/robots.txt', ...reachable(40).keys()]));
    expect(stats.requests).toBe(41);
  });

  it('treats URLs differing only by fragment, query order or host case as one', async () => {
    // Four pages: the seeds' own links stay among /, /page/1-3; /page/4 and /page/5 (404s, still
    // logged) are reachable only through the hub's variant links.
    const s = await site({ hosts: { 'canon.test': { address: '127.0.12.31', pages: 4 } } });
    const o = s.origin('canon.test');
    const port = new URL(o).port;
    // Links from a hub page, and seeds, with the same variations.
    const hub = await linkHub('127.0.12.39', {
      '/': [
        `<a href="${o}/page/4#top">a</a>`,
        `<a href="${o}/page/4">b</a>`,
        `<a href="${o}/page/5?y=1&x=2">c</a>`,
        `<a href="${o}/page/5?x=2&y=1#frag">d</a>`,
        `<a href="http://CANON.TEST:${port}/page/4">e</a>`,
      ].join('\n'),
    });
    const { stats } = await crawl(
      crawlConfig({
        seeds: [
          `${o}/page/1?b=2&a=1#frag`,
          `${o}/page/1?a=1&b=2`,
          `${o}/page/2#x`,
          `${o}/page/2`,
          `http://CANON.TEST:${port}/page/3`,
          `${o}/page/3`,
          `http://hub.canon.test:${hub.port}/`,
        ],
        follow: { scope: 'any', max_depth: 1, exclude: ['canon\\.test:\\d+/$'] },
        settings: FAST,
        resolve: { ...s.resolve, 'hub.canon.test': '127.0.12.39' },
      }),
    );
    expect(stats.status).toBe('finished');
    const counts = pathCounts(s).get('canon.test')!;
    counts.delete('/robots.txt');
    // Each page once, sent as it was first given (query order kept; only the fragment dropped).
    expect(Object.fromEntries(counts)).toEqual({ '/page/1?b=2&a=1': 1, '/page/2': 1, '/page/3': 1, '/page/4': 1, '/page/5?y=1&x=2': 1 });
  });

  it('reports bad seed lines by number and crawls the others', async () => {
    const s = await site({ hosts: { 'seeds.test': { address: '127.0.12.40', pages: 4 } } });
    const o = s.origin('seeds.test');
    const text = [`${o}/page/1`, 'not a url', 'ftp://files.example/x', '', '# a comment', `${o}/page/2`, 'http://'].join('\n');
    const config = crawlConfig({ follow: { scope: 'none' }, settings: FAST, resolve: s.resolve }, text);
    expect(config.seedErrors.map((e) => e.line)).toEqual([2, 3, 7]);
    expect(config.seeds).toHaveLength(2);
    const { events, stats } = await crawl(config);
    expect(stats.status).toBe('finished');
    const warnings = events.filter((e) => e.kind === 'warning' && e.code === 'seed-line');
    expect(warnings).toHaveLength(3);
    for (const [i, line] of [2, 3, 7].entries()) expect(warnings[i].text).toMatch(new RegExp(`\\bline ${line}\\b`));
    expect(warnings[0].text).toContain('not a url');
    expect(new Set(served(s, 'seeds.test'))).toEqual(new Set(['/page/1', '/page/2']));
  });

  it('numbers bad lines of a seeds text by their line in that text, also when the config lists seeds too', async () => {
    const s = await site({ hosts: { 'seeds2.test': { address: '127.0.12.41', pages: 4 } } });
    const o = s.origin('seeds2.test');
    // The config's own seeds plus a seeds file (the CLI's --seeds) whose line 2 is bad.
    const config = crawlConfig({ seeds: [`${o}/page/1`, `${o}/page/2`], follow: { scope: 'none' }, settings: FAST, resolve: s.resolve }, `${o}/page/3\nnot a url\n`);
    expect(config.seedErrors).toHaveLength(1);
    expect(config.seedErrors[0].text).toBe('not a url');
    expect(config.seedErrors[0].line).toBe(2);
    const { stats } = await crawl(config);
    expect(stats.status).toBe('finished');
    expect(new Set(served(s, 'seeds2.test'))).toEqual(new Set(['/page/1', '/page/2', '/page/3']));
  });
});

describe('long seed lists', () => {
  const SEEDS = 2500; // more than one intake chunk (1,000 seeds a turn)

  /** A crawler over SEEDS seeds of one host, its frontier sink recording what was queued and finished. */
  async function longList(address: string) {
    const s = await site({ hosts: { 'long.test': { address, pages: SEEDS + 1 } } });
    const o = s.origin('long.test');
    const seeds = Array.from({ length: SEEDS }, (_, i) => `${o}/page/${i + 1}`);
    const config = crawlConfig({ seeds, follow: { scope: 'none' }, settings: { ...FAST, CONCURRENT_REQUESTS_PER_DOMAIN: 8, ROBOTSTXT_OBEY: false }, resolve: s.resolve });
    const queued: CrawlRequest[] = [];
    const done = new Set<number>();
    const events: EventRecord[] = [];
    const sink: FrontierSink = { queued: (r) => queued.push(r), started: () => undefined, requeued: () => undefined, done: (r) => done.add(r.seq!) };
    const crawler = new Crawler({ config, sinks: { onFrontier: sink, onEvent: (e) => events.push(e) } });
    defer(() => crawler.close());
    return { s, config, crawler, queued, done, events };
  }

  const turn = () => new Promise<void>((r) => setImmediate(r));

  it('queues a chunk per event-loop turn: requests start before the last seed is queued, and every seed is fetched once', async () => {
    const { s, crawler, queued } = await longList('127.0.12.50');
    crawler.start();
    // start() returned after the first chunk, counting the rest as queued.
    expect(queued.length).toBe(1000);
    expect(crawler.stats().queued).toBe(SEEDS);
    await turn();
    expect(crawler.stats().inFlight).toBeGreaterThan(0);
    expect(queued.length).toBeLessThan(SEEDS);
    const stats = await crawler.done;
    expect(stats.status).toBe('finished');
    expect(queued.map((r) => r.seq)).toEqual(Array.from({ length: SEEDS }, (_, i) => i)); // acceptance order = seed order
    const counts = pathCounts(s).get('long.test')!;
    expect(counts.size).toBe(SEEDS);
    expect(Math.max(...counts.values())).toBe(1);
  });

  it('stopped during intake: queues no more seeds, counts them as dropped; resumed, fetches each seed never fetched once', async () => {
    const a = await longList('127.0.12.51');
    a.crawler.start();
    await turn();
    const stopped = await a.crawler.stop();
    expect(stopped.status).toBe('stopped');
    expect(stopped.queued).toBe(0);
    const accepted = a.queued.length;
    expect(accepted).toBeLessThan(SEEDS);
    const note = a.events.find((e) => e.code === 'stopped-queue');
    expect(note?.text).toMatch(/crawl stopped with \d+ requests still queued/);
    expect(Number(/with (\d+)/.exec(note!.text)![1])).toBeGreaterThan(SEEDS - accepted);
    await turn();
    await turn();
    expect(a.queued.length).toBe(accepted); // intake ended with the stop

    // What the history would hand back: every accepted URL seen, those not done pending.
    const b = new Crawler({ config: a.config, sinks: { onFrontier: { queued: (r) => a.queued.push(r), started: () => undefined, requeued: () => undefined, done: () => undefined } } });
    defer(() => b.close());
    const pending = a.queued.filter((r) => !a.done.has(r.seq!))
      .map((r) => ({ seq: r.seq!, url: r.url, depth: r.depth, priority: r.priority, redirects: r.redirects, retries: r.retries, meta: {} }));
    b.startFrom({
      seen: a.queued.map((r) => r.url), pending, givenUp: [], wasInFlight: 0, accepted, nextSeq: accepted, slots: [],
      totals: { requests: stopped.requests, responses: stopped.responses, failures: stopped.failures, bytes: stopped.bytes, byStatus: stopped.byStatus },
      startedAt: stopped.startedAt,
    });
    expect((await b.done).status).toBe('finished');
    // The seeds the stopped run never queued were queued now, after the pending ones, and numbered on.
    expect(a.queued.slice(accepted).map((r) => r.seq)).toEqual(Array.from({ length: SEEDS - accepted }, (_, i) => accepted + i));
    const counts = pathCounts(a.s).get('long.test')!;
    expect(counts.size).toBe(SEEDS);
    // In flight at the stop (at most CONCURRENT_REQUESTS_PER_DOMAIN, 8): fetched at most twice; every other seed once.
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    expect([...counts.values()].filter((n) => n === 2).length).toBeLessThanOrEqual(8);
  });
});
