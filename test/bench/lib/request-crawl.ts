// A finished crawl of many responses for the Requests tab's figures, written the way a crawl writes
// them: through the history writer (its worker commits batches and keeps every running total), so
// the rows, indexes and totals are exactly those of a real crawl of that size.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FailureKind, ResponseRecord } from '../../../shared/types';
import { openHistoryWriter } from '../../../electron/core/store/history-writer';
import { LATEST_SCHEMA_VERSION } from '../../../electron/core/store/migrate';
import { mulberry32 } from '../../../electron/core/testsite/random';

/** Bumped when the generated rows change, so a cached database is not reused. */
const GENERATOR = 1;

export interface RequestCrawl {
  readonly file: string;
  readonly crawlId: number;
  readonly rows: number;
  readonly slots: number;
  /** Rows per status class, as generated. */
  readonly s429: number;
  readonly s5xx: number;
  readonly failures: number;
  readonly t0: number;
  readonly t1: number;
  readonly writeSeconds: number | null;
}

/**
 * One finished crawl of `rows` responses over `slots` hosts (a few busy ones, a long tail) across
 * an hour: mostly 200s, some redirects and 404s, 1.5 % 429s (each retried), 1 % 5xx, 0.4 % failed
 * downloads. Cached under `dir` by size, schema and generator version.
 */
export async function requestCrawl(dir: string, rows: number, slots = 200): Promise<RequestCrawl> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `requests-${rows}-schema${LATEST_SCHEMA_VERSION}-gen${GENERATOR}.sqlite`);
  const t0 = Date.UTC(2026, 10, 22, 8, 0, 0);
  const t1 = t0 + 3_600_000;
  const r = mulberry32(16);
  const counts = { s429: 0, s5xx: 0, failures: 0 };
  const meta = join(dir, `${file.split('/').pop()}.json`);
  if (existsSync(`${file}.done`) && existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as RequestCrawl;
    return { ...m, writeSeconds: null };
  }
  for (const f of readdirSync(dir)) if (f.startsWith('requests-')) rmSync(join(dir, f), { force: true });
  const started = performance.now();
  const writer = await openHistoryWriter(file, { background: false });
  const crawlId = await writer.createCrawl('bench: 1,000,000 requests', {
    name: 'bench: requests', seeds: Array.from({ length: 5 }, (_, i) => `https://host-${i}.bench.test/`), follow: { scope: 'host' },
  }, { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4 });
  writer.updateCrawl(crawlId, { status: 'running', startedAt: t0 });
  const hosts = Array.from({ length: slots }, (_, i) => `host-${i}.bench.test`);
  const step = (t1 - t0) / rows;
  const kinds: FailureKind[] = ['timeout', 'connect-refused', 'connect-reset', 'dns'];
  const causes = ['autothrottle', 'floor', 'backoff', 'retry-after'] as const;
  for (let i = 0; i < rows; i++) {
    // A Zipf-like pick: host-0 gets a large share, the tail a little each.
    const host = hosts[Math.min(slots - 1, Math.floor(slots * r() ** 3))];
    const t = t0 + i * step + r() * step;
    const x = r();
    let status: number | null = 200;
    let errorKind: FailureKind | null = null;
    if (x < 0.004) {
      status = null;
      errorKind = kinds[Math.floor(r() * kinds.length)];
      counts.failures++;
    } else if (x < 0.014) {
      status = r() < 0.7 ? 503 : 500;
      counts.s5xx++;
    } else if (x < 0.029) {
      status = 429;
      counts.s429++;
    } else if (x < 0.039) status = 301;
    else if (x < 0.049) status = 404;
    const latency = status === null && errorKind === 'timeout' ? null : 0.02 + 0.3 * r() ** 2;
    const waitMs = Math.floor(2000 * r() ** 4);
    const backoffLevel = status === 429 || (status !== null && status >= 500) ? 1 + Math.floor(r() * 3) : r() < 0.05 ? 1 : 0;
    const rec: ResponseRecord = {
      t,
      startedAt: t - (latency ?? 5) * 1000 - 3,
      waitMs,
      slot: host,
      url: `https://${host}/catalogue/item-${i}.html?ref=${i % 97}`,
      method: 'GET',
      status,
      latency,
      downloadTime: status === null ? null : 0.003,
      bytes: status === null ? 0 : 500 + Math.floor(r() * 40_000),
      inFlight: 1 + Math.floor(r() * 4),
      delayBefore: 0.4,
      delayAfter: backoffLevel > 0 ? 1 + backoffLevel : 0.2 + r() * 0.5,
      delayCause: backoffLevel > 0 ? (status === 429 ? 'retry-after' : 'backoff') : causes[Math.floor(r() * 2)],
      backoffLevel,
      reused: r() < 0.9,
      errorKind,
      errorMessage: errorKind === null ? null : `${errorKind} after 5 s`,
      depth: 1 + Math.floor(r() * 4),
      contentType: status === null ? null : 'text/html; charset=utf-8',
      attempt: r() < 0.03 ? 1 + Math.floor(r() * 2) : 0,
    };
    writer.recordResponse(crawlId, rec);
    // Let the worker drain now and then instead of buffering the whole crawl.
    if (i % 50_000 === 49_999) await writer.flush();
  }
  writer.updateCrawl(crawlId, { status: 'finished', finishedAt: t1 });
  await writer.flush();
  await writer.close();
  const writeSeconds = (performance.now() - started) / 1000;
  const result: RequestCrawl = { file, crawlId, rows, slots, ...counts, t0, t1, writeSeconds };
  writeFileSync(meta, JSON.stringify(result));
  writeFileSync(`${file}.done`, `${rows} responses\n`);
  return result;
}
