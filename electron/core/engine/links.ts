// Extracts followable links from HTML bodies while they download: decoded with their declared
// charset, tokenized in slices between event-loop turns, with bounded work per page (LINK_SCAN_LIMITS).

import { TextDecoder } from 'node:util';
import { Tokenizer, type QuoteType, type TokenizerCallbacks } from 'htmlparser2';

/**
 * The per-page bounds of link extraction (README, "Hostile sites"). A page is scanned up to
 * `bytes` of its decompressed body, the rest is still downloaded and counted (DOWNLOAD_MAXSIZE),
 * not read; its first `links` links are kept, later ones counted and dropped. Nesting costs nothing: the
 * scanner keeps no element stack (htmlparser2's Parser keeps one and shifts it on every open
 * tag, seconds for a page of 100,000 unclosed `<div>`s), so the work is linear in the bytes.
 */
export const LINK_SCAN_LIMITS: LinkScanLimits = {
  bytes: 8 * 1024 * 1024,
  links: 10_000,
  urlChars: 2083,
  sliceBytes: 64 * 1024,
};

export interface LinkScanLimits {
  /** Bytes of a page's (decompressed) body scanned for links. */
  readonly bytes: number;
  /** Links kept per page (the first ones in document order, before the crawl's follow rules). */
  readonly links: number;
  /** Longest link kept, in characters (Scrapy's URLLENGTH_LIMIT); a longer one is skipped. */
  readonly urlChars: number;
  /** Bytes decoded and tokenized per event-loop turn. */
  readonly sliceBytes: number;
}

/** How many body bytes are sniffed for a `<meta charset>` (HTML's prescan length). */
export const META_SNIFF_BYTES = 1024;

/** Which charset a body is decoded with, and why. */
export interface CharsetChoice {
  /** The encoding's WHATWG name (what TextDecoder reports), e.g. `windows-1251`. */
  readonly encoding: string;
  /** Where it came from: a byte-order mark, the Content-Type header, a `<meta>` of the page, or the UTF-8 default. */
  readonly source: 'bom' | 'header' | 'meta' | 'default';
  /** A declared label TextDecoder does not know (then the body is decoded as UTF-8), or null. */
  readonly unknown: string | null;
}

/** The `charset` parameter of a Content-Type value, unquoted; null when there is none. */
export function contentTypeCharset(contentType: string | null): string | null {
  if (!contentType) return null;
  const m = /;\s*charset\s*=\s*("([^"]*)"|'([^']*)'|[^\s;,]+)/i.exec(contentType);
  if (!m) return null;
  const label = (m[2] ?? m[3] ?? m[1]).trim();
  return label === '' ? null : label;
}

/**
 * The charset a `<meta charset>` or `<meta http-equiv="Content-Type" content="…; charset=…">` in
 * `head` declares (HTML's prescan, simplified: comments skipped, the first declaring `<meta>` wins).
 */
export function metaCharset(head: Uint8Array): string | null {
  const text = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, META_SNIFF_BYTES)).toString('latin1').replace(/<!--[\s\S]*?(-->|$)/g, '');
  for (const tag of text.matchAll(/<meta[\s/][^>]*>?/gi)) {
    const m = /charset\s*=\s*["']?\s*([^\s"'/>;]+)/i.exec(tag[0]);
    if (m) return m[1];
  }
  return null;
}

/** The encoding a byte-order mark at the start of `head` names, or null. */
function bomEncoding(head: Uint8Array): string | null {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  return null;
}

/** TextDecoder's name for `label`, or null when it does not know it. */
function knownEncoding(label: string): string | null {
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return null;
  }
}

/**
 * The charset to decode a body with (the WHATWG encoding-sniffing order): a byte-order mark, then
 * the Content-Type header's charset, then (HTML only) a `<meta>` in the first 1024 bytes, else
 * UTF-8. A label TextDecoder does not know is skipped and reported in `unknown`.
 */
export function chooseCharset(contentType: string | null, head: Uint8Array, html: boolean): CharsetChoice {
  const bom = bomEncoding(head);
  let unknown: string | null = null;
  const header = contentTypeCharset(contentType);
  if (bom) return { encoding: bom, source: 'bom', unknown: null };
  if (header !== null) {
    const enc = knownEncoding(header);
    if (enc) return { encoding: enc, source: 'header', unknown: null };
    unknown = header;
  }
  if (html) {
    const meta = metaCharset(head);
    if (meta !== null) {
      let enc = knownEncoding(meta);
      // A page whose <meta> could be read as ASCII is not UTF-16, whatever it says (HTML spec).
      if (enc === 'utf-16le' || enc === 'utf-16be') enc = 'utf-8';
      if (enc) return { encoding: enc, source: 'meta', unknown };
      unknown ??= meta;
    }
  }
  return { encoding: 'utf-8', source: 'default', unknown };
}

/** A whole body as text, decoded with its declared charset (see chooseCharset). */
export function decodeText(body: Uint8Array, contentType: string | null, html: boolean): { text: string; charset: CharsetChoice } {
  const charset = chooseCharset(contentType, body.subarray(0, META_SNIFF_BYTES), html);
  return { text: new TextDecoder(charset.encoding).decode(body), charset };
}

/** True for HTML content types (or none given). */
export function isHtml(contentType: string | null): boolean {
  return contentType === null || /^\s*(text\/html|application\/xhtml\+xml)/i.test(contentType);
}

const LINK_ATTR: Readonly<Record<string, string>> = { a: 'href', area: 'href', frame: 'src', iframe: 'src', base: 'href' };
const SKIPPED = /^(javascript|mailto|tel|data):/i;

/**
 * The tokenizer's listener: collects the raw href/src of link elements and the first `<base
 * href>`. It reads only the attributes it needs and keeps only the text not yet tokenized.
 */
class LinkCollector implements TokenizerCallbacks {
  readonly raw: string[] = [];
  /** Links found past the `links` cap (counted, not kept). */
  dropped = 0;
  base: string | null = null;
  /** Text written to the tokenizer and not yet released, and the offset of its first piece. */
  private pieces: string[] = [];
  private piecesStart = 0;
  private written = 0;
  private tag: string | null = null;
  private attrs: Record<string, string | null> | null = null;
  private attrName = '';
  private attrValue = '';
  private attrWanted = false;
  private attrTooLong = false;

  constructor(private readonly limits: LinkScanLimits) {}

  /** Hands a decoded piece of the page to `tokenizer`. */
  feed(tokenizer: Tokenizer, text: string): void {
    if (text === '') return;
    this.pieces.push(text);
    this.written += text.length;
    tokenizer.write(text);
  }

  private slice(start: number, end: number): string {
    while (this.pieces.length > 1 && start >= this.piecesStart + this.pieces[0].length) this.release();
    let out = '';
    let offset = this.piecesStart;
    for (const piece of this.pieces) {
      const a = Math.max(start, offset);
      const b = Math.min(end, offset + piece.length);
      if (a < b) out += piece.slice(a - offset, b - offset);
      offset += piece.length;
      if (offset >= end) break;
    }
    return out;
  }

  /** Drops pieces wholly before `index`: the tokenizer never refers back past its last event. */
  private done(index: number): void {
    while (this.pieces.length > 1 && index >= this.piecesStart + this.pieces[0].length) this.release();
  }

  private release(): void {
    this.piecesStart += this.pieces.shift()!.length;
  }

  onopentagname(start: number, end: number): void {
    // Link tags have short names: a long name is not read at all.
    const name = end - start <= 6 ? this.slice(start, end).toLowerCase() : '';
    this.tag = LINK_ATTR[name] !== undefined ? name : null;
    this.attrs = this.tag !== null ? {} : null;
    this.done(end);
  }

  onattribname(start: number, end: number): void {
    this.attrWanted = false;
    if (this.attrs !== null && end - start <= 4) {
      const name = this.slice(start, end).toLowerCase();
      this.attrWanted = (name === LINK_ATTR[this.tag!] || (name === 'rel' && this.tag === 'a')) && !(name in this.attrs);
      this.attrName = name;
      this.attrValue = '';
      this.attrTooLong = false;
    }
    this.done(end);
  }

  onattribdata(start: number, end: number): void {
    if (this.attrWanted && !this.attrTooLong) {
      if (this.attrValue.length + (end - start) > this.limits.urlChars) this.attrTooLong = true;
      else this.attrValue += this.slice(start, end);
    }
    this.done(end);
  }

  onattribentity(codepoint: number): void {
    if (this.attrWanted && !this.attrTooLong) this.attrValue += String.fromCodePoint(codepoint);
  }

  onattribend(_quote: QuoteType, end: number): void {
    if (this.attrWanted && this.attrs !== null) this.attrs[this.attrName] = this.attrTooLong ? null : this.attrValue;
    this.attrWanted = false;
    this.done(end);
  }

  onopentagend(end: number): void {
    this.closeTag();
    this.done(end);
  }

  onselfclosingtag(end: number): void {
    this.closeTag();
    this.done(end);
  }

  private closeTag(): void {
    const tag = this.tag;
    const attrs = this.attrs;
    this.tag = null;
    this.attrs = null;
    if (tag === null || attrs === null) return;
    const value = attrs[LINK_ATTR[tag]];
    if (value === null || value === undefined) return;
    if (tag === 'base') {
      this.base ??= value.trim();
      return;
    }
    if (tag === 'a' && /\bnofollow\b/i.test(attrs.rel ?? '')) return;
    const href = value.trim();
    if (href === '' || href.startsWith('#') || SKIPPED.test(href)) return;
    if (this.raw.length < this.limits.links) this.raw.push(href);
    else this.dropped++;
  }

  onclosetag(_start: number, end: number): void {
    this.done(end);
  }
  ontext(_start: number, end: number): void {
    this.done(end);
  }
  ontextentity(_codepoint: number, end: number): void {
    this.done(end);
  }
  oncomment(_start: number, end: number): void {
    this.done(end);
  }
  oncdata(_start: number, end: number): void {
    this.done(end);
  }
  ondeclaration(_start: number, end: number): void {
    this.done(end);
  }
  onprocessinginstruction(_start: number, end: number): void {
    this.done(end);
  }
  onend(): void {
    this.pieces = [];
    this.piecesStart = this.written;
  }
}

/** The base URL of a page: its first `<base href>` resolved against the page URL, else the page URL. */
function baseUrl(pageUrl: string, base: string | null): string {
  if (base === null || base === '') return pageUrl;
  try {
    return new URL(base, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

/** Absolute http(s) URL of `href` against `base`, or null. */
function resolveLink(href: string, base: string): string | null {
  try {
    const u = new URL(href, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** Absolute http(s) URLs linked from `html` (a whole page, at once), resolved against the page URL or its `<base>`. */
export function extractLinks(html: string, pageUrl: string, limits: LinkScanLimits = LINK_SCAN_LIMITS): string[] {
  const collector = new LinkCollector(limits);
  const tokenizer = new Tokenizer({ decodeEntities: true }, collector);
  collector.feed(tokenizer, html.length > limits.bytes ? html.slice(0, limits.bytes) : html);
  tokenizer.end();
  const base = baseUrl(pageUrl, collector.base);
  const out: string[] = [];
  for (const href of collector.raw) {
    const u = resolveLink(href, base);
    if (u !== null) out.push(u);
  }
  return out;
}

/** What a LinkScanner found. */
export interface LinkScan {
  /** Absolute http(s) URLs in document order (at most `links` of the limits). */
  readonly links: readonly string[];
  readonly charset: CharsetChoice;
  /** Body bytes scanned. */
  readonly scannedBytes: number;
  /** The page was longer than the `bytes` cap: the rest was not read. */
  readonly bytesCapped: boolean;
  /** Links found past the `links` cap, dropped. */
  readonly droppedLinks: number;
  readonly limits: LinkScanLimits;
}

/** Bytes waiting to be scanned above which `write` asks the downloader to hold the body. */
const HIGH_WATER = 256 * 1024;
/** Resolved links per event-loop turn. */
const RESOLVE_SLICE = 1000;

/**
 * Link extraction of one page, fed the decompressed body as it arrives (the downloader's body
 * sink). Bytes are queued and decoded, tokenized and resolved `sliceBytes` at a time, one slice
 * per event-loop turn (setImmediate), so a big or hostile page never holds the scheduler; past
 * the caps the rest of the body is accepted and ignored.
 */
export class LinkScanner {
  private readonly limits: LinkScanLimits;
  private readonly collector: LinkCollector;
  private readonly tokenizer: Tokenizer;
  private decoder: TextDecoder | null = null;
  private charset: CharsetChoice = { encoding: 'utf-8', source: 'default', unknown: null };
  /** The first bytes, held until the charset is known. */
  private head: Buffer[] = [];
  private headBytes = 0;
  private queue: Buffer[] = [];
  private queued = 0;
  private accepted = 0;
  private bytesCapped = false;
  private held = false;
  private scheduled = false;
  private ended = false;
  private stopped = false;
  private onDone: (() => void) | null = null;
  /** Links resolved so far (null while the body is still being tokenized), how many raw ones were looked at, and the base. */
  private links: string[] | null = null;
  private resolved = 0;
  private base: string | null = null;

  /**
   * @param pageUrl the page's URL, to resolve its links against
   * @param contentType its Content-Type header (for the charset)
   * @param onDrain called when the scanner takes bytes again after `write` returned false
   */
  constructor(
    private readonly pageUrl: string,
    private readonly contentType: string | null,
    private readonly onDrain: () => void = () => undefined,
    limits: LinkScanLimits = LINK_SCAN_LIMITS,
  ) {
    this.limits = limits;
    this.collector = new LinkCollector(limits);
    this.tokenizer = new Tokenizer({ decodeEntities: true }, this.collector);
  }

  /** Takes the next bytes of the body; false asks the caller to hold further bytes until onDrain. */
  write(chunk: Buffer): boolean {
    if (this.stopped || this.ended || this.bytesCapped) return true;
    let piece = chunk;
    if (this.accepted + piece.length > this.limits.bytes) {
      piece = piece.subarray(0, this.limits.bytes - this.accepted);
      this.bytesCapped = true;
    }
    this.accepted += piece.length;
    if (piece.length > 0) {
      this.queue.push(piece);
      this.queued += piece.length;
    }
    this.schedule();
    if (this.queued >= HIGH_WATER) this.held = true;
    return !this.held;
  }

  /** The body has ended; `done` is called (on a later turn) once the scan is complete. */
  end(done: () => void): void {
    if (this.stopped) return;
    this.ended = true;
    this.onDone = done;
    this.schedule();
  }

  /** Stops at once: the download failed or was cancelled. */
  abort(): void {
    this.stopped = true;
    this.queue = [];
    this.queued = 0;
    this.head = [];
    this.onDone = null;
  }

  /** What was found; complete once `end`'s callback has run. */
  get result(): LinkScan {
    return {
      links: this.links ?? [],
      charset: this.charset,
      scannedBytes: this.accepted,
      bytesCapped: this.bytesCapped,
      droppedLinks: this.collector.dropped,
      limits: this.limits,
    };
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.step();
    });
  }

  /** One slice of work: up to sliceBytes decoded and tokenized, or the final steps. */
  private step(): void {
    if (this.stopped) return;
    if (this.links === null) {
      let budget = this.limits.sliceBytes;
      while (budget > 0 && this.queue.length > 0) {
        let chunk = this.queue[0];
        if (chunk.length > budget) {
          this.queue[0] = chunk.subarray(budget);
          chunk = chunk.subarray(0, budget);
        } else this.queue.shift();
        this.queued -= chunk.length;
        budget -= chunk.length;
        this.take(chunk);
      }
      if (this.held && this.queued < HIGH_WATER / 2) {
        this.held = false;
        this.onDrain();
      }
      if (this.queue.length > 0) {
        this.schedule();
        return;
      }
      if (!this.ended) return;
      this.finishText();
      this.links = [];
    }
    // Resolving, RESOLVE_SLICE links per turn.
    const raw = this.collector.raw;
    const base = (this.base ??= baseUrl(this.pageUrl, this.collector.base));
    const end = Math.min(raw.length, this.resolved + RESOLVE_SLICE);
    for (; this.resolved < end; this.resolved++) {
      const u = resolveLink(raw[this.resolved], base);
      if (u !== null) this.links.push(u);
    }
    if (this.resolved < raw.length) {
      this.schedule();
      return;
    }
    const done = this.onDone;
    this.onDone = null;
    this.stopped = true;
    done?.();
  }

  /** Decodes and tokenizes bytes, holding the first META_SNIFF_BYTES until the charset is chosen. */
  private take(chunk: Buffer): void {
    if (this.decoder === null) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes < META_SNIFF_BYTES) return;
      this.startDecoding();
      return;
    }
    this.collector.feed(this.tokenizer, this.decoder.decode(chunk, { stream: true }));
  }

  private startDecoding(): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.charset = chooseCharset(this.contentType, head.subarray(0, META_SNIFF_BYTES), true);
    this.decoder = new TextDecoder(this.charset.encoding);
    this.collector.feed(this.tokenizer, this.decoder.decode(head, { stream: true }));
  }

  private finishText(): void {
    if (this.decoder === null) this.startDecoding();
    this.collector.feed(this.tokenizer, this.decoder!.decode());
    this.tokenizer.end();
  }
}
