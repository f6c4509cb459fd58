// Link extraction (issue 15): the streaming scanner finds what a whole-page parse finds, whatever
// the chunking; its work per page is bounded and sliced; charsets are chosen as HTML says.

import { describe, expect, it } from 'vitest';
import { chooseCharset, contentTypeCharset, extractLinks, LINK_SCAN_LIMITS, LinkScanner, metaCharset, type LinkScan, type LinkScanLimits } from '../../../electron/core/engine/links';

/** Feeds `body` to a scanner in chunks of `chunk` bytes (honouring its backpressure) and returns what it found. */
async function scan(body: Buffer, opts: { chunk?: number; contentType?: string | null; url?: string; limits?: LinkScanLimits } = {}): Promise<LinkScan & { holds: number }> {
  const chunk = opts.chunk ?? 65536;
  let resume: (() => void) | null = null;
  let holds = 0;
  const scanner = new LinkScanner(opts.url ?? 'http://a.test/dir/page.html', opts.contentType === undefined ? 'text/html' : opts.contentType, () => resume?.(), opts.limits);
  for (let i = 0; i < body.length; i += chunk) {
    if (!scanner.write(body.subarray(i, i + chunk))) {
      holds++;
      await new Promise<void>((r) => (resume = r));
      resume = null;
    }
  }
  await new Promise<void>((r) => scanner.end(r));
  return { ...scanner.result, holds };
}

const PAGE = `<!doctype html><html><head><title>t &amp; <a href="/not-a-link"></title>
  <script>document.write('<a href="/in-script">')</script><style>a[href="/in-style"]{}</style>
  <!-- <a href="/in-comment"> --></head><body>
  <A HREF="one">1</A><a href='/two?x=1&amp;y=2'>2</a><a href=three>3</a>
  <a rel="nofollow" href="/nf">nf</a><a href="#frag">f</a><a href="javascript:x()">j</a><a href="mailto:a@b">m</a>
  <area href="/area"><iframe src="/frame"></iframe><a href="https://x.test/abs">x</a><a href="ftp://x.test/">ftp</a>
  <a href="/caf&eacute;">e</a><img src="/not-followed.png"><a href="/dup" href="/second">d</a>
  </body></html>`;
const EXPECTED = [
  'http://a.test/dir/one', 'http://a.test/two?x=1&y=2', 'http://a.test/dir/three', 'http://a.test/area', 'http://a.test/frame',
  'https://x.test/abs', 'http://a.test/caf%C3%A9', 'http://a.test/dup',
];

describe('LinkScanner', () => {
  it('finds the links a whole-page parse finds, whatever the chunk size', async () => {
    expect(extractLinks(PAGE, 'http://a.test/dir/page.html')).toEqual(EXPECTED);
    for (const chunk of [1, 2, 3, 7, 64, 65536]) expect((await scan(Buffer.from(PAGE), { chunk })).links).toEqual(EXPECTED);
  });

  it('honours a <base href>, even one after the first links', async () => {
    const html = '<a href="x">x</a><base href="http://b.test/sub/"><base href="http://c.test/"><a href="y">y</a>';
    expect((await scan(Buffer.from(html))).links).toEqual(['http://b.test/sub/x', 'http://b.test/sub/y']);
  });

  it('scans 440,000 nested <div>s in linear time, in slices that leave the event loop free', async () => {
    const body = Buffer.from(`<html><body><a href="/first">f</a>${'<div>'.repeat(440_000)}<a href="/deep">d</a></body></html>`);
    const turns: number[] = [];
    let last = performance.now();
    let ticking = true;
    const tick = (): void => {
      const now = performance.now();
      turns.push(now - last);
      last = now;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const t0 = performance.now();
    const r = await scan(body);
    ticking = false;
    expect(r.links).toEqual(['http://a.test/first', 'http://a.test/deep']);
    // htmlparser2's Parser takes over a minute on this page; the scanner a fraction of a second.
    expect(performance.now() - t0).toBeLessThan(10_000);
    // It yielded between its 64 KiB slices (about a millisecond of tokenizing each): other work ran
    // at least once per slice, and no turn held the loop long (generous for a loaded machine).
    expect(turns.length).toBeGreaterThanOrEqual(Math.floor(body.length / LINK_SCAN_LIMITS.sliceBytes));
    expect(Math.max(...turns)).toBeLessThan(1000);
  });

  it(`reads at most ${LINK_SCAN_LIMITS.bytes} bytes of a page`, async () => {
    const body = Buffer.concat([Buffer.from('<a href="/early">e</a>'), Buffer.alloc(LINK_SCAN_LIMITS.bytes, 0x20), Buffer.from('<a href="/late">l</a>')]);
    const r = await scan(body);
    expect(r.links).toEqual(['http://a.test/early']);
    expect(r.bytesCapped).toBe(true);
    expect(r.scannedBytes).toBe(LINK_SCAN_LIMITS.bytes);
  });

  it('keeps the first `links` links and counts the others', async () => {
    const limits = { ...LINK_SCAN_LIMITS, links: 50 };
    const body = Buffer.from(Array.from({ length: 80 }, (_, i) => `<a href="/l/${i}">${i}</a>`).join(''));
    const r = await scan(body, { limits, chunk: 100 });
    expect(r.links).toHaveLength(50);
    expect(r.links.at(-1)).toBe('http://a.test/l/49');
    expect(r.droppedLinks).toBe(30);
    expect(r.bytesCapped).toBe(false);
    // Exactly the cap: nothing dropped.
    expect((await scan(Buffer.from(body.toString().split('<a href="/l/50">')[0]), { limits })).droppedLinks).toBe(0);
  });

  it(`skips a link longer than ${LINK_SCAN_LIMITS.urlChars} characters (Scrapy's URLLENGTH_LIMIT)`, async () => {
    const long = `/${'x'.repeat(LINK_SCAN_LIMITS.urlChars)}`;
    const r = await scan(Buffer.from(`<a href="${long}">l</a><a href="/ok">ok</a>`), { chunk: 100 });
    expect(r.links).toEqual(['http://a.test/ok']);
  });

  it('holds the body (write returns false) while its queue is long, and asks for more when drained', async () => {
    const body = Buffer.from(`<a href="/x">x</a>${' '.repeat(2_000_000)}`);
    const r = await scan(body, { chunk: 128 * 1024 });
    expect(r.holds).toBeGreaterThan(0);
    expect(r.links).toEqual(['http://a.test/x']);
  });

  it('decodes with the charset of the header, then of a <meta> in the first 1024 bytes, split anywhere', async () => {
    const word = Buffer.from([0xf1, 0xf2, 0xf0]); // "стр" in windows-1251
    const link = (meta: string) => Buffer.concat([Buffer.from(`<html><head>${meta}</head><body><a href="/`), word, Buffer.from('">x</a>')]);
    const path = 'http://a.test/%D1%81%D1%82%D1%80';
    expect((await scan(link(''), { contentType: 'text/html; charset=windows-1251', chunk: 5 })).links).toEqual([path]);
    const meta = await scan(link('<meta charset="windows-1251">'), { contentType: 'text/html', chunk: 1 });
    expect(meta.links).toEqual([path]);
    expect(meta.charset).toEqual({ encoding: 'windows-1251', source: 'meta', unknown: null });
    // A multi-byte character split across chunks is decoded whole.
    const utf8 = await scan(Buffer.from('<a href="/стр">x</a>'), { chunk: 1, contentType: null });
    expect(utf8.links).toEqual([path]);
    expect(utf8.charset.source).toBe('default');
  });
});

describe('charset choice', () => {
  const bytes = (s: string) => Buffer.from(s, 'latin1');
  it('reads the charset parameter of a Content-Type', () => {
    expect(contentTypeCharset('text/html; charset=ISO-8859-2')).toBe('ISO-8859-2');
    expect(contentTypeCharset('text/html;charset="koi8-r"; q=1')).toBe('koi8-r');
    expect(contentTypeCharset('text/html')).toBeNull();
    expect(contentTypeCharset(null)).toBeNull();
  });

  it('reads <meta charset> and <meta http-equiv> in the first 1024 bytes only, outside comments', () => {
    expect(metaCharset(bytes('<meta charset=utf-8>'))).toBe('utf-8');
    expect(metaCharset(bytes('<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=Shift_JIS">'))).toBe('Shift_JIS');
    expect(metaCharset(bytes('<!-- <meta charset="koi8-r"> --><meta charset="gbk">'))).toBe('gbk');
    expect(metaCharset(bytes(`${' '.repeat(1024)}<meta charset="gbk">`))).toBeNull();
    expect(metaCharset(bytes('<metadata charset="gbk">'))).toBeNull();
  });

  it('orders BOM, header, meta, default; skips unknown labels and names them', () => {
    const meta = bytes('<meta charset="koi8-r">');
    expect(chooseCharset('text/html; charset=windows-1251', meta, true)).toEqual({ encoding: 'windows-1251', source: 'header', unknown: null });
    expect(chooseCharset('text/html', meta, true)).toEqual({ encoding: 'koi8-r', source: 'meta', unknown: null });
    expect(chooseCharset('text/html', meta, false)).toEqual({ encoding: 'utf-8', source: 'default', unknown: null });
    expect(chooseCharset('text/html; charset=x-klingon', meta, true)).toEqual({ encoding: 'koi8-r', source: 'meta', unknown: 'x-klingon' });
    expect(chooseCharset('text/html; charset=x-klingon', bytes(''), true)).toEqual({ encoding: 'utf-8', source: 'default', unknown: 'x-klingon' });
    expect(chooseCharset('text/html; charset=windows-1251', Buffer.from([0xef, 0xbb, 0xbf, 0x3c]), true).encoding).toBe('utf-8');
    // A <meta> read as ASCII cannot be UTF-16.
    expect(chooseCharset(null, bytes('<meta charset="utf-16">'), true).encoding).toBe('utf-8');
  });
});
