// The built-in scenario of the demo: a handful of hosts that behave differently enough to make
// the throttle visible (fast, flaky, rate-limited, crawl-delayed) without any setup.

import { parseScenario, type Scenario } from './scenario';
import type { TestSite } from './server';
import { curlResolveEntries } from './resolve-lookup';

/** Four hosts on 127.0.0.2 … 127.0.0.5, 30 to 60 pages each, each with one kind of trouble. */
export function demoScenario(): Scenario {
  return parseScenario({
    description: 'Slotscope demo: four hosts with different latency, errors, limits and robots rules',
    seed: 42,
    port: 0,
    hosts: {
      'fast.test': {
        description: 'quick and roomy: latency barely grows with concurrency',
        address: '127.0.0.2',
        pages: 60,
        page_bytes: 4000,
        latency_ms: { base: 40, jitter: 15, per_inflight: 5 },
        headers: { 'Cache-Control': 'max-age=60' },
        gzip: true,
      },
      'flaky.test': {
        description: 'slow, overloads under concurrency, and answers 503 now and then',
        address: '127.0.0.3',
        pages: 45,
        page_bytes: 6000,
        latency_ms: { base: 250, jitter: 80, per_inflight: 120 },
        statuses: { '503': 0.06, '500': 0.01 },
      },
      'limited.test': {
        description: 'a rate limit of 3 requests per second, 429 with Retry-After beyond it',
        address: '127.0.0.4',
        pages: 50,
        page_bytes: 3000,
        latency_ms: { base: 90, jitter: 30, per_inflight: 10 },
        rate_limit: { requests: 3, per_seconds: 1, status: 429, retry_after: 2 },
      },
      'polite.test': {
        description: 'asks for Crawl-delay: 1 and keeps /private/ out of bounds',
        address: '127.0.0.5',
        pages: 30,
        page_bytes: 2500,
        latency_ms: { base: 140, jitter: 40, per_inflight: 30 },
        robots: { crawl_delay: 1, disallow: ['/private/'] },
        redirects: { '/old-home': '/' },
      },
    },
  });
}

/** Start URLs of a running demo site, one per host (its `/`). */
export function demoSeeds(site: Pick<TestSite, 'hosts'>): string[] {
  return Object.values(site.hosts).map((base) => `${base}/`);
}

/** curl-style `name:port:address` resolve entries of a running site (name-based URLs). */
export function demoResolve(site: Pick<TestSite, 'resolve' | 'ports'>): string[] {
  return curlResolveEntries(site);
}
