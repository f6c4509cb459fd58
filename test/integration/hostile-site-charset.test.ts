// Hostile sites, charsets (issue 15): a page is decoded with its declared charset (Content-Type
// header, then <meta charset> or <meta http-equiv> in its first 1024 bytes), not always as UTF-8.

import { describe, expect, it } from 'vitest';
import { arrivals, crawl, crawlConfig, site } from './helpers';

// Loopback addresses of this file: 127.0.92.60 – 127.0.92.79.

const SETTINGS = { DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false };

/** `text` in a single-byte charset (a reverse of TextDecoder's table for that label). */
function singleByte(text: string, label: string): Buffer {
  const table = new TextDecoder(label).decode(Uint8Array.from({ length: 256 }, (_, i) => i));
  return Buffer.from([...text].map((ch) => {
    const b = table.indexOf(ch);
    if (b < 0) throw new Error(`${ch} is not in ${label}`);
    return b;
  }));
}

/** The path a browser requests for a link to `/word`: its UTF-8 bytes percent-encoded. */
function utf8Path(word: string): string {
  return new URL(`/${word}`, 'http://x.test').pathname;
}

/** A page body (base64) whose one link points to /`word`, encoded in `label`, with `meta` in its head. */
function page(word: string, encode: (s: string) => Buffer, meta = ''): string {
  return Buffer.concat([Buffer.from(`<!doctype html><html><head>${meta}<title>t</title></head><body>`), encode(`<a href="/${word}">${word}</a>`), Buffer.from('</body></html>')]).toString('base64');
}

const SJIS_NIHON = Buffer.from([0x93, 0xfa, 0x96, 0x7b]); // 日本 in Shift_JIS

describe('bodies are decoded with their declared charset', () => {
  it('takes the charset of the Content-Type header (windows-1251)', async () => {
    const word = 'страница';
    const s = await site({
      hosts: { 'cp.test': { address: '127.0.92.60', pages: 0, bodies: { '/': { head: page(word, (t) => singleByte(t, 'windows-1251')), base64: true, content_type: 'text/html; charset=windows-1251' } } } },
    });
    const { stats, events } = await crawl(crawlConfig({ seeds: [`${s.origin('cp.test')}/`], settings: SETTINGS, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'cp.test').map((e) => e.path)).toEqual(['/', utf8Path(word)]);
    expect(events.filter((e) => e.kind === 'warning')).toEqual([]);
  });

  it('takes <meta charset> from the first 1024 bytes when the header has none, gzip or not', async () => {
    const word = 'привет';
    const body = page(word, (t) => singleByte(t, 'koi8-r'), '<meta charset="KOI8-R">');
    const s = await site({
      hosts: {
        'meta.test': { address: '127.0.92.61', pages: 0, bodies: { '/': { head: body, base64: true, content_type: 'text/html' } } },
        'zmeta.test': { address: '127.0.92.62', pages: 0, bodies: { '/': { head: body, base64: true, content_type: 'text/html', encoding: 'gzip' } } },
      },
    });
    const { stats } = await crawl(crawlConfig({ seeds: [`${s.origin('meta.test')}/`, `${s.origin('zmeta.test')}/`], settings: SETTINGS, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'meta.test').map((e) => e.path)).toEqual(['/', utf8Path(word)]);
    expect(arrivals(s, 'zmeta.test').map((e) => e.path)).toEqual(['/', utf8Path(word)]);
  });

  it('takes <meta http-equiv="Content-Type"> (Shift_JIS), a multi-byte charset', async () => {
    expect(new TextDecoder('shift_jis').decode(SJIS_NIHON)).toBe('日本');
    const head = Buffer.concat([
      Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body><a href="/'),
      SJIS_NIHON,
      Buffer.from('">x</a></body></html>'),
    ]).toString('base64');
    const s = await site({ hosts: { 'sjis.test': { address: '127.0.92.63', pages: 0, bodies: { '/': { head, base64: true, content_type: 'text/html' } } } } });
    const { stats } = await crawl(crawlConfig({ seeds: [`${s.origin('sjis.test')}/`], settings: SETTINGS, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'sjis.test').map((e) => e.path)).toEqual(['/', utf8Path('日本')]);
  });

  it('lets the header win over a <meta> that says otherwise', async () => {
    const word = 'страница';
    const s = await site({
      hosts: {
        'both.test': {
          address: '127.0.92.64',
          pages: 0,
          bodies: { '/': { head: page(word, (t) => singleByte(t, 'windows-1251'), '<meta charset="koi8-r">'), base64: true, content_type: 'text/html; charset="windows-1251"' } },
        },
      },
    });
    const { stats } = await crawl(crawlConfig({ seeds: [`${s.origin('both.test')}/`], settings: SETTINGS, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'both.test').map((e) => e.path)).toEqual(['/', utf8Path(word)]);
  });

  it('decodes an unknown charset as UTF-8, with a warning naming it', async () => {
    const word = 'café';
    const s = await site({
      hosts: { 'odd.test': { address: '127.0.92.65', pages: 0, bodies: { '/': { head: page(word, (t) => Buffer.from(t, 'utf8')), base64: true, content_type: 'text/html; charset=x-klingon' } } } },
    });
    const { stats, events } = await crawl(crawlConfig({ seeds: [`${s.origin('odd.test')}/`], settings: SETTINGS, resolve: s.resolve }));
    expect(stats.status).toBe('finished');
    expect(arrivals(s, 'odd.test').map((e) => e.path)).toEqual(['/', utf8Path(word)]);
    const warning = events.find((e) => e.kind === 'warning' && e.code === 'decode-failed');
    expect(warning?.slot).toBe('odd.test');
    expect(warning?.text).toMatch(/x-klingon/);
    expect(warning?.text).toMatch(/UTF-8/);
  });
});
