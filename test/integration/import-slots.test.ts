// Scrapy logs whose slot keys are not the responses' host names (meta["download_slot"], per-IP
// slots) imported with every row's status and URL: the debug line and its Crawled/Redirecting line
// are paired by order, not by host. The 2.18-format fixtures' .truth.json say which response each
// debug line was; the real Scrapy 2.8 runs are checked against the test site's own request log.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importScrapyLog } from '../../electron/core/store/import/import-scrapy';
import { openHistoryReader } from '../../electron/core/store/queries';
import { ROOT, freshDir } from './helpers';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'scrapy-logs');
const fixture = (name: string) => join(FIXTURES, name);
const UTC = { offsetMinutes: 0 };

interface Truth {
  debug: { slot: string; status: number; url: string }[];
}

/** The imported rows in the order of their debug lines in the file (time, then file order). */
function rowsOf(db: string, crawlId: number) {
  const reader = openHistoryReader(db);
  try {
    return { rows: reader.responses(crawlId), events: reader.events(crawlId) };
  } finally {
    reader.close();
  }
}

async function importWithTruth(name: string) {
  const db = join(freshDir(), 'history.sqlite');
  const report = await importScrapyLog(fixture(`${name}.log`), db, { tz: UTC });
  const truth = JSON.parse(readFileSync(fixture(`${name}.truth.json`), 'utf8')) as Truth;
  const { rows, events } = rowsOf(db, report.crawlId!);
  return { db, report, truth, rows, events };
}

describe('a Scrapy 2.18 log whose slots are not host names', () => {
  it('meta["download_slot"]: all 43 rows get the status and URL of their own response', async () => {
    const { report, truth, rows } = await importWithTruth('scrapy-2.18.0-download-slot');
    expect(truth.debug).toHaveLength(43);
    expect(new Set(truth.debug.map((d) => d.slot))).toEqual(new Set(['catalog', 'search-api']));
    expect(report).toMatchObject({ debugLines: 43, withStatus: 43, slots: 2, unreadable: 0, scrapyVersion: '2.18.0' });
    expect(rows.map((r) => ({ slot: r.slot, status: r.status, url: r.url, method: r.method })))
      .toEqual(truth.debug.map((d) => ({ ...d, method: 'GET' })));
  });

  it('CONCURRENT_REQUESTS_PER_IP: hostname slots first, then the IP slot; every row gets its own status and URL', async () => {
    const { report, truth, rows, events } = await importWithTruth('scrapy-2.18.0-per-ip');
    const slots = new Set(truth.debug.map((d) => d.slot));
    expect(slots).toEqual(new Set(['shop.test', 'blog.test', '127.0.0.1']));
    expect(report).toMatchObject({ debugLines: truth.debug.length, withStatus: truth.debug.length, slots: 3, unreadable: 0 });
    expect(rows.map((r) => ({ slot: r.slot, status: r.status, url: r.url }))).toEqual(truth.debug);
    // The log's deprecation warning is an event of the crawl like any warning.
    expect(events.filter((e) => e.kind === 'warning').map((e) => e.text))
      .toEqual([expect.stringMatching(/^\[py\.warnings\] .*The CONCURRENT_REQUESTS_PER_IP setting is deprecated/)]);
  });

  it('host-name slots (a runspider log with a redirect, a 404 and two responses in flight) keep pairing by host', async () => {
    const { report, truth, rows } = await importWithTruth('scrapy-2.18.0-runspider');
    expect(report).toMatchObject({ debugLines: truth.debug.length, withStatus: truth.debug.length, slots: 2 });
    expect(rows.map((r) => ({ slot: r.slot, status: r.status, url: r.url }))).toEqual(truth.debug);
  });
});

describe('a real Scrapy 2.8 crawl of the test site whose slots are not host names', () => {
  /** `host path status` of a URL, with the test site's host name for its address. */
  const key = (url: string, status: number | null) => {
    const u = new URL(url);
    const host = ({ '127.0.0.1': 'localhost', '127.0.46.48': 'other.test' } as Record<string, string>)[u.hostname] ?? u.hostname;
    return `${host} ${u.pathname}${u.search} ${status}`;
  };
  const served = (name: string) => readFileSync(fixture(`${name}.site-log.jsonl`), 'utf8').trim().split('\n')
    .map((l) => JSON.parse(l) as { host: string; path: string; status: number }).map((e) => `${e.host} ${e.path} ${e.status}`);
  /** The response line right after each debug line (Scrapy 2.8 writes them next to each other). */
  const nextResponses = (name: string) => {
    const out: string[] = [];
    let waiting = false;
    for (const line of readFileSync(fixture(`${name}.log`), 'utf8').split('\n')) {
      if (line.includes('[scrapy.extensions.throttle]')) waiting = true;
      const m = /Crawled \((\d+)\) <GET (\S+)>|Redirecting \((\d+)\) to <GET \S+> from <GET (\S+)>|Retrying <GET (\S+)> \(failed \d+ times\): (\d+)/.exec(line);
      if (m && waiting) {
        out.push(key(m[2] ?? m[4] ?? m[5], Number(m[1] ?? m[3] ?? m[6])));
        waiting = false;
      }
    }
    return out;
  };

  for (const [name, slots] of [
    ['scrapy-2.8.0-download-slot', ['pages', 'search-api']],
    ['scrapy-2.8.0-per-ip', ['localhost', '127.0.0.1', '127.0.46.48']],
  ] as const) {
    it(`${name}.log: every row gets the status and URL of the response line next to its debug line`, async () => {
      const db = join(freshDir(), 'history.sqlite');
      const report = await importScrapyLog(fixture(`${name}.log`), db);
      const want = served(name);
      expect(report).toMatchObject({ debugLines: want.length, withStatus: want.length, slots: slots.length, unreadable: 0, scrapyVersion: '2.8.0' });
      const { rows } = rowsOf(db, report.crawlId!);
      expect(new Set(rows.map((r) => r.slot))).toEqual(new Set(slots));
      expect(rows.map((r) => key(r.url, r.status))).toEqual(nextResponses(name));
      expect(rows.map((r) => key(r.url, r.status)).sort()).toEqual([...want].sort());
    });
  }
});
