// Scrapy logs written with AUTOTHROTTLE_DEBUG imported as crawls (real SQLite through the history
// writer): real Scrapy 2.8 logs, hand-checked line shapes of other versions and log formats,
// unreadable lines counted, and an import exported back to the Scrapy debug text line for line.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/create-core';
import { exportHistory } from '../../electron/core/store/export/index';
import { importScrapyLog } from '../../electron/core/store/import/import-scrapy';
import { parseLogLine } from '../../electron/core/store/import/scrapy-log';
import { openHistoryReader } from '../../electron/core/store/queries';
import { formatDebugLine, scrapyLogPrefix } from '../../shared/debug-line';
import type { Settings } from '../../shared/settings';
import { CLI, ROOT, defer, ensureBuilt, freshDir, site } from './helpers';

// Loopback addresses of this file: 127.0.46.40-49.

const FIXTURES = join(ROOT, 'test', 'fixtures', 'scrapy-logs');
const fixture = (name: string) => join(FIXTURES, name);
const UTC = { offsetMinutes: 0 };

beforeAll(ensureBuilt, 120_000);

async function scrapyDebugExport(db: string, crawlId: number): Promise<string[]> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  await exportHistory(db, { crawlId, format: 'scrapy-debug' }, out);
  return Buffer.concat(chunks).toString('utf8').split('\n').slice(0, -1);
}

/** The throttle lines of a log, as written. */
const throttleLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('[scrapy.extensions.throttle]'));

/** The `host path status` of a URL with the test site's host names put back for its addresses. */
function requestKey(url: string, status: number | null, names: Record<string, string>): string {
  const u = new URL(url);
  return `${names[u.hostname] ?? u.hostname} ${u.pathname}${u.search} ${status}`;
}

function readCrawl(db: string, crawlId: number) {
  const reader = openHistoryReader(db);
  try {
    return {
      crawl: reader.getCrawl(crawlId)!,
      rows: reader.responses(crawlId),
      changes: reader.changes(crawlId),
      events: reader.events(crawlId),
      list: reader.listCrawls(),
    };
  } finally {
    reader.close();
  }
}

describe('a real Scrapy 2.8 log', () => {
  it('(DEBUG level) becomes a finished crawl: one response per debug line, status and URL from the next Crawled/Redirecting/Retrying line', async () => {
    const file = fixture('scrapy-2.8.0-debug.log');
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(file, db);
    const lines = throttleLines(file);
    expect(report).toMatchObject({
      lines: 158, debugLines: lines.length, withStatus: lines.length, slots: 2, unreadable: 0, firstUnreadable: [], scrapyVersion: '2.8.0',
    });
    expect(report.settingsApplied).toEqual(expect.arrayContaining(['AUTOTHROTTLE_DEBUG', 'AUTOTHROTTLE_ENABLED', 'AUTOTHROTTLE_MAX_DELAY',
      'AUTOTHROTTLE_START_DELAY', 'AUTOTHROTTLE_TARGET_CONCURRENCY', 'CONCURRENT_REQUESTS_PER_DOMAIN']));
    const { crawl, rows, changes, events } = readCrawl(db, report.crawlId!);
    expect(crawl.status).toBe('finished');
    expect(crawl.name).toBe('Scrapy log scrapy-2.8.0-debug.log');
    const settings = crawl.settings as Settings;
    expect(settings).toMatchObject({ AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.2, AUTOTHROTTLE_MAX_DELAY: 5, AUTOTHROTTLE_TARGET_CONCURRENCY: 2, CONCURRENT_REQUESTS_PER_DOMAIN: 4 });
    // The crawl's times are the log's "Spider opened" and "Spider closed" lines.
    const text = readFileSync(file, 'utf8');
    const timeOf = (needle: string) => parseLogLine(text.split('\n').find((l) => l.includes(needle))!, 'local');
    expect(crawl.startedAt).toBe((timeOf('Spider opened') as { time: number }).time);
    expect(crawl.finishedAt).toBe((timeOf('Spider closed') as { time: number }).time);

    // Ground truth: the test site's own log of the requests this Scrapy run made.
    const scenario = JSON.parse(readFileSync(fixture('fixture-site.json'), 'utf8')) as { hosts: Record<string, { address: string }> };
    const names = Object.fromEntries(Object.entries(scenario.hosts).map(([name, h]) => [h.address, name]));
    const served = readFileSync(fixture('scrapy-2.8.0-debug.site-log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { host: string; path: string; status: number });
    expect(rows.map((r) => requestKey(r.url, r.status, names)).sort()).toEqual(served.map((e) => `${e.host} ${e.path} ${e.status}`).sort());

    // Each row carries its line's numbers; a delay change is a change; each line is a debug event.
    for (const [i, r] of rows.entries()) {
      const l = parseLogLine(lines[i], 'local');
      if (l.kind !== 'debug') throw new Error(`line ${i} did not parse`);
      expect(r.slot).toBe(l.fields.slot);
      expect(r.inFlight).toBe(l.fields.conc);
      expect(r.bytes).toBe(l.fields.size);
      expect(r.t).toBe(l.time);
      expect(Math.trunc(r.latency! * 1000)).toBe(l.fields.latencyMs);
      expect(Math.trunc(r.delayAfter * 1000)).toBe(l.fields.delayMs);
      expect(r.method).toBe('GET');
    }
    expect(changes.filter((c) => c.source === 'autothrottle' && c.setting === 'delay')).toHaveLength(lines.filter((l) => !l.includes('(+0)')).length);
    expect(events.filter((e) => e.kind === 'debug').map((e) => e.text)).toEqual(lines.map((l) => l.slice(l.indexOf('slot: '))));
    expect(events.filter((e) => e.kind !== 'debug').map((e) => e.text)).toEqual(expect.arrayContaining([expect.stringMatching(/^\[scrapy.downloadermiddlewares.retry\] Gave up retrying/)]));

    // Exported back to Scrapy's debug text: the same lines, byte for byte.
    expect(await scrapyDebugExport(db, report.crawlId!)).toEqual(lines);
  });

  it('(INFO level, milliseconds in the time) imports every debug line; without Crawled lines the status stays unknown', async () => {
    const file = fixture('scrapy-2.8.0-info-msecs.log');
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(file, db, { name: 'info level' });
    const lines = throttleLines(file);
    expect(report).toMatchObject({ lines: 116, debugLines: lines.length, withStatus: 0, slots: 2, unreadable: 0, name: 'info level' });
    const { rows } = readCrawl(db, report.crawlId!);
    expect(rows.every((r) => r.status === null && r.url === '' && r.method === '' && r.errorKind === null)).toBe(true);
    const exported = await scrapyDebugExport(db, report.crawlId!);
    expect(exported).toHaveLength(lines.length);
    for (const [i, line] of exported.entries()) {
      const original = parseLogLine(lines[i], 'local');
      const back = parseLogLine(line, 'local');
      if (original.kind !== 'debug' || back.kind !== 'debug') throw new Error(`line ${i} did not parse`);
      expect(original.time! % 1000).toBe(rows[i].t % 1000); // the milliseconds were read
      expect(back.message).toBe(original.message);
      expect(back.time).toBe(Math.floor(original.time! / 1000) * 1000); // Scrapy's default prefix has whole seconds
    }
  });
});

interface ExpectedDebug {
  line: number; time: string; slot: string; conc: number | null; delayMs: number; diffMs: number; latencyMs: number; size: number;
  numbers: 'truncated' | 'rounded'; status: number | null; method: string; url: string;
}

describe('line shapes of Scrapy 2.8 to 2.18 and other log formats', () => {
  const expected = JSON.parse(readFileSync(fixture('line-shapes.expected.json'), 'utf8')) as {
    lines: number; scrapyVersion: string; startedAt: string; finishedAt: string; settingsApplied: string[]; settingsIgnored: string[];
    debug: ExpectedDebug[]; unreadable: { line: number; reason: string }[];
  };
  const logLines = readFileSync(fixture('line-shapes.log'), 'utf8').split('\n');

  it('parses each debug line to its hand-checked numbers', () => {
    let lastTime: number | null = null;
    for (const [i, raw] of logLines.entries()) {
      const l = parseLogLine(raw.replace(/\r$/, ''), UTC);
      const want = expected.debug.find((d) => d.line === i + 1);
      const bad = expected.unreadable.find((u) => u.line === i + 1);
      if (want) {
        expect(l.kind, `line ${i + 1}`).toBe('debug');
        if (l.kind !== 'debug') continue;
        const { line, time, status, method, url, ...fields } = want;
        expect(l.fields, `line ${line}`).toEqual({ label: fields.numbers === 'rounded' ? 'scope' : 'slot', ...fields });
        expect(l.time ?? lastTime, `line ${line}`).toBe(Date.parse(time));
      } else if (bad) {
        expect(l, `line ${i + 1}`).toMatchObject({ kind: 'unreadable', reason: bad.reason });
      } else {
        expect(['record', 'other'], `line ${i + 1}: ${raw}`).toContain(l.kind);
      }
      if ((l.kind === 'record' || l.kind === 'debug') && l.time !== null) lastTime = l.time;
    }
  });

  it('imports them (times in UTC), counts the unreadable lines with their numbers, and exports them back', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(fixture('line-shapes.log'), db, { tz: UTC });
    expect(report).toMatchObject({
      lines: expected.lines, debugLines: expected.debug.length, unreadable: expected.unreadable.length, scrapyVersion: expected.scrapyVersion,
      startedAt: Date.parse(expected.startedAt), finishedAt: Date.parse(expected.finishedAt),
      settingsApplied: expected.settingsApplied, settingsIgnored: expected.settingsIgnored,
      withStatus: expected.debug.filter((d) => d.status !== null).length,
      slots: new Set(expected.debug.map((d) => d.slot)).size,
    });
    expect(report.firstUnreadable.map((u) => ({ line: u.line, reason: u.reason }))).toEqual(expected.unreadable);
    expect(report.firstUnreadable[0].text).toBe(logLines[26]);

    const { crawl, rows, events } = readCrawl(db, report.crawlId!);
    expect((crawl.settings as Settings).DOWNLOAD_DELAY).toBe(0.5);
    // Rows come back ordered by time; the file order breaks ties.
    const want = [...expected.debug].sort((a, b) => Date.parse(a.time) - Date.parse(b.time) || a.line - b.line);
    expect(rows).toHaveLength(want.length);
    const cut = (x: number, d: ExpectedDebug) => (d.numbers === 'rounded' ? Math.round(x) : Math.trunc(x));
    for (const [i, r] of rows.entries()) {
      const d = want[i];
      const at = `line ${d.line}`;
      expect(r.t, at).toBe(Date.parse(d.time));
      expect(r.slot, at).toBe(d.slot);
      expect(r.inFlight, at).toBe(d.conc ?? 0);
      expect(r.bytes, at).toBe(d.size);
      expect(cut(r.delayAfter * 1000, d), at).toBe(d.delayMs);
      expect(cut((r.delayAfter - r.delayBefore) * 1000, d) + 0, at).toBe(d.diffMs);
      expect(cut(r.latency! * 1000, d), at).toBe(d.latencyMs);
      expect({ status: r.status, method: r.method, url: r.url }, at).toEqual({ status: d.status, method: d.method, url: d.url });
      // The stored debug event is the line's message as Scrapy wrote it.
      const message = logLines[d.line - 1].replace(/\r$/, '');
      expect(events.some((e) => e.kind === 'debug' && e.t === r.t && e.text === message.slice(message.search(/(slot|scope): /))), at).toBe(true);
    }

    // Back to the Scrapy text: Scrapy 2.x lines come back as written; the draft's rounded `scope:` lines in 2.x form.
    const exported = await scrapyDebugExport(db, report.crawlId!);
    expect(exported).toHaveLength(want.length);
    for (const [i, line] of exported.entries()) {
      const d = want[i];
      const message = logLines[d.line - 1].replace(/\r$/, '');
      const back = parseLogLine(line, 'local');
      if (back.kind !== 'debug') throw new Error(`exported line ${i} did not parse: ${line}`);
      expect(line.startsWith(scrapyLogPrefix(rows[i].t))).toBe(true);
      if (d.numbers === 'truncated') expect(back.message, `line ${d.line}`).toBe(message.slice(message.indexOf('slot: ')));
      else {
        expect(back.message).toBe(formatDebugLine({ slot: d.slot, concurrency: 0, delay: d.delayMs / 1000, oldDelay: (d.delayMs - d.diffMs) / 1000, latency: d.latencyMs / 1000, size: d.size }));
      }
    }
  });

  it('reads times without an offset in the local time zone unless told otherwise', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(fixture('line-shapes.log'), db);
    const { rows } = readCrawl(db, report.crawlId!);
    const first = rows.find((r) => r.slot === 'alpha.test')!;
    expect(first.t).toBe(new Date(2026, 10, 22, 10, 0, 0).getTime());
    // A line with its own offset is the same instant whatever the zone.
    expect(rows.find((r) => r.slot === 'zoned.test')!.t).toBe(Date.parse('2026-11-22T09:00:02Z'));
  });
});

describe('slotscope import', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, 'import', ...args], { cwd: ROOT, encoding: 'utf8' });

  it('imports, prints a JSON report on stdout, and lists the unreadable lines on stderr without failing', () => {
    const db = join(freshDir(), 'history.sqlite');
    const r = run(['--scrapy-log', fixture('line-shapes.log'), '--db', db, '--name', 'shapes', '--tz', 'UTC']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ crawl_id: 1, name: 'shapes', lines: 36, debug_lines: 16, unreadable: 3, unreadable_lines: [27, 28, 30], scrapy_version: '2.18.0' });
    expect(r.stderr).toContain('import: line 27 not read (no `latency: N ms` field): 2026-11-22 10:00:07 [scrapy.extensions.throttle] INFO: slot: cut.test');
    expect(r.stderr).toMatch(/import: 16 debug lines of 36 lines \(Scrapy 2.18.0\) -> crawl 1 "shapes"/);
    // A second import adds a second crawl to the same database.
    const again = run(['--scrapy-log', fixture('scrapy-2.8.0-debug.log'), '--db', db, '--quiet']);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ crawl_id: 2, debug_lines: 39, with_status: 39, unreadable: 0 });
    expect(again.stderr).toBe('');
    expect(readCrawl(db, 2).list.map((c) => c.name)).toEqual(['shapes', 'Scrapy log scrapy-2.8.0-debug.log']);
  });

  it('refuses bad flags with exit code 2, and a log without debug lines with exit code 1 and no crawl', () => {
    const dir = freshDir();
    const db = join(dir, 'history.sqlite');
    const cases: [string[], RegExp][] = [
      [['--db', db], /--scrapy-log FILE is required/],
      [['--scrapy-log', join(dir, 'missing.log'), '--db', db], /--scrapy-log: ".*missing.log" is not allowed \(an existing Scrapy log file; there is no such file\)/],
      [['--scrapy-log', fixture('line-shapes.log')], /--db FILE.sqlite is required/],
      [['--scrapy-log', fixture('line-shapes.log'), '--db', db, '--tz', 'Mars/Olympus'], /--tz: "Mars\/Olympus" is not allowed \(local, UTC, or an offset like \+02:00 or -0530\)/],
      [['--scrapy-log', fixture('line-shapes.log'), '--db', db, '--name', ' '], /--name: " " is not allowed \(a non-empty name\)/],
      [['--scrapy-log', fixture('line-shapes.log'), '--db', db, '--speed', 'fast'], /unknown flag "--speed"; known: --scrapy-log, --db, --name, --tz, --quiet/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const plain = join(dir, 'plain.log');
    writeFileSync(plain, '2026-11-22 10:00:00 [scrapy.core.engine] INFO: Spider opened\n2026-11-22 10:00:01 [scrapy.core.engine] INFO: Spider closed (finished)\n');
    const r = run(['--scrapy-log', plain, '--db', db]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no AUTOTHROTTLE_DEBUG line in .*plain.log \(2 lines read\).*Nothing was imported/s);
    expect(JSON.parse(r.stdout)).toMatchObject({ crawl_id: null, lines: 2 });
    expect(readCrawl0(db)).toEqual([]);
  });
});

function readCrawl0(db: string) {
  const reader = openHistoryReader(db);
  try {
    return reader.listCrawls();
  } finally {
    reader.close();
  }
}

describe('an imported crawl in the app', () => {
  it('is listed, has settings, slot history and debug lines like a recorded crawl', async () => {
    const db = join(freshDir(), 'history.sqlite');
    const report = await importScrapyLog(fixture('scrapy-2.8.0-debug.log'), db);
    const core = await createCore({ db });
    defer(() => core.close());
    const list = await core.dispatch('crawls.list', {});
    expect(list).toMatchObject({ ok: true, result: [{ id: report.crawlId, status: 'finished', requests: 39, responses: 39, slots: 2 }] });
    expect(await core.dispatch('settings.get', { id: report.crawlId })).toMatchObject({ ok: true, result: { AUTOTHROTTLE_TARGET_CONCURRENCY: 2 } });
    const history = await core.dispatch('slots.history', { id: report.crawlId, resolution: 'second' });
    expect(history.ok).toBe(true);
    const points = (history as { result: { requests: number }[] }).result;
    expect(points.reduce((a, p) => a + p.requests, 0)).toBe(39);
    const debug = await core.dispatch('log.events', { id: report.crawlId, kind: 'debug' });
    expect((debug as { result: unknown[] }).result).toHaveLength(39);
  });
});

/** A python3 that can import scrapy, or null. */
function scrapyPython(): string | null {
  for (const py of ['python3', '/usr/bin/python3']) {
    const r = spawnSync(py, ['-c', 'import scrapy'], { encoding: 'utf8' });
    if (r.status === 0) return py;
  }
  return null;
}
const PY = scrapyPython();

describe('a Scrapy crawl made now', () => {
  it.skipIf(PY === null)('(the installed Scrapy against the test site) imports with every response where the site saw it, and exports back line for line', async () => {
    const s = await site({
      seed: 21,
      hosts: {
        'quick.test': { address: '127.0.46.40', pages: 30, page_bytes: 1500, latency_ms: { base: 20, jitter: 8 }, redirects: { '/moved': '/page/29' } },
        'shaky.test': { address: '127.0.46.41', pages: 20, page_bytes: 3000, latency_ms: { base: 60, jitter: 20 }, statuses: { '503': 0.15, '404': 0.1 } },
      },
    });
    const dir = freshDir();
    const log = join(dir, 'scrapy.log');
    const bases = ['quick.test', 'shaky.test'].map((h) => `http://${s.resolve[h]}:${s.ports[h]}`);
    // Asynchronously: the test site answers from this process's event loop.
    const child = spawn(PY!, [fixture('fixture_spider.py'), log, '{}', ...bases], { stdio: ['ignore', 'ignore', 'pipe'] });
    defer(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code, stderr).toBe(0);
    const db = join(dir, 'history.sqlite');
    const report = await importScrapyLog(log, db);
    const lines = throttleLines(log);
    expect(lines.length).toBeGreaterThan(20);
    expect(report).toMatchObject({ debugLines: lines.length, withStatus: lines.length, unreadable: 0, slots: 2 });
    const names = { '127.0.46.40': 'quick.test', '127.0.46.41': 'shaky.test' };
    const { rows } = readCrawl(db, report.crawlId!);
    const served = s.log.filter((e) => e.path !== '/robots.txt').map((e) => `${e.host} ${e.path} ${e.status}`);
    expect(rows.map((x) => requestKey(x.url, x.status, names)).sort()).toEqual(served.sort());
    expect(await scrapyDebugExport(db, report.crawlId!)).toEqual(lines);
  }, 150_000);
});
