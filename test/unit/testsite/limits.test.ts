// Checks the test site's per-host limits over real HTTP: rate-limit headers, Retry-After as an
// HTTP date, Retry-After blocks (announced and enforced), cost quotas and soft blocks.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SOFT_BLOCK_BODY } from '../../../electron/core/testsite';
import { get, sleep, start, type Fetched } from './site-helpers';


async function inOrder(base: string, paths: readonly string[]): Promise<Fetched[]> {
  const out: Fetched[] = [];
  for (const p of paths) out.push(await get(base + p));
  return out;
}

const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

describe('rate_limit.retry_after_format', () => {
  it('sends Retry-After as an IMF-fixdate: now + retry_after, rounded up to the second', async () => {
    const site = await start({
      hosts: { 'd.test': { address: '127.0.0.2', rate_limit: { requests: 1, per_seconds: 5, retry_after: 3, retry_after_format: 'http-date' } } },
    });
    const base = site.hosts['d.test'];
    expect((await get(`${base}/`)).status).toBe(200);
    const before = Date.now();
    const refused = await get(`${base}/page/1`);
    const after = Date.now();
    expect(refused.status).toBe(429);
    const value = refused.headers['retry-after'] as string;
    expect(value).toMatch(IMF_FIXDATE);
    const date = Date.parse(value);
    expect(date % 1000).toBe(0);
    expect(date).toBeGreaterThanOrEqual(before + 3000); // never earlier than the real block
    expect(date).toBeLessThanOrEqual(Math.ceil((after + 3000) / 1000) * 1000);
    const [block] = site.blocks('d.test');
    expect(block.to - block.from).toBeCloseTo(3000, 6);
    expect(block.from).toBeGreaterThanOrEqual(site.log[1].t);
  });
});

describe('rate_limit.headers', () => {
  it('"ratelimit": Limit, Remaining and Reset (seconds until a slot frees) on admitted and refused answers', async () => {
    const site = await start({
      hosts: { 'r.test': { address: '127.0.0.2', rate_limit: { requests: 3, per_seconds: 2, retry_after: 1, headers: 'ratelimit' } } },
    });
    const base = site.hosts['r.test'];
    const got = await inOrder(base, ['/', '/page/1', '/missing', '/page/2']);
    expect(got.map((r) => r.status)).toEqual([200, 200, 404, 429]);
    expect(got.map((r) => r.headers['ratelimit-limit'])).toEqual(['3', '3', '3', '3']);
    expect(got.map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(got[0].headers['ratelimit-reset']).toBe('2'); // the window is 2 s and only this request is in it
    for (const r of got) expect(['1', '2']).toContain(r.headers['ratelimit-reset']);
    expect(got[3].headers['retry-after']).toBe('1');
    // robots.txt is outside the limit: neither counted nor labelled.
    const robots = await get(`${base}/robots.txt`);
    expect(robots.status).toBe(404);
    expect(robots.headers['ratelimit-limit']).toBeUndefined();
  });

  it('counts Remaining over the sliding window as old arrivals leave it', async () => {
    const site = await start({ hosts: { 's.test': { address: '127.0.0.2', rate_limit: { requests: 3, per_seconds: 0.3, headers: 'ratelimit' } } } });
    const base = site.hosts['s.test'];
    const remaining = async (): Promise<string> => (await get(`${base}/`)).headers['ratelimit-remaining'] as string;
    expect([await remaining(), await remaining()]).toEqual(['2', '1']);
    await sleep(350);
    const fresh = await get(`${base}/`);
    expect(fresh.headers['ratelimit-remaining']).toBe('2');
    expect(fresh.headers['ratelimit-reset']).toBe('1');
    expect([await remaining(), await remaining(), await remaining()]).toEqual(['1', '0', '0']);
    expect(site.log.at(-1)!.status).toBe(429);
    await sleep(350); // the ring is full now: the oldest slot frees as the window slides
    expect(await remaining()).toBe('2');
  });

  it('"x-ratelimit": X-RateLimit-Limit, -Remaining and -Reset as epoch seconds, rounded up', async () => {
    const site = await start({
      hosts: { 'x.test': { address: '127.0.0.2', rate_limit: { requests: 2, per_seconds: 2, headers: 'x-ratelimit' }, headers: { 'X-Other': 'kept' } } },
    });
    const base = site.hosts['x.test'];
    const before = Date.now();
    const got = await inOrder(base, ['/', '/page/1', '/page/2']);
    const after = Date.now();
    expect(got.map((r) => r.status)).toEqual([200, 200, 429]);
    expect(got.map((r) => r.headers['x-ratelimit-limit'])).toEqual(['2', '2', '2']);
    expect(got.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['1', '0', '0']);
    for (const r of got) {
      const reset = Number(r.headers['x-ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(Math.ceil(before / 1000) + 1);
      expect(reset).toBeLessThanOrEqual(Math.ceil((after + 2000) / 1000));
      expect(r.headers['x-other']).toBe('kept');
      expect(r.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('Retry-After blocks', () => {
  it('lists each announced block; without block_while_retry_after the server still admits during one', async () => {
    const site = await start({ hosts: { 'p.test': { address: '127.0.0.2', rate_limit: { requests: 1, per_seconds: 0.1, retry_after: 1 } } } });
    const base = site.hosts['p.test'];
    expect(site.blocks('p.test')).toEqual([]);
    const got = await inOrder(base, ['/', '/page/1']);
    expect(got.map((r) => r.status)).toEqual([200, 429]);
    await sleep(150);
    expect((await get(`${base}/page/1`)).status).toBe(200); // window slid; the block is only announced
    const blocks = site.blocks('P.TEST');
    expect(blocks).toHaveLength(1);
    expect(blocks[0].to - blocks[0].from).toBeCloseTo(1000, 6);
    // What a test does with it: the third request arrived inside the block, so the client was impolite.
    const impolite = site.log.filter((e) => blocks.some((b) => e.t >= b.from && e.t < b.to));
    expect(impolite.map((e) => e.path)).toEqual(['/page/1']);
    expect(impolite[0].status).toBe(200);
    expect(impolite[0].blocked).toBeUndefined();
    expect(() => site.blocks('nope.test')).toThrow(/unknown host "nope.test"/);
  });

  it('with block_while_retry_after refuses every request during a block and logs it blocked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'testsite-'));
    try {
      const file = join(dir, 'requests.jsonl');
      const site = await start(
        {
          hosts: {
            'b.test': {
              address: '127.0.0.2',
              rate_limit: { requests: 2, per_seconds: 0.2, retry_after: 1, block_while_retry_after: true, headers: 'ratelimit' },
            },
          },
        },
        { keepLog: true, log: file },
      );
      const base = site.hosts['b.test'];
      const got = await inOrder(base, ['/', '/page/1', '/page/2']);
      expect(got.map((r) => r.status)).toEqual([200, 200, 429]);
      await sleep(250); // the window has slid, but the announced block (1 s) has not ended
      const blocked = await get(`${base}/page/3`);
      expect(blocked.status).toBe(429);
      expect(blocked.headers['retry-after']).toBe('1');
      expect(blocked.headers['ratelimit-remaining']).toBe('0');
      expect(['1', '2']).toContain(blocked.headers['ratelimit-reset']);
      expect(site.log.at(-1)).toMatchObject({ path: '/page/3', status: 429, blocked: true });
      expect(site.log.slice(0, 3).every((e) => e.blocked === undefined)).toBe(true);

      // Each refusal announced a block (the blocked one extends it); every blocked arrival lies in one.
      const blocks = site.blocks('b.test');
      expect(blocks).toHaveLength(2);
      for (const b of blocks) expect(b.to - b.from).toBeCloseTo(1000, 6);
      expect(blocks[0].from).toBeGreaterThanOrEqual(site.log[2].t);
      for (const e of site.log.filter((x) => x.blocked)) expect(blocks.some((b) => e.t >= b.from && e.t < b.to)).toBe(true);

      await sleep(blocks[1].to - site.log.at(-1)!.t + 50);
      const free = await get(`${base}/page/4`);
      expect(free.status).toBe(200);
      expect(site.log.at(-1)!.blocked).toBeUndefined();
      expect(site.log.at(-1)!.t).toBeGreaterThan(blocks[1].to);
      expect(site.log.filter((e) => e.blocked)).toHaveLength(1);

      await site.close();
      const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
      expect(lines.map((l) => JSON.parse(l))).toEqual(site.log);
      expect(lines[3]).toMatch(/,"status":429,"blocked":true\}$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('quota', () => {
  it('charges each request its cost, shows it, and refuses past the units until the next window', async () => {
    const site = await start({
      hosts: {
        'q.test': {
          address: '127.0.0.2',
          quota: { units: 10, per_seconds: 2, cost_header: 'X-Cost', costs: { '/page/1': 5, '/api/*': 3 } },
          robots: { disallow: ['/private/'] },
        },
      },
    });
    const base = site.hosts['q.test'];
    const got = await inOrder(base, ['/page/1', '/api/x', '/page/2', '/page/1', '/page/3', '/page/4']);
    // used: 5, 8, 9, (9+5 > 10: refused), 10, (10+1 > 10: refused)
    expect(got.map((r) => r.status)).toEqual([200, 404, 200, 429, 200, 429]);
    expect(got.map((r) => r.headers['x-cost'])).toEqual(['5', '3', '1', '5', '1', '1']);
    expect(got[0].headers['retry-after']).toBeUndefined();
    const refused = got[3];
    expect(refused.body.length).toBeLessThan(200);
    const robots = await get(`${base}/robots.txt`); // free and outside the quota
    expect(robots.status).toBe(200);
    expect(robots.headers['x-cost']).toBeUndefined();

    // Retry-After counts whole seconds up to the next window (which starts 2 s after the site).
    const blocks = site.blocks('q.test');
    expect(blocks).toHaveLength(2);
    for (const [i, b] of blocks.entries()) {
      const seconds = Number([refused, got[5]][i].headers['retry-after']);
      expect(seconds).toBe(Math.ceil((2000 - b.from) / 1000));
      expect(b.to - b.from).toBeCloseTo(seconds * 1000, 6);
      expect(b.to).toBeGreaterThanOrEqual(2000);
    }
    await sleep(2000 - site.log.at(-1)!.t + 30);
    const next = await get(`${base}/page/1`);
    expect(next.status).toBe(200);
    expect(next.headers['x-cost']).toBe('5');
  });

  it('matches exact paths before the longest prefix, ignores the query, and uses the configured status', async () => {
    const site = await start({
      hosts: {
        'c.test': {
          address: '127.0.0.2',
          quota: { units: 1000, cost_header: 'X-Cost', costs: { '/page/1': 5, '/api/*': 3, '/api/heavy/*': 7, '/free': 0 } },
        },
        'tight.test': { address: '127.0.0.3', quota: { units: 1, per_seconds: 60, status: 503 } },
      },
    });
    const paths = ['/', '/page/1', '/page/10', '/page/1?x=1', '/api/a', '/api/heavy/b', '/api/heavy', '/free'];
    const got = await inOrder(site.hosts['c.test'], paths);
    expect(got.map((r) => r.headers['x-cost'])).toEqual(['1', '5', '1', '5', '3', '7', '3', '0']);
    const tight = await inOrder(site.hosts['tight.test'], ['/', '/']);
    expect(tight.map((r) => r.status)).toEqual([200, 503]);
    expect(Number(tight[1].headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(tight[0].headers['x-cost']).toBeUndefined();
  });
});

describe('soft_block', () => {
  it('after N requests answers 200 with the constant body instead of the page', async () => {
    const site = await start({
      hosts: {
        's.test': {
          address: '127.0.0.2',
          soft_block: { after: 3, body: '<html>please slow down</html>' },
          headers: { 'X-Site': 's' },
          robots: { crawl_delay: 1 },
        },
      },
    });
    const base = site.hosts['s.test'];
    const got = await inOrder(base, ['/', '/page/1', '/page/2', '/page/3', '/', '/robots.txt']);
    expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(got.slice(0, 3).every((r) => r.text.includes('<title>s.test'))).toBe(true);
    expect(got[3].text).toBe('<html>please slow down</html>');
    expect(got[4].text).toBe('<html>please slow down</html>');
    expect(got[3].headers['content-type']).toBe('text/html; charset=utf-8');
    expect(got[3].headers['x-site']).toBe('s');
    expect(got[5].text).toContain('Crawl-delay: 1'); // robots.txt is never soft-blocked
    expect(site.log.map((e) => e.soft_blocked ?? false)).toEqual([false, false, false, true, true, false]);
  });

  it('with min_gap_ms punishes only requests that come too soon after the previous one', async () => {
    const site = await start({ hosts: { 'g.test': { address: '127.0.0.2', soft_block: { min_gap_ms: 120 } } } });
    const base = site.hosts['g.test'];
    const first = await get(`${base}/`);
    const rushed = await get(`${base}/page/1`);
    await sleep(160);
    const polite = await get(`${base}/page/2`);
    const both = await Promise.all([get(`${base}/page/3`), get(`${base}/page/4`)]);
    expect(first.text).toContain('<title>g.test home</title>');
    expect(rushed.status).toBe(200);
    expect(rushed.text).toBe(SOFT_BLOCK_BODY);
    expect(polite.text).toContain('<title>g.test page 2</title>');
    // polite → page/3 or page/4 came within a few ms of page/2 or of each other: both too soon.
    expect(both.every((r) => r.text === SOFT_BLOCK_BODY)).toBe(true);
    expect(site.log.filter((e) => e.soft_blocked).map((e) => e.path).sort()).toEqual(['/page/1', '/page/3', '/page/4']);
  });
});
