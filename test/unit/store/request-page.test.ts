// The Requests tab's reads against a brute-force answer: every filter, both orders, keyset pages
// and offset jumps give exactly the rows a plain scan gives, the totals agree, a filter no index covers
// pages on by its `next` cursor; the Scrapy stats count what was written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { RequestCursor, RequestFilter, RequestOrder, RequestRow } from '../../../shared/contract';
import type { FailureKind, ResponseRecord } from '../../../shared/types';
import { openHistoryReader, type HistoryReader } from '../../../electron/core/store/queries';
import type { HistoryWriter } from '../../../electron/core/store/history-writer';
import { buildStoreBundle, freshDir, sampleResponse, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
}, 60_000);
afterAll(() => bundle?.remove());

const N = 3000;
const KINDS: FailureKind[] = ['timeout', 'connect-refused', 'dns'];

/** Row i: mostly 200, every 17th a 429, every 23rd a 503, every 31st a failure, every 41st a 301; some out of time order. */
function row(i: number): ResponseRecord {
  const status = i % 31 === 0 ? null : i % 17 === 0 ? 429 : i % 23 === 0 ? 503 : i % 41 === 0 ? 301 : 200;
  const base = sampleResponse(i, { status, errorKind: status === null ? KINDS[i % 3] : null, errorMessage: status === null ? 'x' : null, attempt: i % 13 === 0 ? 1 : 0 });
  // Every 50th row ends at the same instant as the one before (ties broken by row id), every 97th a little earlier.
  const t = i % 50 === 0 ? sampleResponse(i - 1).t : i % 97 === 0 ? base.t - 25 : base.t;
  return { ...base, t, url: i === 42 ? 'https://host0.example/robots.txt' : base.url };
}

async function writeCrawl(): Promise<{ reader: HistoryReader; id: number; rows: ResponseRecord[] }> {
  const dir = freshDir();
  const { openHistoryWriter } = (await import(bundle.writerModule.href)) as { openHistoryWriter: (f: string, o: object) => Promise<HistoryWriter> };
  const file = join(dir, 'h.sqlite');
  const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile, background: false });
  const id = await writer.createCrawl('requests', {}, {});
  const rows: ResponseRecord[] = [];
  for (let i = 1; i <= N; i++) {
    const r = row(i);
    rows.push(r);
    writer.recordResponse(id, r);
  }
  writer.recordEvent(id, { t: 1, slot: 'host1.example', kind: 'error', code: 'retries-exhausted', text: 'gave up' });
  await writer.flush();
  await writer.close();
  const reader = openHistoryReader(file);
  return { reader, id, rows };
}

const matches = (r: ResponseRecord, f: RequestFilter): boolean => {
  const s = r.status;
  if (f.slot !== undefined && r.slot !== f.slot) return false;
  if (f.errorKind !== undefined && r.errorKind !== f.errorKind) return false;
  if (f.text && !r.url.includes(f.text)) return false;
  switch (f.statusClass) {
    case undefined: return true;
    case 'failed': return s === null;
    case '429': return s === 429;
    default: return s !== null && Math.floor(s / 100) === Number(f.statusClass[0]);
  }
};

/** Row ids (1-based, in insertion order) in the order the tab lists them. */
function expected(rows: readonly ResponseRecord[], f: RequestFilter, order: RequestOrder): number[] {
  const ids = rows.map((r, i) => ({ r, id: i + 1 })).filter(({ r }) => matches(r, f));
  ids.sort((a, b) => a.r.t - b.r.t || a.id - b.id);
  if (order === 'newest') ids.reverse();
  return ids.map((x) => x.id);
}

/** Every row of a filter, page by page with `after`. */
function pageAll(reader: HistoryReader, id: number, f: RequestFilter, order: RequestOrder, limit: number): RequestRow[] {
  const first = reader.requestPage(id, { order, filter: f, limit, count: true });
  const out = [...first.rows];
  let next = first.next;
  const until = first.head ?? undefined;
  for (let guard = 0; next !== null && guard < 10_000; guard++) {
    const p = reader.requestPage(id, { order, filter: f, after: next as RequestCursor, until, limit, count: false });
    out.push(...p.rows);
    next = p.next;
  }
  return out;
}

describe('requests.page', () => {
  const filters: RequestFilter[] = [
    {}, { statusClass: '2xx' }, { statusClass: '3xx' }, { statusClass: '4xx' }, { statusClass: '429' }, { statusClass: '5xx' }, { statusClass: 'failed' },
    { slot: 'host3.example' }, { slot: 'host3.example', statusClass: '429' }, { errorKind: 'timeout' }, { text: '/page/1' },
    { slot: 'host5.example', text: '9' }, { statusClass: '2xx', text: '77' }, { slot: 'nope.example' },
  ];

  it('gives exactly the rows a plain scan gives, for every filter and both orders, page by page', async () => {
    const { reader, id, rows } = await writeCrawl();
    try {
      for (const f of filters) {
        for (const order of ['newest', 'oldest'] as const) {
          const want = expected(rows, f, order);
          const got = pageAll(reader, id, f, order, 37).map((r) => r.id);
          expect(got, `${JSON.stringify(f)} ${order}`).toEqual(want);
          const first = reader.requestPage(id, { order, filter: f, limit: 5, count: true });
          if (first.total !== null && first.total !== undefined) expect(first.total, `total of ${JSON.stringify(f)}`).toBe(want.length);
          expect(first.seekable, `seekable ${JSON.stringify(f)}`).toBe(!f.text && f.slot !== 'nope.example');
          // A jump by offset lands on the same row a plain scan puts there.
          if (first.seekable && want.length > 20) {
            for (const offset of [1, 19, Math.floor(want.length / 2), want.length - 1]) {
              const p = reader.requestPage(id, { order, filter: f, offset, until: first.head ?? undefined, limit: 3, count: false });
              expect(p.rows.map((r) => r.id), `offset ${offset} of ${JSON.stringify(f)} ${order}`).toEqual(want.slice(offset, offset + 3));
            }
          }
        }
      }
      // Every recorded field comes back, the attempt included.
      const one = reader.requestPage(id, { order: 'oldest', filter: {}, limit: 13, count: false }).rows[12];
      expect(one).toMatchObject({ ...rows[12], id: 13, attempt: 1 });
    } finally {
      reader.close();
    }
  }, 60_000);

  it('counts the rows up to the anchor only; rows written after it wait for a new anchor', async () => {
    const { reader, id, rows } = await writeCrawl();
    try {
      const first = reader.requestPage(id, { order: 'newest', filter: {}, limit: 10, count: true });
      expect(first.total).toBe(rows.length);
      expect(first.head?.[1]).toBe(expected(rows, {}, 'newest')[0]);
      expect(first.rows[0].id).toBe(first.head?.[1]);
    } finally {
      reader.close();
    }
  }, 60_000);

  it('gives the Scrapy stats of what was written', async () => {
    const { reader, id, rows } = await writeCrawl();
    try {
      const stats = new Map(reader.scrapyStats(id, Date.now()));
      const statuses = rows.filter((r) => r.status !== null);
      expect(stats.get('downloader/request_count')).toBe(rows.length);
      expect(stats.get('downloader/response_count')).toBe(statuses.length);
      expect(stats.get('downloader/response_status_count/429')).toBe(rows.filter((r) => r.status === 429).length);
      expect(stats.get('downloader/exception_count')).toBe(rows.length - statuses.length);
      expect(stats.get('downloader/exception_type_count/timeout')).toBe(rows.filter((r) => r.errorKind === 'timeout').length);
      expect(stats.get('retry/count')).toBe(rows.filter((r) => (r.attempt ?? 0) > 0).length);
      expect(stats.get('retry/max_reached')).toBe(1);
      expect(stats.get('robotstxt/request_count')).toBe(1);
      expect(stats.get('log_count/ERROR')).toBe(1);
      expect(stats.has('finish_reason')).toBe(false);
      const names = [...stats.keys()];
      expect(names).toEqual([...names].sort());
    } finally {
      reader.close();
    }
  }, 60_000);
});
