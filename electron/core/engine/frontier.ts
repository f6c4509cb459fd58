// The crawl's frontier rules: URL canonicalisation, de-duplication, seed list parsing with
// per-line errors, and the follow rules (scope, depth, page limit, include/exclude).

import { getDomain } from 'tldts';

/**
 * A URL to fetch, as the seed or the link gave it (resolved against `base`): only the fragment is
 * dropped, which never reaches a server. Its query is sent byte for byte (signed URLs and
 * order-sensitive APIs depend on it); null for anything but http(s) with a host.
 */
export function parseCrawlUrl(input: string, base?: string): URL | null {
  let u: URL;
  try {
    u = base === undefined ? new URL(input) : new URL(input, base);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (!u.hostname) return null;
  if (u.hash) u.hash = '';
  return u;
}

/** What the engine reads of a page's URL to queue it: a URL has it, and so has a PlainUrl. */
export interface PageUrl {
  readonly href: string;
  readonly origin: string;
  readonly hostname: string;
  readonly search: string;
}

/** A URL already in the form the URL parser would give it (see plainUrl), read without one. */
class PlainUrl implements PageUrl {
  constructor(
    readonly href: string,
    readonly origin: string,
    readonly hostname: string,
    readonly search: string,
  ) {}
}

// http(s), a host of lower-case ASCII labels each starting with a letter (none an IDNA "xn--"
// label: no IPv4 reading, no mapping) or a dotted-quad IPv4 address without leading zeros, an
// optional port without leading zeros, a path starting with "/" without "." or ".." segments, an
// optional query, no fragment; path and query only of characters the parser never percent-encodes
// or rewrites (no "%", no "\\", no "'" in the query, no spaces, quotes, brackets, braces, "^", "`" or "|").
const LABEL = '(?!xn--)[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?';
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PLAIN_URL = new RegExp(
  `^https?://(?:(?:${LABEL}\\.)*${LABEL}|(?:${OCTET}\\.){3}${OCTET})(?::[1-9][0-9]{0,4})?` +
    "(?![^?]*/\\.\\.?(?:[/?]|$))/[A-Za-z0-9\\-._~!$&'()*+,;=:@/]*(?:\\?[A-Za-z0-9\\-._~!$&()*+,;=:@/?]*)?$",
);

/**
 * The URL when `input` is already exactly what `new URL(input)` would make of it, read off the
 * string (no URL object, no match array: a seed list of 100,000 lines queues much faster); null
 * otherwise, and then parseCrawlUrl decides. Proven against the URL parser by
 * test/unit/engine/plain-url.test.ts.
 */
export function plainUrl(input: string): PageUrl | null {
  if (!PLAIN_URL.test(input)) return null;
  const hostStart = input.charCodeAt(4) === 58 /* http: */ ? 7 : 8;
  let end = hostStart;
  for (let c = input.charCodeAt(end); c !== 58 && c !== 47; c = input.charCodeAt(++end));
  if (end - hostStart > 253) return null;
  const host = input.slice(hostStart, end);
  if (input.charCodeAt(end) === 58) {
    const portStart = end + 1;
    while (input.charCodeAt(end) !== 47) end++;
    const port = Number(input.slice(portStart, end));
    if (port > 65535 || port === (hostStart === 7 ? 80 : 443)) return null;
  }
  const q = input.indexOf('?', end);
  return new PlainUrl(input, input.slice(0, end), host, q < 0 || q === input.length - 1 ? '' : input.slice(q));
}

/** A seed's URL: plainUrl when it applies, else parseCrawlUrl. */
export function parseSeedUrl(input: string): PageUrl | null {
  return plainUrl(input) ?? parseCrawlUrl(input);
}

/** The URL itself (a PlainUrl is parsed now), for what needs more than PageUrl has. */
export function asUrl(u: PageUrl): URL {
  return u instanceof URL ? u : new URL(u.href);
}

/**
 * The key a URL is de-duplicated by, and only that: lower-case scheme and host, no default port,
 * no fragment, the query's parameters sorted, a bare "?" dropped.
 */
export function canonicalKey(u: PageUrl): string {
  if (u.search.length <= 1 && !u.href.includes('?')) return u.href;
  const c = new URL(u.href);
  const parts = c.search.slice(1).split('&').filter((p) => p !== '');
  parts.sort();
  c.search = parts.length ? `?${parts.join('&')}` : '';
  return c.href;
}

/** The canonical form of a URL as a URL (de-duplication only; never sent). */
export function canonicalizeUrl(input: string, base?: string): URL | null {
  const u = parseCrawlUrl(input, base);
  return u && new URL(canonicalKey(u));
}

/** What goes on the request line: everything after the origin, exactly as given (a bare "?" kept). */
export function requestTarget(u: PageUrl): string {
  return u.href.slice(u.origin.length);
}

export interface SeedLineError {
  /** Where the line came from, e.g. "seeds file" or "config seeds"; lines are numbered within it. */
  readonly source: string;
  readonly line: number;
  readonly text: string;
  readonly message: string;
}

export interface ParsedSeeds {
  readonly urls: readonly string[];
  readonly errors: readonly SeedLineError[];
}

/**
 * One URL a line; blank lines and lines starting with # are skipped. A bad line is reported
 * with its number and skipped; the rest is kept.
 */
export function parseSeedList(text: string | readonly string[], source = 'seeds'): ParsedSeeds {
  const lines = typeof text === 'string' ? text.split(/\r?\n/) : text;
  const urls: string[] = [];
  const errors: SeedLineError[] = [];
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let message: string | null = null;
    try {
      const u = new URL(line);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') {
        // The scheme is the line's own text: a long one is cut, so the message stays one short line.
        const scheme = u.protocol.length > 40 ? `${u.protocol.slice(0, 37)}...` : u.protocol;
        message = `unsupported scheme "${scheme}" (only http: and https:)`;
      }
      else if (!u.hostname) message = 'no host name';
    } catch {
      message = 'not an absolute URL (expected e.g. https://example.com/)';
    }
    if (message) errors.push({ source, line: i + 1, text: raw, message });
    else urls.push(line);
  });
  return { urls, errors };
}

/** Which links a crawl follows (declared once, in shared/types.ts). */
export type { FollowScope } from '../../../shared/types';
import type { FollowScope } from '../../../shared/types';

export interface FollowRules {
  readonly scope: FollowScope;
  /** Seeds are depth 0; links of a depth-d page are depth d+1. Infinity = no limit. */
  readonly maxDepth: number;
  /** Pages requested at most (robots.txt not counted). Infinity = no limit. */
  readonly maxPages: number;
  readonly include: readonly RegExp[];
  readonly exclude: readonly RegExp[];
}

/** Hostname without IPv6 brackets, lower-cased. */
export function hostOf(u: PageUrl): string {
  const h = u.hostname.toLowerCase();
  return h.startsWith('[') ? h.slice(1, -1) : h;
}

/** Most strings an Interner keeps; past it, it starts again (a crawl of more hosts stays bounded). */
const INTERN_MAX = 4096;

/**
 * Hands back one string for equal strings (a host or origin per request becomes the one already
 * held), so many long-lived requests share it. Bounded: it forgets everything when full.
 */
export class Interner {
  private readonly map = new Map<string, string>();
  private last = '';

  get size(): number {
    return this.map.size;
  }

  get(s: string): string {
    // The same as the last one (a host's requests come together): compared, not hashed.
    if (s === this.last) return this.last;
    const held = this.map.get(s);
    if (held !== undefined) return (this.last = held);
    if (this.map.size >= INTERN_MAX) this.map.clear();
    this.map.set(s, s);
    return (this.last = s);
  }
}

/** Registrable domain (public suffix list); the host itself for IPs and unknown suffixes. */
export function registrableDomain(host: string): string {
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

export class Frontier {
  private readonly seen = new Set<string>();
  private readonly hosts = new Set<string>();
  private readonly domains = new Set<string>();
  /** Page requests accepted so far (counts toward maxPages). */
  accepted = 0;

  constructor(readonly rules: FollowRules) {}

  /** Marks a URL as seen (by its canonical key); false when it was already seen. */
  markSeen(url: PageUrl | string): boolean {
    let key: string;
    if (typeof url === 'string') {
      const u = parseCrawlUrl(url);
      key = u ? canonicalKey(u) : url;
    } else key = canonicalKey(url);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }

  get seenCount(): number {
    return this.seen.size;
  }

  /** Remembers a seed's host (and, for the domain scope, its registrable domain). */
  addSeedHost(host: string): void {
    if (this.hosts.has(host)) return;
    this.hosts.add(host);
    if (this.rules.scope === 'domain') this.domains.add(registrableDomain(host));
  }

  get pageLimitReached(): boolean {
    return this.accepted >= this.rules.maxPages;
  }

  /** Whether a link found on a page at `depth` should be followed. */
  allowsLink(u: URL, depth: number): boolean {
    const r = this.rules;
    if (r.scope === 'none' || depth > r.maxDepth) return false;
    const host = hostOf(u);
    if (r.scope === 'host' && !this.hosts.has(host)) return false;
    if (r.scope === 'domain' && !this.domains.has(registrableDomain(host))) return false;
    const href = u.href;
    if (r.include.length > 0 && !r.include.some((re) => re.test(href))) return false;
    if (r.exclude.some((re) => re.test(href))) return false;
    return true;
  }
}
