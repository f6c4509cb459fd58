// What a finished download means for the crawl, as pure rules shared by the one-process crawler
// and the shared crawl's workers (electron/core/cluster): the stored response record, whether a
// retry is due, and what robots.txt's Crawl-delay makes of a slot.

import type { ScopeSettings, Settings } from '../../../shared/settings';
import type { ResponseRecord } from '../../../shared/types';
import type { DownloadResult } from './downloader';
import { parseCrawlUrl } from './frontier';
import { isHtml, LinkScanner, type CharsetChoice } from './links';
import { NO_META, type CrawlRequest } from './request';
import type { RobotsRules } from './robots';
import type { ThrottleDecision } from './throttle/step';

export const ROBOTS_PRIORITY = 1000;
export const REDIRECT_PRIORITY_ADJUST = 2;
export const MAX_REDIRECTS = 20;
export const ROBOTS_RETRIES = 3;
/** robots.txt is read up to this many decompressed bytes (RFC 9309 2.5 asks for at least 500 KiB); the rest is not read. */
export const ROBOTS_MAX_BYTES = 512 * 1024;
/** Failures Scrapy's RetryMiddleware retries (timeouts, refused and reset connections, DNS, TLS and other transport errors). */
const RETRIED_FAILURES: ReadonlySet<string> = new Set(['timeout', 'connect-refused', 'connect-reset', 'tls', 'dns', 'other']);

/**
 * Whether a response asks for a retry (Scrapy's RetryMiddleware): RETRY_ENABLED and a status in
 * RETRY_HTTP_CODES, or a failure a retry may mend. Backing off decides when; this decides whether.
 */
export function isRetryable(res: Pick<DownloadResult, 'status' | 'errorKind'>, s: Settings): boolean {
  if (!s.RETRY_ENABLED) return false;
  if (res.status !== null) return s.RETRY_HTTP_CODES.includes(res.status);
  return res.errorKind !== null && RETRIED_FAILURES.has(res.errorKind);
}

export function headerValue(headers: Readonly<Record<string, string | string[]>> | null, name: string): string | null {
  const v = headers?.[name];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The stored row of one response: the download's figures and the throttle step's decision. */
export function responseRecord(req: CrawlRequest, slot: string, res: DownloadResult, inFlight: number, d: ThrottleDecision, contentType: string | null): ResponseRecord {
  return {
    t: res.endedAt,
    startedAt: res.startedAt,
    waitMs: res.startedAt - req.enqueuedAt,
    slot,
    url: req.url,
    method: req.method,
    status: res.status,
    latency: res.latency,
    downloadTime: res.downloadTime,
    bytes: res.bytes,
    inFlight,
    delayBefore: d.delayBefore,
    delayAfter: d.delayAfter,
    delayCause: d.delayCause,
    backoffLevel: d.backoffLevel,
    reused: res.reused,
    errorKind: res.errorKind,
    errorMessage: res.errorMessage,
    depth: req.depth,
    contentType,
    attempt: req.retries,
  };
}

/** A warning to say once (its code is one of WARNING_CODES). */
function warning<C extends string>(code: C, text: string): { readonly code: C; readonly text: string } {
  return { code, text };
}

/** What robots.txt's Crawl-delay makes of a slot (SPEC 5.5), with the warning to say once, if any. */
export type CrawlDelayRule =
  | { readonly delay: number; readonly warning: { readonly code: 'crawl-delay-capped'; readonly text: string } | null }
  | { readonly delay: null; readonly warning: { readonly code: 'crawl-delay-overridden'; readonly text: string } | null };

/**
 * SPEC 5.5: a valid Crawl-delay makes the slot's floor min(Crawl-delay, cap) (and its concurrency
 * 1); a scope of THROTTLING_SCOPES that sets delay or concurrency wins, saying so; null when none applies.
 */
export function crawlDelayRule(rules: RobotsRules, s: Settings, scope: ScopeSettings | undefined, slotKey: string, origin: string): CrawlDelayRule | null {
  if (!s.ROBOTSTXT_OBEY || !s.THROTTLING_ROBOTSTXT_OBEY) return null;
  const raw = rules.getCrawlDelay(s.USER_AGENT);
  const cd = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isFinite(cd) || cd <= 0) return null;
  if (scope?.ignore_robots_txt) return null;
  if (scope && (scope.delay !== undefined || scope.concurrency !== undefined)) {
    return {
      delay: null,
      warning: warning('crawl-delay-overridden',
        `robots.txt of ${origin} asks for Crawl-delay: ${cd}, but THROTTLING_SCOPES sets ${slotKey}'s delay/concurrency; ` +
          `using THROTTLING_SCOPES. Add ignore_robots_txt: true to that scope to silence this, or remove its delay to obey the site.`),
    };
  }
  const cap = s.THROTTLING_ROBOTSTXT_MAX_DELAY;
  return {
    delay: Math.min(cd, cap),
    warning: cd > cap
      ? warning('crawl-delay-capped', `robots.txt of ${origin} asks for Crawl-delay: ${cd}, above THROTTLING_ROBOTSTXT_MAX_DELAY (${cap}); using ${cap}. ` +
        `Raise THROTTLING_ROBOTSTXT_MAX_DELAY to obey it fully.`)
      : null,
  };
}

/** A page a response leads to: a redirect's target or a link of an HTML page. */
export interface FollowedPage {
  readonly url: URL;
  readonly depth: number;
  readonly priority: number;
  readonly meta: Record<string, unknown>;
  readonly redirects: number;
}

/** What a response says to the log while its redirect or links are followed; `once`: a warning said once per slot. */
export interface FollowNote {
  readonly kind: 'info' | 'warning' | 'error';
  readonly code: string;
  readonly text: string;
  readonly once?: boolean;
}

/** Where the links of a page may go: the crawl's follow rules and whether its page limit is reached. */
export interface FollowScopeCheck {
  readonly rules: { readonly scope: string; readonly maxDepth: number };
  readonly pageLimitReached: boolean;
  allowsLink(u: URL, depth: number): boolean;
}

/** The charset note of a page whose charset label nobody knows (said once per slot), or null. */
export function charsetNote(url: string, charset: CharsetChoice): FollowNote | null {
  if (charset.unknown === null) return null;
  return {
    kind: 'warning', code: 'decode-failed', once: true,
    text: `${url}: unknown charset "${charset.unknown}"; decoded as ${charset.encoding === 'utf-8' ? 'UTF-8' : charset.encoding} (further pages of this slot with unknown charsets are not reported)`,
  };
}

/** A response's pages to follow and what to say about them. */
export interface FollowUps {
  readonly pages: readonly FollowedPage[];
  readonly notes: readonly FollowNote[];
}

const NO_FOLLOW_UPS: FollowUps = Object.freeze({ pages: Object.freeze([]), notes: Object.freeze([]) });

/**
 * A response's redirect target or its links (read while it downloaded, by the link scanner), and
 * what to say about them. `redirectTarget` says whether a redirect's target is new (de-duplication).
 */
export function followUps(
  req: CrawlRequest, slot: string, res: DownloadResult, contentType: string | null, scope: FollowScopeCheck,
  redirectTarget: (u: URL) => boolean,
): FollowUps {
  const status = res.status!;
  const redirect = status >= 300 && status < 400 && status !== 304;
  // Most responses lead nowhere (no redirect, no links to follow): one shared empty answer.
  if (!redirect && (status < 200 || status >= 300 || (res.decodeError === null && !(res.sink instanceof LinkScanner)))) {
    return NO_FOLLOW_UPS;
  }
  const pages: FollowedPage[] = [];
  const notes: FollowNote[] = [];
  if (redirect) {
    const location = headerValue(res.headers, 'location');
    if (!location) return { pages, notes };
    if (req.redirects >= MAX_REDIRECTS) {
      // The 3xx itself is already recorded as a response; this is an event, not a second count.
      notes.push({ kind: 'error', code: 'redirect-limit', text: `${req.url}: more than ${MAX_REDIRECTS} redirects; not followed to ${location}` });
      return { pages, notes };
    }
    const target = parseCrawlUrl(location, req.url);
    if (!target || !redirectTarget(target)) return { pages, notes };
    // Redirects keep the original request's slot (Scrapy stamps meta.download_slot).
    pages.push({ url: target, depth: req.depth, priority: req.priority + REDIRECT_PRIORITY_ADJUST, meta: { ...req.meta, download_slot: slot }, redirects: req.redirects + 1 });
    return { pages, notes };
  }
  if (status < 200 || status >= 300) return { pages, notes };
  // The page's links were read while it downloaded (linkSink), within LINK_SCAN_LIMITS.
  const scan = res.sink instanceof LinkScanner ? res.sink.result : null;
  if (res.decodeError !== null && isHtml(contentType)) {
    notes.push({ kind: 'warning', code: 'decode-failed',
      text: `${req.url}: ${res.decodeError}${scan && scan.scannedBytes > 0 ? `; links read from the ${scan.scannedBytes} bytes decompressed before` : ''}` });
  }
  if (scan === null) return { pages, notes };
  const depth = req.depth + 1;
  if (scope.rules.scope === 'none' || depth > scope.rules.maxDepth || scope.pageLimitReached) return { pages, notes };
  const cs = charsetNote(req.url, scan.charset);
  if (cs) notes.push(cs);
  if (scan.bytesCapped || scan.droppedLinks > 0) {
    const cut = [
      scan.bytesCapped ? `links were read from its first ${scan.limits.bytes} bytes only` : '',
      scan.droppedLinks > 0 ? `its first ${scan.limits.links} links were kept and ${scan.droppedLinks} more dropped` : '',
    ].filter((x) => x !== '').join('; ');
    notes.push({ kind: 'info', code: 'links-capped', text: `${req.url}: ${cut} (the per-page limits of link extraction)` });
  }
  for (const href of scan.links) {
    const u = parseCrawlUrl(href);
    if (u && scope.allowsLink(u, depth)) pages.push({ url: u, depth, priority: 0, meta: NO_META, redirects: 0 });
  }
  return { pages, notes };
}
