// HAR 1.2 export (http://www.softwareishard.com/blog/har-12-spec/), written in pieces so it streams:
// the envelope by hand, then one entry per response; loadable by Chrome DevTools' network panel.
import { STATUS_CODES } from 'node:http';
import { APP_VERSION } from '../../../../shared/settings';
import type { ResponseRecord } from '../../../../shared/types';

/** What the page of a crawl needs. */
export interface HarCrawl {
  readonly id: number;
  readonly name: string;
  /** Epoch ms: the crawl's start, or its creation when it never started. */
  readonly startedAt: number;
}

/** The page id entries of a crawl refer to. */
export function harPageId(crawlId: number): string {
  return `crawl-${crawlId}`;
}

const iso = (ms: number): string => new Date(ms).toISOString();
/** Milliseconds to a microsecond: HAR times are numbers of ms, and 1e-12 noise helps nobody. */
const ms3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Everything before the first entry: log, creator, the crawl's page, and the opening of entries. */
export function harHead(crawl: HarCrawl): string {
  const page = {
    startedDateTime: iso(crawl.startedAt),
    id: harPageId(crawl.id),
    title: crawl.name,
    pageTimings: { onContentLoad: -1, onLoad: -1 },
    comment: `Slotscope crawl ${crawl.id}: one entry per recorded response or failed download`,
  };
  const creator = { name: 'Slotscope', version: APP_VERSION };
  return `{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[${JSON.stringify(page)}],"entries":[\n`;
}

/** What closes the document after the last entry. */
export function harTail(): string {
  return '\n]}}\n';
}

function queryString(url: string): { name: string; value: string }[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

/**
 * The timings of a response (ms): blocked = time in its slot's queue, wait = latency (connection
 * set-up included, as Slotscope measures it), receive = body time. dns/connect/ssl are not measured
 * separately (-1: included in wait); send is 0 (a GET with no body goes out at once).
 * For a failure before the headers, wait is the time until the failure.
 */
export function harTimings(r: ResponseRecord): { blocked: number; dns: -1; connect: -1; send: 0; wait: number; receive: number; ssl: -1 } {
  const blocked = ms3(Math.max(0, r.waitMs));
  const total = Math.max(0, r.t - r.startedAt);
  const wait = ms3(r.latency !== null ? Math.max(0, r.latency * 1000) : total);
  const receive = ms3(r.downloadTime !== null ? Math.max(0, r.downloadTime * 1000) : r.latency !== null ? Math.max(0, total - wait) : 0);
  return { blocked, dns: -1, connect: -1, send: 0, wait, receive, ssl: -1 };
}

/** One entry (JSON text, no separator) of a response of crawl `crawlId`. */
export function harEntry(crawlId: number, r: ResponseRecord): string {
  const timings = harTimings(r);
  const notes: string[] = [];
  let url = r.url.split('#')[0];
  if (url === '') {
    url = `http://${r.slot}/`;
    notes.push("the source did not give this response's URL: shown as its slot's root");
  }
  let method = r.method;
  if (method === '') {
    method = 'GET';
    notes.push('the source did not give the method: shown as GET');
  }
  const failed = r.status === null;
  if (failed && r.errorKind === null) notes.push('the source did not give the status: shown as 0');
  const response: Record<string, unknown> = {
    status: r.status ?? 0,
    statusText: r.status === null ? '' : (STATUS_CODES[r.status] ?? ''),
    httpVersion: failed ? '' : 'HTTP/1.1',
    cookies: [],
    headers: r.contentType !== null ? [{ name: 'Content-Type', value: r.contentType }] : [],
    content: { size: r.bytes, mimeType: r.contentType ?? 'x-unknown' },
    redirectURL: '',
    headersSize: -1,
    bodySize: failed && r.bytes === 0 ? -1 : r.bytes,
    // Chrome's importer takes this as the transfer size (else headersSize + bodySize, one short with -1).
    _transferSize: r.bytes,
  };
  if (r.errorKind !== null) response._error = `${r.errorKind}${r.errorMessage ? `: ${r.errorMessage}` : ''}`;
  const entry: Record<string, unknown> = {
    pageref: harPageId(crawlId),
    startedDateTime: iso(r.startedAt - Math.max(0, r.waitMs)),
    time: timings.blocked + timings.send + timings.wait + timings.receive,
    request: {
      method,
      url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [],
      queryString: queryString(url),
      headersSize: -1,
      bodySize: 0,
    },
    response,
    cache: {},
    timings,
    // Custom fields (HAR 1.2: a leading underscore; other tools ignore them).
    _slot: r.slot,
    _inFlight: r.inFlight,
    _delayBefore: r.delayBefore,
    _delayAfter: r.delayAfter,
    _delayCause: r.delayCause,
    _backoffLevel: r.backoffLevel,
    _reused: r.reused,
    _depth: r.depth,
  };
  if (notes.length > 0) entry.comment = `${notes.join('; ')}.`;
  return JSON.stringify(entry);
}
