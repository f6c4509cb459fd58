// robots.txt per origin (SPEC 3 rule 6): fetched once through the same throttle, parsed with
// robots-parser, with RFC 9309 failure handling: 4xx allows all, 5xx/network is retried.

import robotsParser from 'robots-parser';

export type RobotsRules = ReturnType<typeof robotsParser>;

export type RobotsState =
  | { readonly kind: 'fetching'; readonly attempts: number }
  | { readonly kind: 'ready'; readonly rules: RobotsRules | null; readonly note: string };

/** Parses a robots.txt body for `origin`. */
export function parseRobots(origin: string, body: string): RobotsRules {
  return robotsParser(`${origin}/robots.txt`, body);
}

/** What a robots.txt answer means (RFC 9309 2.3.1). */
export function robotsOutcome(status: number | null): 'parse' | 'allow-all' | 'retry' {
  if (status === null || status >= 500) return 'retry';
  if (status >= 400) return 'allow-all';
  if (status >= 200 && status < 300) return 'parse';
  return 'allow-all';
}

/** Whether `url` may be fetched; null rules allow all. */
export function robotsAllows(rules: RobotsRules | null, url: string, userAgent: string): boolean {
  if (!rules) return true;
  return rules.isAllowed(url, userAgent) !== false;
}
