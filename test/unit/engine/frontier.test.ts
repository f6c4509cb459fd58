// URL canonicalisation, seed lists with per-line errors, follow rules and link extraction.
import { describe, expect, it } from 'vitest';
import { canonicalizeUrl, Frontier, Interner, parseSeedList, registrableDomain } from '../../../electron/core/engine/frontier';
import { extractLinks } from '../../../electron/core/engine/links';
import { parseCrawlConfig } from '../../../electron/core/engine/crawl-config';

describe('frontier', () => {
  it('canonicalises scheme, host, default port, fragment and query order', () => {
    expect(canonicalizeUrl('HTTP://Example.COM:80/a?b=2&a=1#frag')!.href).toBe('http://example.com/a?a=1&b=2');
    expect(canonicalizeUrl('https://example.com')!.href).toBe('https://example.com/');
    expect(canonicalizeUrl('https://example.com/?')!.href).toBe('https://example.com/');
    expect(canonicalizeUrl('ftp://example.com/')).toBeNull();
    expect(canonicalizeUrl('/rel', 'http://a.test/x/y')!.href).toBe('http://a.test/rel');
  });

  it('reports bad seed lines by number and keeps the rest', () => {
    const r = parseSeedList('http://a.test/\n\n# comment\nnot a url\nftp://x.test/\n  https://b.test/x  \n');
    expect(r.urls).toEqual(['http://a.test/', 'https://b.test/x']);
    expect(r.errors.map((e) => [e.line, e.text])).toEqual([[4, 'not a url'], [5, 'ftp://x.test/']]);
    expect(r.errors[1].message).toMatch(/unsupported scheme "ftp:"/);
  });

  it('de-duplicates and follows by host, domain, any and none', () => {
    const mk = (scope: 'host' | 'domain' | 'any' | 'none') => {
      const f = new Frontier({ scope, maxDepth: 2, maxPages: Infinity, include: [], exclude: [/\/skip\//] });
      f.addSeedHost('www.site.test');
      return f;
    };
    const same = new URL('http://www.site.test/a');
    const sibling = new URL('http://blog.site.test/a');
    const other = new URL('http://else.test/a');
    expect([mk('host').allowsLink(same, 1), mk('host').allowsLink(sibling, 1)]).toEqual([true, false]);
    expect([mk('domain').allowsLink(sibling, 1), mk('domain').allowsLink(other, 1)]).toEqual([true, false]);
    expect(mk('any').allowsLink(other, 1)).toBe(true);
    expect(mk('none').allowsLink(same, 1)).toBe(false);
    expect(mk('host').allowsLink(same, 3)).toBe(false);
    expect(mk('any').allowsLink(new URL('http://else.test/skip/1'), 1)).toBe(false);
    const f = mk('host');
    expect(f.markSeen('http://www.site.test/a')).toBe(true);
    expect(f.markSeen('http://www.site.test/a')).toBe(false);
    expect(registrableDomain('a.b.example.co.uk')).toBe('example.co.uk');
    expect(registrableDomain('127.0.0.2')).toBe('127.0.0.2');
  });

  it('extracts links, honouring <base> and nofollow, skipping javascript: and mailto:', () => {
    const html = `<html><head><base href="/dir/"></head><body>
      <a href="page1">1</a><A HREF="/abs">2</A><a href="http://x.test/">3</a><a href="#top">t</a>
      <a href="javascript:void(0)">j</a><a href="mailto:a@b">m</a><a rel="nofollow" href="/nf">nf</a>
      <area href="/area"><a href="/q?x=1&amp;y=2">q</a></body></html>`;
    expect(extractLinks(html, 'http://a.test/start/index.html')).toEqual([
      'http://a.test/dir/page1', 'http://a.test/abs', 'http://x.test/', 'http://a.test/area', 'http://a.test/q?x=1&y=2',
    ]);
  });

  it('validates a crawl config whole, naming each bad field', () => {
    const r = parseCrawlConfig({ name: 'x', seeds: ['http://a.test/', 'bad line'], follow: { scope: 'site', max_depth: -1, include: '(' },
      settings: { DOWNLOAD_DELAY: -2 }, resolve: { 'a.test': 'nope' }, extra: 1 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const msgs = r.errors.map((e) => e.message).join('\n');
    expect(msgs).toMatch(/extra: 1 is not allowed \(unknown field/);
    expect(msgs).toMatch(/follow.scope: "site" is not allowed \(one of host, domain, any, none\)/);
    expect(msgs).toMatch(/follow.max_depth: -1 is not allowed \(a whole number >= 0\)/);
    expect(msgs).toMatch(/follow.include\[0\]: "\(" is not allowed \(a valid regular expression/);
    expect(msgs).toMatch(/settings.DOWNLOAD_DELAY: -2 is not allowed \(a number >= 0 and <= 86400\)/);
    expect(msgs).toMatch(/resolve\["a.test"\]: "nope" is not allowed/);
    const ok = parseCrawlConfig({ seeds: 'http://a.test/\nbad\n' });
    expect(ok.ok && ok.config.seeds).toEqual(['http://a.test/']);
    expect(ok.ok && ok.config.seedErrors[0].line).toBe(2);
    const none = parseCrawlConfig({ seeds: ['nope'] });
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.errors[0].message).toMatch(/seeds: no valid URL \(config seeds item 1: not an absolute URL/);
  });

  it('interns: one entry per distinct string, handed back for equal ones, and starts again past 4,096', () => {
    const i = new Interner();
    const first = ['http://a.test', ':8080'].join('');
    expect(i.get(first)).toBe(first);
    expect(i.get(['http://a.test', ':8080'].join(''))).toBe(first);
    expect(i.size).toBe(1);
    for (let n = 0; n < 4095; n++) i.get(`h${n}`);
    expect(i.size).toBe(4096);
    i.get('h1');
    expect(i.size).toBe(4096);
    i.get('one-more');
    expect(i.size).toBe(1);
  });
});
