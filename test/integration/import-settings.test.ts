// The "Overridden settings" dict of an imported Scrapy log: every value that is a Python literal is
// read (pprint's multi-line and wrapped-string forms, both quotes, escapes, nested containers), a
// value that is not (`<class …>`, `<function …>`, other reprs) is skipped on its own and named with
// why (import report, CLI, an event of the crawl), and a what-if replay of the imported crawl with
// its own settings gives back the delays the log printed.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/create-core';
import { importScrapyLog } from '../../electron/core/store/import/import-scrapy';
import * as scrapyLog from '../../electron/core/store/import/scrapy-log';
import { openHistoryReader } from '../../electron/core/store/queries';
import type { Settings } from '../../shared/settings';
import type { ResponseRecord } from '../../shared/types';
import { CLI, ROOT, defer, ensureBuilt, freshDir } from './helpers';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'scrapy-logs');
const fixture = (name: string) => join(FIXTURES, name);
const UTC = { offsetMinutes: 0 };
const RUNSPIDER = fixture('scrapy-2.18.0-runspider.log');

beforeAll(ensureBuilt, 120_000);

interface Skipped {
  setting: string;
  reason: string;
}

/** A Scrapy 2.18 log around an "Overridden settings" dict (pprint form) with one debug line. */
function logWith(dict: string): string {
  const file = join(freshDir(), 'settings.log');
  writeFileSync(file, [
    '2026-11-20 09:59:59 [scrapy.utils.log] INFO: Scrapy 2.18.0 started (bot: scrapybot)',
    `2026-11-20 09:59:59 [scrapy.crawler] INFO: Overridden settings:\n${dict}`,
    '2026-11-20 09:59:59 [scrapy.core.engine] INFO: Spider opened',
    '2026-11-20 10:00:00 [scrapy.extensions.throttle] INFO: slot: 127.0.0.1 | conc: 1 | delay: 5000 ms (+0) | latency:    3 ms | size:   120 bytes',
    '2026-11-20 10:00:00 [scrapy.core.engine] DEBUG: Crawled (200) <GET http://127.0.0.1:8000/a> (referer: None)',
    '2026-11-20 10:00:01 [scrapy.core.engine] INFO: Spider closed (finished)',
    '',
  ].join('\n'));
  return file;
}

function crawlOf(db: string, crawlId: number) {
  const reader = openHistoryReader(db);
  try {
    return { crawl: reader.getCrawl(crawlId)!, events: reader.events(crawlId), rows: reader.responses(crawlId) };
  } finally {
    reader.close();
  }
}

describe('the Python-literal reader of the Overridden settings', () => {
  it('reads strings in either quote with escapes, numbers, True/False/None, and nested lists, tuples, dicts and sets', () => {
    const r = scrapyLog.readSettingsDict(String.raw`{'A': 'it\'s "quoted"',
 'B': "it's",
 'C': 'tab\there\nnew \\ back \x41\u00e9\U0001F600 \' end',
 'D': 'Mozilla/5.0 (compatible; shelf-audit/2.3; '
      '+https://crawl.example.test/bot.html)',
 'E': -12,
 'F': 0.25,
 'G': 1e+20,
 'H': 1e-07,
 'I': True,
 'J': False,
 'K': None,
 'L': [429, 503, (1, 'two', [3.5])],
 'M': {'search-api': {'concurrency': 1, 'delay': 0.8, 'randomize_delay': False}},
 'N': (1,),
 'O': (),
 'P': {1, 2},
 'Q': set(),
 'R': frozenset({'x'}),
 'S': inf,
 'T': -inf,
 'U': {},
 'V': ['caf\xe9', "say \"hi\""]}`);
    expect(r).not.toBeNull();
    expect(r!.skipped).toEqual([]);
    expect(r!.values).toEqual({
      A: 'it\'s "quoted"', B: "it's", C: 'tab\there\nnew \\ back Aé😀 \' end',
      D: 'Mozilla/5.0 (compatible; shelf-audit/2.3; +https://crawl.example.test/bot.html)',
      E: -12, F: 0.25, G: 1e20, H: 1e-7, I: true, J: false, K: null,
      L: [429, 503, [1, 'two', [3.5]]],
      M: { 'search-api': { concurrency: 1, delay: 0.8, randomize_delay: false } },
      N: [1], O: [], P: [1, 2], Q: [], R: ['x'], S: Infinity, T: -Infinity, U: {}, V: ['café', 'say "hi"'],
    });
  });

  it('skips each value that is not a literal, naming it and why, and reads every other key', () => {
    const r = scrapyLog.readSettingsDict(`{'AUTOTHROTTLE_ENABLED': True,
 'FEEDS': {'items.jsonl': {'format': 'jsonlines',
                           'item_filter': <class 'shelf.OnlyBooks'>}},
 'HANDLER': <function make_handler at 0x7f3a2c1e4ae0>,
 'LAMBDA': <function <lambda> at 0x7f3a2c1e4b80>,
 'METHOD': <bound method Shelf.pick of <shelf.Shelf object at 0x7f3a2c1f0d10>>,
 'ODD': <Odd it's odd>,
 'SPIDER_LOADER_CLASS': <class 'scrapy.spiderloader.DummySpiderLoader'>,
 'STARTED': datetime.datetime(2026, 11, 20, 10, 0),
 'RAW': b'bytes',
 'DOWNLOAD_DELAY': 0.05}`);
    expect(r!.values).toEqual({ AUTOTHROTTLE_ENABLED: true, DOWNLOAD_DELAY: 0.05 });
    expect(r!.skipped.map((s) => s.setting)).toEqual(['FEEDS', 'HANDLER', 'LAMBDA', 'METHOD', 'ODD', 'SPIDER_LOADER_CLASS', 'STARTED', 'RAW']);
    const why = Object.fromEntries(r!.skipped.map((s) => [s.setting, s.reason]));
    expect(why.SPIDER_LOADER_CLASS).toBe("not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>");
    expect(why.HANDLER).toBe('not a Python literal: <function make_handler at 0x7f3a2c1e4ae0>');
    expect(why.METHOD).toBe('not a Python literal: <bound method Shelf.pick of <shelf.Shelf object at 0x7f3a2c1f0d10>>');
    expect(why.FEEDS).toMatch(/^not a Python literal: \{'items\.jsonl'.*<class 'shelf\.OnlyBooks'>\}\}$/s);
    expect(why.STARTED).toBe('not a Python literal: datetime.datetime(2026, 11, 20, 10, 0)');
    expect(why.RAW).toBe("not a Python literal: b'bytes'");
  });

  it('keeps what comes before a value that is cut off or a key it cannot read', () => {
    expect(scrapyLog.readSettingsDict("{'A': 1,\n 'B': [1, 2")).toEqual({
      keys: ['A', 'B'], values: { A: 1 }, skipped: [{ setting: 'B', reason: 'cut off: [1, 2' }],
    });
    expect(scrapyLog.readSettingsDict("{'A': 'x', <Key object at 0x1>: 2, 'C': 3}")).toEqual({
      keys: ['A'], values: { A: 'x' }, skipped: [{ setting: '(the rest)', reason: 'unreadable from "<Key object at 0x1>: 2"' }],
    });
  });

  it('gives null for text that is not a dict', () => {
    expect(scrapyLog.readSettingsDict("['a', 'b']")).toBeNull();
    expect(scrapyLog.readSettingsDict('')).toBeNull();
  });
});

describe('a `scrapy runspider` log of Scrapy 2.18', () => {
  it('keeps every readable setting, skips SPIDER_LOADER_CLASS (a <class …> value) alone and says why', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(RUNSPIDER, db, { tz: UTC });
    expect(report.settingsApplied).toEqual(['AUTOTHROTTLE_DEBUG', 'AUTOTHROTTLE_ENABLED', 'AUTOTHROTTLE_MAX_DELAY', 'AUTOTHROTTLE_START_DELAY',
      'AUTOTHROTTLE_TARGET_CONCURRENCY', 'CONCURRENT_REQUESTS_PER_DOMAIN', 'DOWNLOAD_DELAY', 'USER_AGENT']);
    expect(report.settingsIgnored).toEqual(['LOG_FILE', 'SPIDER_LOADER_CLASS']);
    const skipped = (report as unknown as { settingsSkipped: Skipped[] }).settingsSkipped;
    expect(skipped).toEqual([{ setting: 'SPIDER_LOADER_CLASS', reason: "not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>" }]);

    const { crawl, events } = crawlOf(db, report.crawlId!);
    expect(crawl.settings as Settings).toMatchObject({
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_DEBUG: true, AUTOTHROTTLE_MAX_DELAY: 3, AUTOTHROTTLE_START_DELAY: 0.5,
      AUTOTHROTTLE_TARGET_CONCURRENCY: 1.5, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.05,
      USER_AGENT: 'Mozilla/5.0 (compatible; shelf-audit/2.3; +https://crawl.example.test/bot.html; ops@example.test)',
    });
    // An event of the crawl names the skipped setting and why, at the time of the settings line.
    const note = events.filter((e) => e.code === 'import-setting');
    expect(note).toHaveLength(1);
    expect(note[0]).toMatchObject({ kind: 'info', slot: null, t: Date.parse('2026-11-20T09:59:59Z') });
    expect(note[0].text).toContain('SPIDER_LOADER_CLASS');
    expect(note[0].text).toContain("not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>");
  });

  it('names a skipped setting that Slotscope uses, and one whose value Slotscope refuses, as warnings', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(logWith(`{'AUTOTHROTTLE_DEBUG': True,
 'AUTOTHROTTLE_ENABLED': True,
 'AUTOTHROTTLE_MAX_DELAY': <scrapy.settings.Lazy object at 0x7f00d1e2a9c0>,
 'AUTOTHROTTLE_START_DELAY': 5.0,
 'AUTOTHROTTLE_TARGET_CONCURRENCY': 0.0,
 'SPIDER_LOADER_CLASS': <class 'scrapy.spiderloader.DummySpiderLoader'>}`), db, { tz: UTC });
    expect(report.settingsApplied).toEqual(['AUTOTHROTTLE_DEBUG', 'AUTOTHROTTLE_ENABLED', 'AUTOTHROTTLE_START_DELAY']);
    expect(report.settingsIgnored).toEqual(['AUTOTHROTTLE_MAX_DELAY', 'AUTOTHROTTLE_TARGET_CONCURRENCY', 'SPIDER_LOADER_CLASS']);
    const skipped = (report as unknown as { settingsSkipped: Skipped[] }).settingsSkipped;
    expect(skipped).toEqual([
      { setting: 'AUTOTHROTTLE_MAX_DELAY', reason: 'not a Python literal: <scrapy.settings.Lazy object at 0x7f00d1e2a9c0>' },
      { setting: 'AUTOTHROTTLE_TARGET_CONCURRENCY', reason: expect.stringContaining('AUTOTHROTTLE_TARGET_CONCURRENCY: 0 is not allowed') },
      { setting: 'SPIDER_LOADER_CLASS', reason: "not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>" },
    ]);
    const { events, crawl } = crawlOf(db, report.crawlId!);
    expect(events.filter((e) => e.code === 'import-setting').map((e) => [e.kind, e.text.split(':')[0]])).toEqual([
      ['warning', 'Overridden settings'], ['warning', 'Overridden settings'], ['info', 'Overridden settings'],
    ]);
    expect((crawl.settings as Settings).AUTOTHROTTLE_MAX_DELAY).toBe(60);
  });

  it('slotscope import lists the skipped settings on stderr and in its JSON line', () => {
    const db = join(freshDir(), 'history.sqlite');
    const r = spawnSync(process.execPath, [CLI, 'import', '--scrapy-log', RUNSPIDER, '--db', db, '--tz', 'UTC'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("import: setting SPIDER_LOADER_CLASS skipped (not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>)");
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      settings_ignored: ['LOG_FILE', 'SPIDER_LOADER_CLASS'],
      settings_skipped: [{ setting: 'SPIDER_LOADER_CLASS', reason: "not a Python literal: <class 'scrapy.spiderloader.DummySpiderLoader'>" }],
    });
    expect(out.settings_applied).toContain('AUTOTHROTTLE_START_DELAY');
  });
});

/** Responses in replay order (t, id). */
function inOrder(db: string, crawlId: number): ResponseRecord[] {
  const reader = openHistoryReader(db);
  try {
    return reader.responses(crawlId);
  } finally {
    reader.close();
  }
}

describe('what-if replay of an imported Scrapy 2.18 crawl with its own settings', () => {
  // The log prints delays and latencies truncated to the millisecond; the import takes the middle of
  // each printed millisecond, so the replayed delay is within a millisecond of the printed one.
  // scrapy-2.8.0-debug.log is a real Scrapy log with 503s: Scrapy has no backoff, so neither has the import.
  for (const name of ['scrapy-2.18.0-runspider', 'scrapy-2.18.0-download-slot', 'scrapy-2.18.0-per-ip', 'scrapy-2.8.0-debug']) {
    it(`gives back the delays ${name}.log printed`, async () => {
      const db = join(freshDir(), 'history.sqlite');
      const log = fixture(`${name}.log`);
      const report = await importScrapyLog(log, db, { tz: UTC });
      const core = await createCore({ db });
      defer(() => core.close());
      const r = await core.dispatch('history.whatIf', { crawlId: report.crawlId, settings: {} });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      const derivedId = (r.result as { crawlId: number }).crawlId;
      const original = inOrder(db, report.crawlId!);
      const derived = inOrder(db, derivedId);
      expect(derived).toHaveLength(original.length);
      const printed = readFileSync(log, 'utf8').split('\n')
        .map((l) => scrapyLog.parseLogLine(l, UTC)).flatMap((l) => (l.kind === 'debug' ? [l.fields.delayMs] : []));
      const off = derived.map((d, i) => ({ i, slot: d.slot, printed: printed[i], replayed: d.delayAfter * 1000 }))
        .filter((x) => Math.abs(Math.trunc(x.replayed) - x.printed) > 1);
      expect(off).toEqual([]);
    });
  }
});
