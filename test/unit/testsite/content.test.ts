// Checks what the test site serves: the linked page tree, page sizes, robots.txt, redirects,
// gzip, big bodies, extra headers and 404s, over real loopback HTTP.

import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageLinks, pagePath, startTestSite, type TestSite } from '../../../electron/core/testsite';
import { get, hrefs } from './site-helpers';

describe('test site content', () => {
  let site: TestSite;
  let base: string;

  beforeAll(async () => {
    site = await startTestSite(
      {
        hosts: {
          'alpha.test': {
            address: '127.0.0.2',
            pages: 200,
            page_bytes: 2000,
            robots: { crawl_delay: 2, disallow: ['/private/', '/tmp*.cgi$'] },
            headers: { Age: '100', 'X-Scenario': 7 },
            redirects: { '/old': '/page/1', '/moved': { to: 'http://beta.test/', status: 307 } },
            gzip: true,
            big: { '/big': 3_000_000 },
          },
          'raw.test': { address: '127.0.0.3', pages: 3, robots: { body: 'User-agent: *\nDisallow: /secret\n' } },
          'down.test': { address: '127.0.0.4', pages: 3, robots: { status: 500 } },
          'none.test': { address: '127.0.0.5', pages: 1, page_bytes: 10, headers: { 'content-type': 'text/plain' } },
        },
      },
      { keepLog: true },
    );
    base = site.hosts['alpha.test'];
  });
  afterAll(() => site.close());

  it('links all N pages: a breadth-first crawl from / reaches every one, at shallow depth', async () => {
    const seen = new Map<string, number>([['/', 0]]);
    let frontier = ['/'];
    while (frontier.length > 0) {
      const next: string[] = [];
      const pages = await Promise.all(frontier.map((p) => get(base + p)));
      pages.forEach((page, i) => {
        expect(page.status).toBe(200);
        for (const href of hrefs(page.text)) {
          const url = new URL(href, base + frontier[i]);
          expect(url.origin).toBe(base);
          if (url.pathname.startsWith('/private/')) continue; // robots-disallowed, as a polite crawler would
          if (!seen.has(url.pathname)) {
            seen.set(url.pathname, seen.get(frontier[i])! + 1);
            next.push(url.pathname);
          }
        }
      });
      frontier = next;
    }
    const expected = Array.from({ length: 200 }, (_, i) => pagePath(i));
    expect([...seen.keys()].sort()).toEqual(expected.sort());
    expect(Math.max(...seen.values())).toBeLessThanOrEqual(6);
  });

  it('serves the links pageLinks() describes, and a title naming host and page', async () => {
    const page = await get(`${base}/page/7`);
    expect(hrefs(page.text)).toEqual(pageLinks(7, 200).map(pagePath));
    expect(page.text).toContain('<title>alpha.test page 7</title>');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it('pads each page to page_bytes', async () => {
    for (const p of ['/', '/page/1', '/page/99', '/page/199']) {
      const page = await get(base + p);
      expect(page.body.length).toBe(2000);
      expect(Number(page.headers['content-length'])).toBe(2000);
    }
    // Markup alone is longer than 10 bytes: the page is as small as it can be, not truncated.
    const tiny = await get(`${site.hosts['none.test']}/`);
    expect(tiny.text).toMatch(/<\/html>\n$/);
    // A scenario header replaces the default of the same name rather than doubling it.
    expect(tiny.headers['content-type']).toBe('text/plain');
  });

  it('ignores query strings for routing and answers 404 elsewhere', async () => {
    const plain = await get(`${base}/page/3`);
    const query = await get(`${base}/page/3?utm=1&x=2`);
    expect(query.status).toBe(200);
    expect(query.text).toBe(plain.text);
    for (const p of ['/page/200', '/page/03', '/page/', '/page/x', '/nope', '/page/3/']) {
      expect((await get(base + p)).status, p).toBe(404);
    }
  });

  it('serves robots.txt from the scenario, with Crawl-delay and Disallow lines', async () => {
    const robots = await get(`${base}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(robots.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(robots.text).toBe('User-agent: *\nCrawl-delay: 2\nDisallow: /private/\nDisallow: /tmp*.cgi$\n');
    expect(robots.headers.age).toBeUndefined();
  });

  it('answers 200 under a disallowed prefix so a test can tell it was fetched, and links it from /', async () => {
    const home = await get(`${base}/`);
    expect(hrefs(home.text)).toContain('/private/');
    const hidden = await get(`${base}/private/x?y=1`);
    expect(hidden.status).toBe(200);
    expect(hidden.text).toContain('disallowed /private/x');
    expect((await get(`${base}/tmp/a.cgi`)).status).toBe(200);
    expect((await get(`${base}/tmp/a.cgix`)).status).toBe(404);
  });

  it('supports a raw robots body, a robots status, and no robots at all', async () => {
    const raw = await get(`${site.hosts['raw.test']}/robots.txt`);
    expect(raw.text).toBe('User-agent: *\nDisallow: /secret\n');
    expect((await get(`${site.hosts['raw.test']}/secret/1`)).status).toBe(200);
    const down = await get(`${site.hosts['down.test']}/robots.txt`);
    expect(down.status).toBe(500);
    expect((await get(`${site.hosts['none.test']}/robots.txt`)).status).toBe(404);
  });

  it('adds the scenario headers to page responses', async () => {
    const page = await get(`${base}/page/2`);
    expect(page.headers.age).toBe('100');
    expect(page.headers['x-scenario']).toBe('7');
    expect(page.headers.connection).toBe('keep-alive');
  });

  it('redirects with 301 by default, or the given status', async () => {
    const old = await get(`${base}/old?q=1`);
    expect(old.status).toBe(301);
    expect(old.headers.location).toBe('/page/1');
    const moved = await get(`${base}/moved`);
    expect(moved.status).toBe(307);
    expect(moved.headers.location).toBe('http://beta.test/');
  });

  it('gzips page bodies only when the request accepts gzip', async () => {
    const plain = await get(`${base}/page/5`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const zipped = await get(`${base}/page/5`, { headers: { 'accept-encoding': 'br, gzip;q=0.9' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(plain.body.length);
    expect(gunzipSync(zipped.body).toString()).toBe(plain.text);
  });

  it('streams the big path with its full length', async () => {
    const big = await get(`${base}/big`);
    expect(big.status).toBe(200);
    expect(big.headers['content-length']).toBe('3000000');
    expect(big.body.length).toBe(3_000_000);
    const head = await get(`${base}/big`, { method: 'HEAD' });
    expect(head.headers['content-length']).toBe('3000000');
    expect(head.body.length).toBe(0);
  });

  it('answers 404 to an unknown Host and logs that host', async () => {
    const res = await get(`${base}/page/1`, { headers: { host: 'Nobody.Test:81' } });
    expect(res.status).toBe(404);
    expect(site.log.some((e) => e.host === 'nobody.test' && e.path === '/page/1' && e.status === 404)).toBe(true);
  });
});
