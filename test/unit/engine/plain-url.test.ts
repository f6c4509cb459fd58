// plainUrl reads a seed without the URL parser only when the parser would give back the very same
// URL: proven here against Node's URL (WHATWG) on hand-picked edge cases and on 60,000 strings
// generated near that edge. A PlainUrl that differed from the URL would send another request than
// the one the user listed, or de-duplicate it under another key.
import { describe, expect, it } from 'vitest';
import { canonicalKey, hostOf, parseCrawlUrl, parseSeedUrl, plainUrl, requestTarget } from '../../../electron/core/engine/frontier';
import { mulberry32 as rng } from '../../../electron/core/testsite/random';

/** What the engine reads of a URL, from the parser. */
function parsed(s: string): Record<string, string> | null {
  const u = parseCrawlUrl(s);
  return u && { href: u.href, origin: u.origin, hostname: u.hostname, search: u.search, key: canonicalKey(u), host: hostOf(u), target: requestTarget(u) };
}

function plain(s: string): Record<string, string> | null {
  const u = plainUrl(s);
  return u && { href: u.href, origin: u.origin, hostname: u.hostname, search: u.search, key: canonicalKey(u), host: hostOf(u), target: requestTarget(u) };
}

describe('plainUrl', () => {
  it('reads the common canonical seeds (so the fast path is used)', () => {
    for (const s of [
      'http://127.0.0.1:8080/p/1',
      'http://m1.test/item/1?ref=bench',
      'https://example.com/',
      'https://www.example.co.uk/a/b.html?x=1&y=2',
      'http://localhost:3000/api/items?page=2&sort=name',
      "https://shop.example.org/p/it's-here/(1)",
      'http://10.0.0.255/a;b=c/d:e@f',
    ]) {
      expect(plain(s), s).toEqual(parsed(s));
    }
  });

  it('leaves to the parser every URL the parser would rewrite, or reads it exactly as the parser does', () => {
    const edge = [
      'HTTP://example.com/', 'http://Example.com/', 'http://example.com', 'http://example.com:80/', 'https://example.com:443/',
      'http://example.com:080/', 'http://example.com:65536/', 'http://example.com:0/', 'http://127.1/', 'http://0127.0.0.1/',
      'http://127.0.0.01/', 'http://256.0.0.1/', 'http://0x7f.0.0.1/', 'http://1.2.3.4.5/', 'http://a.123/', 'http://a.0x1f/',
      'http://xn--nxasmq6b.com/', 'http://xn--invalid.com/', 'http://a..b/', 'http://a.b./', 'http://-a.b/', 'http://a-.b/',
      'http://example.com/./a', 'http://example.com/a/..', 'http://example.com/a/../b', 'http://example.com/%2e/a', 'http://example.com/a/%2E%2e',
      'http://example.com/a b', 'http://example.com/a"b', 'http://example.com/a<b', 'http://example.com/a`b', 'http://example.com/a{b}',
      'http://example.com/a^b', 'http://example.com/a|b', 'http://example.com/a\\b', 'http://example.com/a%zzb', 'http://example.com/a%41',
      "http://example.com/?a='b'", 'http://example.com/?', 'http://example.com/a?b=c#frag', 'http://example.com/#', 'http://user@example.com/',
      'http://user:pw@example.com/', 'http://example.com:8080@evil.test/', ' http://example.com/', 'http://example.com/\t', 'http://exa\nmple.com/',
      'http://[::1]/', 'http://[::1]:8080/a', 'ftp://example.com/', 'http://example.com/ü', 'http://exämple.com/', 'http://example.com/?q=ü',
      'http://example.com/a/./', 'http://example.com/...', 'http://example.com/.a/..b', 'http://example.com//a//b', 'http://example.com/?b=2&a=1',
      'http://example.com/?&', 'http://example.com/??', 'http://a.b-c.d/', `http://${'a'.repeat(63)}.test/`, `http://${'a'.repeat(64)}.test/`,
      `http://${'abcdefgh.'.repeat(30)}test/`, 'https://example.com:8443/x', 'http://1.1.1.1:65535/', 'http://0.0.0.0/',
    ];
    let read = 0;
    for (const s of edge) {
      const p = plain(s);
      if (p === null) continue;
      read++;
      expect(p, s).toEqual(parsed(s));
    }
    expect(read).toBeGreaterThan(10);
    // The parser's own reading stays in charge of everything else.
    for (const s of edge) expect(parseSeedUrl(s)?.href ?? null, s).toBe(parseCrawlUrl(s)?.href ?? null);
  });

  it('agrees with the URL parser on 60,000 generated strings near the edge', () => {
    const r = rng(17);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
    const labelChars = 'abcdefghijklmnopqrstuvwxyz0123456789-';
    const label = (): string => {
      if (r() < 0.05) return 'xn--' + 'abc';
      if (r() < 0.05) return String(Math.floor(r() * 300));
      if (r() < 0.03) return '0x1f';
      let l = '';
      const n = 1 + Math.floor(r() * 8);
      for (let i = 0; i < n; i++) l += labelChars[Math.floor(r() * labelChars.length)];
      return r() < 0.05 ? l.toUpperCase() : l;
    };
    const host = (): string => {
      if (r() < 0.25) return Array.from({ length: r() < 0.9 ? 4 : 3 }, () => String(r() < 0.1 ? '0' + Math.floor(r() * 99) : Math.floor(r() * 260))).join('.');
      const n = 1 + Math.floor(r() * 3);
      let h = Array.from({ length: n }, label).join('.');
      if (r() < 0.03) h += '.';
      return h;
    };
    const pathChars = ["a", "b", "z", "0", "9", "-", ".", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":", "@", "/", "%", "%2e", "%2E", "%41",
      " ", '"', "<", ">", "`", "{", "}", "^", "|", "\\", "[", "]", "ü", "#", "?", "..", "./", "/./", "/../", "\t"];
    const part = (n: number): string => {
      let p = '';
      for (let i = 0; i < n; i++) p += r() < 0.85 ? pick(pathChars.slice(0, 22)) : pick(pathChars);
      return p;
    };
    let read = 0;
    for (let i = 0; i < 60_000; i++) {
      const scheme = r() < 0.95 ? pick(['http', 'https']) : pick(['HTTP', 'ftp', 'Https']);
      const port = r() < 0.6 ? '' : `:${pick(['80', '443', '8080', '08080', '0', '65535', '65536', '1', String(Math.floor(r() * 70000))])}`;
      const path = r() < 0.95 ? '/' + part(Math.floor(r() * 12)) : '';
      const query = r() < 0.6 ? '' : '?' + part(Math.floor(r() * 10));
      const frag = r() < 0.97 ? '' : '#' + part(3);
      const s = `${scheme}://${host()}${port}${path}${query}${frag}`;
      const p = plain(s);
      if (p === null) continue;
      read++;
      expect(p, s).toEqual(parsed(s));
    }
    // The generator is near the edge: a good share is read without the parser, and all of those agreed.
    expect(read).toBeGreaterThan(5_000);
  });
});
