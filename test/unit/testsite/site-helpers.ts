// Small HTTP helpers shared by the test-site tests: real requests over loopback via undici,
// with the body read whole and the elapsed time measured.

import { request, type Dispatcher } from 'undici';
import { afterEach } from 'vitest';
import { startTestSite, type ScenarioInput, type TestSite } from '../../../electron/core/testsite';

/** What a test needs from one response. */
export interface Fetched {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  readonly text: string;
  readonly ms: number;
}

/** GET (or another method) `url` and read the whole body. */
export async function get(
  url: string,
  options: { headers?: Record<string, string>; method?: Dispatcher.HttpMethod; dispatcher?: Dispatcher; signal?: AbortSignal } = {},
): Promise<Fetched> {
  const start = performance.now();
  const res = await request(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    dispatcher: options.dispatcher,
    signal: options.signal,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body, text: body.toString('utf8'), ms: performance.now() - start };
}

/** The href values of an HTML page, in document order. */
export function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const openSites: TestSite[] = [];
afterEach(async () => {
  await Promise.all(openSites.splice(0).map((site) => site.close()));
});

/** Starts a test site (log kept in memory by default) that is closed after the test. */
export async function start(scenario: ScenarioInput, options: Parameters<typeof startTestSite>[1] = { keepLog: true }): Promise<TestSite> {
  const site = await startTestSite(scenario, options);
  openSites.push(site);
  return site;
}
