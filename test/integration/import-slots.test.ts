// Scrapy 2.18 logs whose slot keys are not the responses' host names (meta["download_slot"], per-IP
// slots) imported with every row's status and URL: the debug line and its Crawled/Redirecting line
// are paired by order, not by host. The fixtures' .truth.json say which response each debug line was.

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
