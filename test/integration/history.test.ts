// A crawl recorded by runCrawl into a real SQLite file and read back: the rows agree with the
// summary, with the site's own log and with each other; changes and events are stored.

import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { openHistoryReader } from '../../electron/core/store/queries';
import { formatDebugLine } from '../../shared/debug-line';
import type { ResponseRecord } from '../../shared/types';
import { arrivals, crawlConfig, defer, ensureBuilt, freshDir, site } from './helpers';

// Loopback addresses of this file: 127.0.16.x.

beforeAll(ensureBuilt, 120_000);

function countBy<T>(xs: readonly T[], key: (x: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) {
    const k = key(x);
    if (k !== null) out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

describe('history in SQLite', () => {
  it('stores every response, change and event, consistent with the summary and the site log', async () => {
    const s = await site({
      seed: 11,
      hosts: {
        'ok.test': { address: '127.0.16.1', pages: 25, latency_ms: { base: 10, jitter: 5 } },
        'flaky.test': { address: '127.0.16.2', pages: 25, latency_ms: 10, statuses: { '503': 0.2, '404': 0.1 }, hang: ['/page/7'] },
      },
    });
    const db = join(freshDir(), 'history.sqlite');
    const { summary, stats } = await runCrawl({
      config: crawlConfig({
        name: 'history test',
        seeds: [`${s.origin('ok.test')}/`, `${s.origin('flaky.test')}/`, `${s.origin('flaky.test')}/page/7`],
        settings: {
          AUTOTHROTTLE_ENABLED: true,
          AUTOTHROTTLE_DEBUG: true,
          AUTOTHROTTLE_START_DELAY: 0.02,
          AUTOTHROTTLE_TARGET_CONCURRENCY: 2,
          CONCURRENT_REQUESTS_PER_DOMAIN: 3,
          DOWNLOAD_TIMEOUT: 0.3,
          RANDOMIZE_DOWNLOAD_DELAY: false,
          // This test is about what is stored; backoff and its retries have their own tests.
          BACKOFF_HTTP_CODES: [],
          BACKOFF_EXCEPTIONS: [],
        },
        resolve: s.resolve,
      }),
      db,
      onStart: (crawler) => {
        expect(crawler.updateSettings({ AUTOTHROTTLE_MAX_DELAY: 2 }, 'user').ok).toBe(true);
        crawler.pinConcurrency('ok.test', 2);
      },
    });
    expect(stats.status).toBe('finished');

    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const id = summary.crawl_id;
    expect(reader.listCrawls().map((c) => c.id)).toContain(id);
    const crawlRow = reader.getCrawl(id)!;
    expect(crawlRow).toMatchObject({ name: 'history test', status: 'finished' });
    expect(crawlRow.summary).toEqual(summary);
    expect(crawlRow.startedAt).not.toBeNull();
    expect(crawlRow.finishedAt).toBeGreaterThanOrEqual(crawlRow.startedAt!);

    // The stored running totals give back the printed summary.
    const fromDb = reader.crawlSummary(id);
    expect({ ...fromDb, seconds: 0 }).toEqual({ ...summary, seconds: 0 });
    expect(Math.abs(fromDb.seconds - summary.seconds)).toBeLessThan(0.01);

    // The raw rows agree with the summary.
    const rows: ResponseRecord[] = reader.responses(id);
    expect(rows).toHaveLength(summary.requests);
    expect(rows.filter((r) => r.status !== null)).toHaveLength(summary.responses);
    expect(rows.filter((r) => r.errorKind !== null)).toHaveLength(summary.failures);
    expect(countBy(rows, (r) => (r.status === null ? null : String(r.status)))).toEqual(summary.by_status);
    expect(new Set(rows.map((r) => r.slot)).size).toBe(summary.slots);
    expect(summary.requests).toBe(summary.responses + summary.failures);
    // The flaky host's statuses and the hang show up.
    expect(summary.by_status['503']).toBeGreaterThan(0);
    expect(summary.by_status['404']).toBeGreaterThan(0);
    // The hang times out on every attempt: the first and RETRY_TIMES (2) retries, then it is given up.
    expect(rows.filter((r) => r.errorKind === 'timeout').map((r) => new URL(r.url).pathname)).toEqual(['/page/7', '/page/7', '/page/7']);

    // …and with the site: one row per request it received, per host.
    for (const host of ['ok.test', 'flaky.test']) {
      const mine = rows.filter((r) => r.slot === host);
      expect(mine).toHaveLength(arrivals(s, host).length);
      const statuses = countBy(mine, (r) => String(r.status ?? 0));
      expect(statuses).toEqual(countBy(arrivals(s, host), (e) => String(e.status)));
    }

    // Per-slot summaries agree with the rows.
    const slots = reader.slotSummaries(id);
    expect(slots.map((x) => x.slot)).toEqual(['flaky.test', 'ok.test']);
    for (const x of slots) {
      const mine = rows.filter((r) => r.slot === x.slot);
      expect(x.requests).toBe(mine.length);
      expect(x.responses).toBe(mine.filter((r) => r.status !== null).length);
      expect(x.failures).toBe(mine.filter((r) => r.errorKind !== null).length);
      expect(x.s2xx).toBe(mine.filter((r) => r.status !== null && r.status >= 200 && r.status < 300).length);
      expect(x.s5xx).toBe(mine.filter((r) => r.status !== null && r.status >= 500).length);
      expect(x.bytes).toBe(mine.reduce((a, r) => a + r.bytes, 0));
      expect(x.lastDelay).toBe(mine[mine.length - 1].delayAfter);
      expect([x.lastCause, x.lastBackoffLevel]).toEqual([mine[mine.length - 1].delayCause, mine[mine.length - 1].backoffLevel]);
    }

    // Changes: the setting change and the slot pin, both by the user.
    const changes = reader.changes(id);
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ slot: null, setting: 'AUTOTHROTTLE_MAX_DELAY', source: 'user', oldValue: 60, newValue: 2 }),
        expect.objectContaining({ slot: 'ok.test', source: 'user', oldValue: null, newValue: 2 }),
      ]),
    );

    // Events: one stored debug line per adjusted response, matching the stored row; the timeout error.
    const debug = reader.events(id, { kind: 'debug' });
    const adjusted = rows.filter((r) => r.status !== null && r.latency !== null);
    expect(debug).toHaveLength(adjusted.length);
    const lines = new Map<string, number>();
    for (const r of adjusted) {
      const line = formatDebugLine({ slot: r.slot, concurrency: r.inFlight, delay: r.delayAfter, oldDelay: r.delayBefore, latency: r.latency!, size: r.bytes });
      lines.set(line, (lines.get(line) ?? 0) + 1);
    }
    for (const e of debug) {
      const n = lines.get(e.text);
      expect(n, `stored debug line without a matching row: ${e.text}`).toBeGreaterThan(0);
      lines.set(e.text, n! - 1);
    }
    const errors = reader.events(id, { kind: 'error' });
    expect(errors.some((e) => e.code === 'timeout' && e.slot === 'flaky.test' && e.text.includes('/page/7'))).toBe(true);
    expect(errors.filter((e) => e.code === 'retries-exhausted').map((e) => new URL(/gave up on (\S+)/.exec(e.text)![1]).pathname)).toEqual(['/page/7']);
  });

  it('counts a redirect chain cut at the limit the same way in the summary and in the database', async () => {
    const chain: Record<string, string> = {};
    for (let i = 0; i < 25; i++) chain[`/r/${i}`] = `/r/${i + 1}`;
    const s = await site({ hosts: { 'redir.test': { address: '127.0.16.10', pages: 2, redirects: chain } } });
    const db = join(freshDir(), 'history.sqlite');
    const { summary } = await runCrawl({
      config: crawlConfig({
        seeds: [`${s.origin('redir.test')}/r/0`, `${s.origin('redir.test')}/`],
        follow: { scope: 'none' },
        settings: { ROBOTSTXT_OBEY: false, DOWNLOAD_DELAY: 0 },
        resolve: s.resolve,
      }),
      db,
    });
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const fromDb = reader.crawlSummary(summary.crawl_id);
    const rows = reader.responses(summary.crawl_id);
    expect(rows).toHaveLength(arrivals(s, 'redir.test').length);
    expect(summary.requests).toBe(rows.length);
    // Every request ends as exactly one response or one failure (the cut chain's last 301 is a
    // response; counting it again as a failure without a row breaks both this and the database totals).
    expect(summary.responses + summary.failures, `summary ${JSON.stringify(summary)}: responses + failures != requests`).toBe(summary.requests);
    expect({ failures: fromDb.failures, responses: fromDb.responses, requests: fromDb.requests }).toEqual({
      failures: summary.failures,
      responses: summary.responses,
      requests: summary.requests,
    });
    const events = reader.events(summary.crawl_id, { kind: 'error' });
    expect(events.filter((e) => e.code === 'redirect-limit')).toHaveLength(1);
  });
});
