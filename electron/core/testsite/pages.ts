// The content a test-site host serves: a linked page tree, robots.txt and small status pages.
// Pure string building (no I/O) so the server can precompute bodies once and tests can predict links.

import type { RobotsSpec } from './scenario';
import { streamRandom } from './random';

/** Children per page in the link tree: a breadth-first crawl from `/` has depth about log3(N). */
export const PAGE_FANOUT = 3;

const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et ' +
  'dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea ' +
  'commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur ' +
  'excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum ' +
  'crawl slot delay throttle latency polite robots queue frontier depth response header body server client'
).split(' ');

/** Path of page `index`: 0 is `/`, the others `/page/<index>`. */
export function pagePath(index: number): string {
  return index === 0 ? '/' : `/page/${index}`;
}

/** Index of the page at `path` (query already removed), or -1 when it is not one of the `pages`. */
export function pageIndex(path: string, pages: number): number {
  if (path === '/') return pages > 0 ? 0 : -1;
  if (path.length < 7 || !path.startsWith('/page/')) return -1;
  let n = 0;
  for (let i = 6; i < path.length; i++) {
    const d = path.charCodeAt(i) - 48;
    if (d < 0 || d > 9 || (i === 6 && d === 0) || i > 15) return -1;
    n = n * 10 + d;
  }
  return n < pages ? n : -1;
}

/**
 * Indexes page `index` links to, in document order: home, parent ("up"), next, then its
 * children `3i+1 … 3i+3`. Every page is reachable from `/` through the child links.
 */
export function pageLinks(index: number, pages: number): number[] {
  const out: number[] = [];
  const add = (i: number): void => {
    if (i >= 0 && i < pages && i !== index && !out.includes(i)) out.push(i);
  };
  if (index > 0) {
    add(0);
    add(Math.floor((index - 1) / PAGE_FANOUT));
  }
  add(index + 1);
  for (let k = 1; k <= PAGE_FANOUT; k++) add(index * PAGE_FANOUT + k);
  return out;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function linkLabel(from: number, to: number): string {
  if (to === 0) return 'home';
  if (from > 0 && to === Math.floor((from - 1) / PAGE_FANOUT)) return 'up';
  if (to === from + 1) return 'next';
  return `page ${to}`;
}

function filler(length: number, seed: number, host: string, index: number): string {
  if (length <= 0) return '';
  const random = streamRandom(seed, host, `filler ${index}`);
  const parts: string[] = [];
  let size = 0;
  let line = 0;
  while (size < length) {
    const word = WORDS[Math.floor(random() * WORDS.length)];
    const sep = line + word.length > 76 ? '\n' : ' ';
    if (sep === '\n') line = 0;
    parts.push(word, sep);
    size += word.length + 1;
    line += word.length + 1;
  }
  return parts.join('').slice(0, length);
}

/** Inputs of one generated page. */
export interface PageRenderInput {
  readonly host: string;
  readonly index: number;
  readonly pages: number;
  /** Target body size; the body is exactly this long unless the markup alone is longer. */
  readonly pageBytes: number;
  readonly seed: number;
  /** Extra same-host paths to link from this page (the home page links the robots-disallowed ones). */
  readonly extraLinks?: readonly string[];
}

/** The HTML of one page (ASCII only, so its length in characters is its length in bytes). */
export function renderPage(input: PageRenderInput): string {
  const { host, index, pages, pageBytes, seed } = input;
  const name = escapeHtml(host);
  const title = index === 0 ? `${name} home` : `${name} page ${index}`;
  const links = pageLinks(index, pages).map((to) => `<a href="${pagePath(to)}">${linkLabel(index, to)}</a>`);
  for (const extra of input.extraLinks ?? []) links.push(`<a href="${escapeHtml(extra)}">${escapeHtml(extra)}</a>`);
  const head =
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n` +
    `<body>\n<h1>${title}</h1>\n<nav>\n${links.join('\n')}\n</nav>\n<p>`;
  const tail = '</p>\n</body></html>\n';
  return head + filler(pageBytes - head.length - tail.length, seed, host, index) + tail;
}

/** The page served for a robots-disallowed path, so a test can see that it was fetched. */
export function renderDisallowedPage(host: string, path: string): string {
  const name = escapeHtml(host);
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${name} disallowed ${escapeHtml(path)}</title></head>\n` +
    `<body>\n<h1>disallowed</h1>\n<p>robots.txt disallows this path; a polite crawler does not fetch it.</p>\n` +
    `<a href="/">home</a>\n</body></html>\n`
  );
}

/** A short HTML body for an error or status answer, e.g. "503 Service Unavailable". */
export function renderStatusPage(status: number, reason: string): string {
  const text = `${status} ${escapeHtml(reason)}`;
  return `<!doctype html>\n<html><head><title>${text}</title></head><body><h1>${text}</h1></body></html>\n`;
}

/** The text of `/robots.txt` (its raw `body` when given, otherwise generated). */
export function robotsText(robots: RobotsSpec): string {
  if (robots.body !== undefined) return robots.body;
  const lines = ['User-agent: *'];
  if (robots.crawl_delay !== undefined) lines.push(`Crawl-delay: ${robots.crawl_delay}`);
  if (robots.disallow.length === 0) lines.push('Disallow:');
  for (const rule of robots.disallow) lines.push(`Disallow: ${rule}`);
  for (const rule of robots.allow) lines.push(`Allow: ${rule}`);
  return `${lines.join('\n')}\n`;
}

/** The Disallow rules in effect: the listed ones, or those found in a raw body. */
export function disallowRules(robots: RobotsSpec | undefined): string[] {
  if (!robots) return [];
  if (robots.body === undefined) return robots.disallow.filter((r) => r !== '');
  const out: string[] = [];
  for (const m of robots.body.matchAll(/^[ \t]*disallow[ \t]*:[ \t]*([^\s#]*)/gim)) if (m[1]) out.push(m[1]);
  return out;
}

/** A predicate telling whether a path falls under one of the rules (`*` wildcards, `$` end anchor). */
export function ruleMatcher(rules: readonly string[]): ((path: string) => boolean) | null {
  if (rules.length === 0) return null;
  const source = rules
    .map((rule) => {
      const anchored = rule.endsWith('$');
      const body = (anchored ? rule.slice(0, -1) : rule)
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*');
      return anchored ? `${body}$` : body;
    })
    .join('|');
  const re = new RegExp(`^(?:${source})`);
  return (path) => re.test(path);
}

/** Rules that name one literal path worth linking to (no wildcards). */
export function linkableRules(rules: readonly string[]): string[] {
  return rules.filter((r) => !r.includes('*')).map((r) => (r.endsWith('$') ? r.slice(0, -1) : r)).filter((r) => r.startsWith('/'));
}
