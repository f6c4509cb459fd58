// Exports of a real crawl (the engine against the test site, history in a real SQLite file), each
// parsed back and compared with the rows in the database: JSONL, CSV (RFC 4180), HAR 1.2, Scrapy debug.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { createCore } from '../../electron/core/create-core';
import { EXPORT_FIELDS } from '../../electron/core/store/export/fields';
import { ExportError, exportHistory, exportToFile, type ExportQuery } from '../../electron/core/store/export/index';
import { openHistoryWriter } from '../../electron/core/store/history-writer';
import { parseLogLine } from '../../electron/core/store/import/scrapy-log';
import { openHistoryReader } from '../../electron/core/store/queries';
import { EXPORT_FORMATS, type AppEvents } from '../../shared/contract';
import { formatDebugLine, scrapyLogPrefix } from '../../shared/debug-line';
import { APP_VERSION } from '../../shared/settings';
import type { ResponseRecord } from '../../shared/types';
import { startTestSite } from '../../electron/core/testsite';
import { CLI, ROOT, crawlConfig, defer, ensureBuilt, freshDir } from './helpers';

// Loopback addresses of this file: 127.0.46.10-19.

/** What a test needs of the recorded crawl. */
interface Recorded {
  readonly db: string;
  readonly crawlId: number;
  readonly rows: ResponseRecord[];
}

let rec: Recorded;
/** A second crawl, written through the history writer, whose strings need CSV quoting. */
let odd: { crawlId: number; rows: ResponseRecord[] };

async function exportText(db: string, q: ExportQuery): Promise<{ text: string; rows: number; bytes: number; total: number }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const r = await exportHistory(db, q, out);
  const text = Buffer.concat(chunks).toString('utf8');
  return { text, rows: r.rows, bytes: r.bytes, total: r.total };
}

const withCrawl = (crawlId: number, r: ResponseRecord) => ({ crawlId, ...r });

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes; throws on anything else. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else {
          quoted = false;
          i++;
        }
      } else {
        field += c;
        i++;
      }
      continue;
    }
    if (c === '"') {
      if (field !== '' || wasQuoted) throw new Error(`CSV: quote inside an unquoted field at ${i}`);
      quoted = true;
      wasQuoted = true;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      wasQuoted = false;
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      wasQuoted = false;
      i += 2;
    } else if (c === '\r' || c === '\n') {
      throw new Error(`CSV: bare line break at ${i}`);
    } else {
      if (wasQuoted) throw new Error(`CSV: text after a closing quote at ${i}`);
      field += c;
      i++;
    }
  }
  if (quoted || field !== '' || row.length > 0) throw new Error('CSV: the last record does not end with CRLF');
  return rows;
}

/** A CSV field back to its typed value, by the unit the field table gives. */
function fromCsv(unit: string, s: string): unknown {
  const nullable = unit.endsWith(' or null');
  if (nullable && s === '') return null;
  const base = unit.replace(/ or null$/, '');
  if (base === 'text') return s;
  if (base === 'boolean') return s === 'true' ? true : s === 'false' ? false : `bad boolean ${s}`;
  return Number(s);
}

let shared: string;
afterAll(() => rmSync(shared, { recursive: true, force: true }));

beforeAll(async () => {
  await ensureBuilt();
  shared = mkdtempSync(join(tmpdir(), 'slotscope-export-'));
  const db = join(shared, 'history.sqlite');
  const s = await startTestSite({
    seed: 5,
    hosts: {
      'alpha.test': { address: '127.0.46.10', pages: 30, latency_ms: { base: 8, jitter: 4 }, gzip: true },
      'beta.test': { address: '127.0.46.11', pages: 20, latency_ms: 12, statuses: { '503': 0.15, '404': 0.1 }, hang: ['/page/5'] },
    },
  });
  const { summary } = await runCrawl({
    config: crawlConfig({
      name: 'export test',
      seeds: [`${s.origin('alpha.test')}/`, `${s.origin('beta.test')}/`, `${s.origin('beta.test')}/page/5`, `${s.origin('alpha.test')}/page/3?x=1&y=a%2Cb`],
      follow: { scope: 'host', max_pages: 60 },
      settings: {
        AUTOTHROTTLE_ENABLED: true,
        AUTOTHROTTLE_DEBUG: true,
        AUTOTHROTTLE_START_DELAY: 0.02,
        AUTOTHROTTLE_TARGET_CONCURRENCY: 2,
        CONCURRENT_REQUESTS_PER_DOMAIN: 3,
        DOWNLOAD_TIMEOUT: 0.4,
        RANDOMIZE_DOWNLOAD_DELAY: false,
        BACKOFF_HTTP_CODES: [],
        BACKOFF_EXCEPTIONS: [],
      },
      resolve: s.resolve,
    }),
    db,
  }).finally(() => s.close());
  const reader = openHistoryReader(db);
  const rows = reader.responses(summary.crawl_id);
  reader.close();
  rec = { db, crawlId: summary.crawl_id, rows };

  // A crawl whose strings need every CSV rule: commas, quotes, CR and LF.
  const writer = await openHistoryWriter(db);
  const crawlId = await writer.createCrawl('odd "strings", crawl', { seeds: ['http://odd.test/'] }, {});
  const base: ResponseRecord = {
    t: 1_795_000_000_000.25, startedAt: 1_795_000_000_000 - 12.5, waitMs: 3.25, slot: 'we,ird "slot"', url: 'http://odd.test/a,b?q="x"',
    method: 'GET', status: null, latency: null, downloadTime: null, bytes: 0, inFlight: 1, delayBefore: 0.1, delayAfter: 0.1,
    delayCause: 'floor', backoffLevel: 0, reused: null, errorKind: 'other', errorMessage: 'line one,\r\nline "two"\nthree', depth: 2,
    contentType: null,
  };
  const oddRows: ResponseRecord[] = [
    base,
    { ...base, t: base.t + 1, status: 200, latency: 0.1234567, downloadTime: 0.0001, bytes: 12345, reused: true, errorKind: null,
      errorMessage: null, contentType: 'text/html; charset="utf-8"', delayAfter: 1 / 3, delayCause: 'autothrottle' },
    { ...base, t: base.t + 2, status: 404, latency: 0, downloadTime: 0, reused: false, errorKind: null, errorMessage: null, slot: 'plain' },
  ];
  for (const r of oddRows) writer.recordResponse(crawlId, r);
  await writer.close();
  odd = { crawlId, rows: oddRows };
}, 120_000);

describe('the recorded crawl', () => {
  it('has what the export tests need: two slots, responses, a failure, several statuses', () => {
    expect(rec.rows.length).toBeGreaterThan(30);
    expect(new Set(rec.rows.map((r) => r.slot))).toEqual(new Set(['alpha.test', 'beta.test']));
    expect(rec.rows.some((r) => r.errorKind === 'timeout' && r.status === null)).toBe(true);
    expect(new Set(rec.rows.map((r) => r.status)).size).toBeGreaterThanOrEqual(3);
    expect(rec.rows.some((r) => r.url.includes('?x=1&y=a%2Cb'))).toBe(true);
  });
});

describe('the README', () => {
  it('documents every exported field, in order, with its unit and meaning', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('## Exports and import');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const rows = section.split('\n').filter((l) => /^\| `/.test(l));
    expect(rows).toEqual(EXPORT_FIELDS.map((f) => `| \`${f.name}\` | ${f.unit} | ${f.meaning.replace(/\|/g, '\\|')} |`));
  });
});

describe('JSON Lines', () => {
  it('writes one record per response with every field, equal to the rows in the database', async () => {
    const { text, rows, total } = await exportText(rec.db, { crawlId: rec.crawlId, format: 'jsonl' });
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(rows).toBe(rec.rows.length);
    expect(total).toBe(rec.rows.length);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed).toEqual(rec.rows.map((r) => withCrawl(rec.crawlId, r)));
    // Every field of the table, in its order, and nothing else.
    for (const p of parsed) expect(Object.keys(p)).toEqual(EXPORT_FIELDS.map((f) => f.name));
  });

  it('keeps strings and numbers exactly (quotes, commas, line breaks, long fractions)', async () => {
    const { text } = await exportText(rec.db, { crawlId: odd.crawlId, format: 'jsonl' });
    const parsed = text.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(parsed).toEqual(odd.rows.map((r) => withCrawl(odd.crawlId, r)));
  });
});

describe('CSV', () => {
  it('writes a header and one RFC 4180 record per response, equal to the rows in the database', async () => {
    const { text, rows } = await exportText(rec.db, { crawlId: rec.crawlId, format: 'csv' });
    const [header, ...records] = parseCsv(text);
    expect(header).toEqual(EXPORT_FIELDS.map((f) => f.name));
    expect(rows).toBe(rec.rows.length);
    const typed = records.map((rec) => Object.fromEntries(EXPORT_FIELDS.map((f, i) => [f.name, fromCsv(f.unit, rec[i])])));
    expect(typed).toEqual(rec.rows.map((r) => withCrawl(rec.crawlId, r)));
  });

  it('quotes fields with commas, quotes, CR or LF, and doubles the quotes inside', async () => {
    const { text } = await exportText(rec.db, { crawlId: odd.crawlId, format: 'csv' });
    expect(text).toContain('"we,ird ""slot"""');
    expect(text).toContain('"line one,\r\nline ""two""\nthree"');
    expect(text).toContain('"text/html; charset=""utf-8"""');
    expect(text).toContain(',plain,'); // a plain field stays unquoted
    const [, ...records] = parseCsv(text);
    const typed = records.map((r) => Object.fromEntries(EXPORT_FIELDS.map((f, i) => [f.name, fromCsv(f.unit, r[i])])));
    expect(typed).toEqual(odd.rows.map((r) => withCrawl(odd.crawlId, r)));
  });
});

/** Checks a parsed HAR document against the required structure of HAR 1.2 (field names, types, rules). */
function checkHar12(doc: unknown): string[] {
  const problems: string[] = [];
  const need = (cond: boolean, what: string) => {
    if (!cond) problems.push(what);
  };
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const isNum = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  const isStr = (v: unknown) => typeof v === 'string';
  const isIso = (v: unknown) => isStr(v) && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v as string) && !Number.isNaN(Date.parse(v as string));
  const nameValues = (v: unknown, where: string) => {
    need(Array.isArray(v), `${where} is an array`);
    if (Array.isArray(v)) for (const [i, h] of v.entries()) need(isObj(h) && isStr(h.name) && isStr(h.value), `${where}[${i}] has name and value strings`);
  };
  need(isObj(doc) && isObj(doc.log), 'a top-level log object');
  if (!isObj(doc) || !isObj(doc.log)) return problems;
  const log = doc.log;
  need(log.version === '1.2', 'log.version is "1.2"');
  need(isObj(log.creator) && isStr(log.creator.name) && isStr(log.creator.version), 'log.creator has name and version');
  const pageIds = new Set<string>();
  need(log.pages === undefined || Array.isArray(log.pages), 'log.pages is an array');
  for (const [i, p] of ((log.pages as unknown[]) ?? []).entries()) {
    const w = `pages[${i}]`;
    need(isObj(p), `${w} is an object`);
    if (!isObj(p)) continue;
    need(isIso(p.startedDateTime), `${w}.startedDateTime is ISO 8601`);
    need(isStr(p.id), `${w}.id is a string`);
    need(isStr(p.title), `${w}.title is a string`);
    need(isObj(p.pageTimings), `${w}.pageTimings is an object`);
    pageIds.add(p.id as string);
  }
  need(Array.isArray(log.entries), 'log.entries is an array');
  for (const [i, e] of ((log.entries as unknown[]) ?? []).entries()) {
    const w = `entries[${i}]`;
    if (!isObj(e)) {
      problems.push(`${w} is an object`);
      continue;
    }
    need(e.pageref === undefined || pageIds.has(e.pageref as string), `${w}.pageref names a page`);
    need(isIso(e.startedDateTime), `${w}.startedDateTime is ISO 8601`);
    need(isNum(e.time) && (e.time as number) >= 0, `${w}.time is a number >= 0`);
    need(isObj(e.cache), `${w}.cache is an object`);
    const q = e.request;
    need(isObj(q), `${w}.request is an object`);
    if (isObj(q)) {
      need(isStr(q.method) && q.method !== '', `${w}.request.method`);
      need(isStr(q.url) && /^https?:\/\/[^#]+$/.test(q.url as string), `${w}.request.url is absolute, without a fragment`);
      need(isStr(q.httpVersion), `${w}.request.httpVersion`);
      nameValues(q.cookies, `${w}.request.cookies`);
      nameValues(q.headers, `${w}.request.headers`);
      nameValues(q.queryString, `${w}.request.queryString`);
      need(isNum(q.headersSize), `${w}.request.headersSize`);
      need(isNum(q.bodySize), `${w}.request.bodySize`);
    }
    const r = e.response;
    need(isObj(r), `${w}.response is an object`);
    if (isObj(r)) {
      need(isNum(r.status), `${w}.response.status`);
      need(isStr(r.statusText), `${w}.response.statusText`);
      need(isStr(r.httpVersion), `${w}.response.httpVersion`);
      nameValues(r.cookies, `${w}.response.cookies`);
      nameValues(r.headers, `${w}.response.headers`);
      need(isObj(r.content) && isNum(r.content.size) && isStr(r.content.mimeType), `${w}.response.content has size and mimeType`);
      need(isStr(r.redirectURL), `${w}.response.redirectURL`);
      need(isNum(r.headersSize), `${w}.response.headersSize`);
      need(isNum(r.bodySize), `${w}.response.bodySize`);
    }
    const t = e.timings;
    need(isObj(t), `${w}.timings is an object`);
    if (isObj(t)) {
      for (const k of ['send', 'wait', 'receive']) need(isNum(t[k]) && (t[k] as number) >= 0, `${w}.timings.${k} is a number >= 0`);
      for (const k of ['blocked', 'dns', 'connect', 'ssl']) need(t[k] === undefined || (isNum(t[k]) && ((t[k] as number) >= 0 || t[k] === -1)), `${w}.timings.${k} is >= 0 or -1`);
      const sum = ['blocked', 'dns', 'connect', 'send', 'wait', 'receive'].map((k) => (t[k] as number | undefined) ?? -1).filter((v) => v !== -1).reduce((a, b) => a + b, 0);
      need(Math.abs(sum - (e.time as number)) < 1e-6, `${w}.time (${e.time}) is the sum of its timings (${sum})`);
    }
    for (const k of Object.keys(e)) {
      need(['pageref', 'startedDateTime', 'time', 'request', 'response', 'cache', 'timings', 'serverIPAddress', 'connection', 'comment'].includes(k) || k.startsWith('_'),
        `${w}.${k} is a HAR 1.2 field or a custom one (leading underscore)`);
    }
  }
  return problems;
}

describe('HAR 1.2', () => {
  it('has the required structure, one page for the crawl and one entry per response with its timings', async () => {
    const { text, rows } = await exportText(rec.db, { crawlId: rec.crawlId, format: 'har' });
    const doc = JSON.parse(text);
    expect(checkHar12(doc)).toEqual([]);
    const log = doc.log;
    expect(log.creator).toEqual({ name: 'Slotscope', version: APP_VERSION });
    expect(log.pages).toHaveLength(1);
    expect(log.pages[0].title).toBe('export test');
    expect(rows).toBe(rec.rows.length);
    expect(log.entries).toHaveLength(rec.rows.length);
    for (const [i, e] of log.entries.entries()) {
      const r = rec.rows[i];
      expect(e.pageref).toBe(log.pages[0].id);
      expect(e.request.url).toBe(r.url);
      expect(e.request.method).toBe(r.method);
      expect(e.response.status).toBe(r.status ?? 0);
      expect(e.response.bodySize === -1 ? 0 : e.response.bodySize).toBe(r.bytes);
      expect(e.timings.blocked).toBeCloseTo(r.waitMs, 2);
      expect(e.startedDateTime).toBe(new Date(r.startedAt - r.waitMs).toISOString());
      if (r.latency !== null) expect(e.timings.wait).toBeCloseTo(r.latency * 1000, 2);
      if (r.downloadTime !== null) expect(e.timings.receive).toBeCloseTo(r.downloadTime * 1000, 2);
      if (r.errorKind !== null) expect(e.response._error).toContain(r.errorKind);
      if (r.contentType !== null) expect(e.response.content.mimeType).toBe(r.contentType);
      if (r.url.includes('?')) expect(e.request.queryString).toEqual([...new URL(r.url).searchParams].map(([name, value]) => ({ name, value })));
    }
  });
});

describe('Scrapy debug log', () => {
  it('writes one line per response AutoThrottle saw, equal to formatDebugLine of the row, with Scrapy\'s prefix', async () => {
    const { text, rows } = await exportText(rec.db, { crawlId: rec.crawlId, format: 'scrapy-debug' });
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    const seen = rec.rows.filter((r) => r.latency !== null && r.errorKind === null);
    expect(seen.length).toBeLessThan(rec.rows.length); // the timeout has no line
    expect(rows).toBe(seen.length);
    expect(lines).toHaveLength(seen.length);
    for (const [i, line] of lines.entries()) {
      const r = seen[i];
      const expected = formatDebugLine({ slot: r.slot, concurrency: r.inFlight, delay: r.delayAfter, oldDelay: r.delayBefore, latency: r.latency!, size: r.bytes });
      expect(line).toBe(scrapyLogPrefix(r.t) + expected);
      // And the import parser reads it back to the same numbers.
      const parsed = parseLogLine(line, 'local');
      expect(parsed.kind).toBe('debug');
      if (parsed.kind !== 'debug') continue;
      expect(parsed.message).toBe(expected);
      expect(parsed.time).toBe(Math.floor(r.t / 1000) * 1000);
      expect(parsed.fields).toMatchObject({ slot: r.slot, conc: r.inFlight, delayMs: Math.trunc(r.delayAfter * 1000), latencyMs: Math.trunc(r.latency! * 1000), size: r.bytes });
    }
  });
});

describe('filters', () => {
  it('keeps one slot', async () => {
    for (const slot of ['alpha.test', 'beta.test']) {
      const { text } = await exportText(rec.db, { crawlId: rec.crawlId, slot, format: 'jsonl' });
      const parsed = text.trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(parsed).toEqual(rec.rows.filter((r) => r.slot === slot).map((r) => withCrawl(rec.crawlId, r)));
    }
  });

  it('keeps [from, to), alone and with a slot', async () => {
    const from = rec.rows[Math.floor(rec.rows.length / 3)].t;
    const to = rec.rows[Math.floor((2 * rec.rows.length) / 3)].t;
    const want = rec.rows.filter((r) => r.t >= from && r.t < to);
    expect(want.length).toBeGreaterThan(3);
    const { text, total } = await exportText(rec.db, { crawlId: rec.crawlId, from, to, format: 'jsonl' });
    expect(total).toBe(want.length);
    expect(text.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual(want.map((r) => withCrawl(rec.crawlId, r)));
    const csv = parseCsv((await exportText(rec.db, { crawlId: rec.crawlId, from, to, slot: 'beta.test', format: 'csv' })).text);
    expect(csv.length - 1).toBe(want.filter((r) => r.slot === 'beta.test').length);
    const onlyFrom = await exportText(rec.db, { crawlId: rec.crawlId, from, format: 'jsonl' });
    expect(onlyFrom.rows).toBe(rec.rows.filter((r) => r.t >= from).length);
  });

  it('takes the newest crawl when none is named', async () => {
    const r = await exportText(rec.db, { format: 'jsonl' });
    expect(JSON.parse(r.text.split('\n')[0]).crawlId).toBe(odd.crawlId);
  });

  it('refuses a bad query before writing anything, naming the field, the value and what is allowed', async () => {
    const cases: [ExportQuery, string, RegExp][] = [
      [{ crawlId: 999, format: 'jsonl' }, 'crawlId', new RegExp(`crawlId: 999 is not allowed \\(a crawl of this database: ${odd.crawlId}, ${rec.crawlId}\\)`)],
      [{ crawlId: rec.crawlId, slot: 'gamma.test', format: 'jsonl' }, 'slot', /slot: "gamma.test" is not allowed \(a slot of crawl \d+: alpha.test, beta.test\)/],
      [{ crawlId: rec.crawlId, from: 10, to: 5, format: 'jsonl' }, 'to', /to: 5 is not allowed \(a time after from \(10\)/],
      [{ crawlId: rec.crawlId, format: 'xml' as 'jsonl' }, 'format', /format: "xml" is not allowed \(scrapy-debug, jsonl, csv, har\)/],
      [{ crawlId: 1.5, format: 'csv' }, 'crawlId', /a whole number >= 1/],
    ];
    for (const [q, field, message] of cases) {
      const out = new PassThrough();
      let wrote = 0;
      out.on('data', (c: Buffer) => (wrote += c.length));
      const e = await exportHistory(rec.db, q, out).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ExportError);
      expect((e as ExportError).field).toBe(field);
      expect((e as ExportError).message).toMatch(message);
      expect(wrote).toBe(0);
    }
  });

  it('leaves an existing file untouched when an export to it fails', async () => {
    const file = join(freshDir(), 'keep.csv');
    writeFileSync(file, 'precious');
    await expect(exportToFile(rec.db, { crawlId: 12345, format: 'csv' }, file)).rejects.toBeInstanceOf(ExportError);
    expect(readFileSync(file, 'utf8')).toBe('precious');
    const r = await exportToFile(rec.db, { crawlId: rec.crawlId, format: 'csv' }, file);
    expect(readFileSync(file, 'utf8')).toBe((await exportText(rec.db, { crawlId: rec.crawlId, format: 'csv' })).text);
    expect(r.bytes).toBe(readFileSync(file).length);
  });
});

describe('slotscope export', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, 'export', ...args], { cwd: ROOT, encoding: 'utf8' });

  it('writes each format to a file, the same bytes as the export function, with a JSON summary on stdout', async () => {
    const dir = freshDir();
    for (const format of EXPORT_FORMATS) {
      const out = join(dir, `out.${format}`);
      const r = run(['--db', rec.db, '--crawl', String(rec.crawlId), '--format', format, '--out', out]);
      expect(r.status, r.stderr).toBe(0);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ crawl_id: rec.crawlId, format, out });
      expect(readFileSync(out, 'utf8')).toBe((await exportText(rec.db, { crawlId: rec.crawlId, format })).text);
      expect(r.stderr).toMatch(new RegExp(`export: \\d+ .* of crawl ${rec.crawlId}`));
    }
  });

  it('filters by --slot and --from/--to given as ISO 8601 or epoch ms, and writes to stdout with --out -', async () => {
    const from = rec.rows[5].t;
    const to = rec.rows[rec.rows.length - 5].t;
    const want = rec.rows.filter((r) => r.slot === 'alpha.test' && r.t >= from && r.t < to).map((r) => withCrawl(rec.crawlId, r));
    for (const [f, t] of [[String(from), String(to)], [new Date(from).toISOString(), new Date(to).toISOString()]]) {
      // ISO has millisecond precision: recorded times carry fractions, so the epoch form is exact and ISO is checked to the ms.
      const r = run(['--db', rec.db, '--crawl', String(rec.crawlId), '--slot', 'alpha.test', `--from=${f}`, `--to=${t}`, '--format', 'jsonl', '--out', '-']);
      expect(r.status, r.stderr).toBe(0);
      const got = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
      const fromMs = Date.parse(new Date(from).toISOString());
      const toMs = Date.parse(new Date(to).toISOString());
      const expected = f === String(from) ? want : rec.rows.filter((x) => x.slot === 'alpha.test' && x.t >= fromMs && x.t < toMs).map((x) => withCrawl(rec.crawlId, x));
      expect(got).toEqual(expected);
    }
  });

  it('exports the newest crawl without --crawl', () => {
    const r = run(['--db', rec.db, '--format', 'jsonl', '--out', '-', '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(odd.rows.length);
    expect(r.stderr).toBe('');
  });

  it('refuses bad flags with exit code 2, naming the flag, the value and what is allowed', () => {
    const dir = freshDir();
    const out = join(dir, 'x.jsonl');
    const cases: [string[], RegExp][] = [
      [['--db', rec.db, '--format', 'xml', '--out', out], /--format: "xml" is not allowed \(scrapy-debug, jsonl, csv, har\)/],
      [['--db', rec.db, '--out', out], /--format is required \(scrapy-debug, jsonl, csv, har\)/],
      [['--db', rec.db, '--format', 'jsonl'], /--out FILE is required/],
      [['--db', rec.db, '--crawl', 'abc', '--format', 'jsonl', '--out', out], /--crawl: "abc" is not allowed \(a crawl id, a whole number >= 1\)/],
      [['--db', rec.db, '--crawl', '4242', '--format', 'jsonl', '--out', out], /--crawl: 4242 is not allowed \(a crawl of this database: /],
      [['--db', rec.db, '--crawl', String(rec.crawlId), '--slot', 'nope.test', '--format', 'jsonl', '--out', out], /--slot: "nope.test" is not allowed \(a slot of crawl \d+: alpha.test, beta.test\)/],
      [['--db', rec.db, '--from', 'yesterday', '--format', 'jsonl', '--out', out], /--from: "yesterday" is not allowed \(epoch milliseconds .*ISO 8601/],
      [['--db', rec.db, '--from', '2026-11-22T10:00:00Z', '--to', '2026-11-22T09:00:00Z', '--format', 'jsonl', '--out', out], /--to: "2026-11-22T09:00:00Z" is not allowed \(a time after --from/],
      [['--db', rec.db, '--from', '2026-02-30', '--format', 'jsonl', '--out', out], /--from: "2026-02-30" is not allowed/],
      [['--db', join(dir, 'missing.sqlite'), '--format', 'jsonl', '--out', out], /--db: ".*missing.sqlite" is not allowed \(an existing Slotscope history database; there is no such file\)/],
      [['--db', rec.db, '--format', 'jsonl', '--out', join(dir, 'no', 'such', 'x.jsonl')], /--out: ".*x.jsonl" is not allowed \(a file in an existing folder\)/],
      [['--db', rec.db, '--format', 'jsonl', '--out', out, '--colour', 'red'], /unknown flag "--colour"; known: --db, --crawl/],
      [['--db', rec.db, '--format', 'jsonl', '--format', 'csv', '--out', out], /--format is given twice/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(existsSync(out)).toBe(false);
    }
    // A file that is not a history database is bad input too.
    const notDb = join(dir, 'notes.txt');
    writeFileSync(notDb, 'hello, this is not SQLite at all, just text that is long enough to have a header of sorts');
    const r = run(['--db', notDb, '--format', 'jsonl', '--out', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--db: .*not a Slotscope history database|--db: .*not an SQLite file/);
  });
});

describe("the core's history.export", () => {
  it('writes the file the request names, reports progress, and refuses bad params as data', async () => {
    // A path from a client lies inside the data folder's exports/ (issue 15; server/token-holder.test.ts).
    const dir = join(dirname(rec.db), 'exports');
    mkdirSync(dir, { recursive: true });
    const core = await createCore({ db: rec.db });
    defer(() => core.close());
    const progress: AppEvents['history.exportProgress'][] = [];
    core.subscribe((event, payload) => {
      if (event === 'history.exportProgress') progress.push(payload as AppEvents['history.exportProgress']);
    });
    const path = join(dir, 'crawl.har');
    const reply = await core.dispatch('history.export', { crawlId: rec.crawlId, format: 'har', path, exportId: 'e-1' });
    expect(reply).toEqual({ ok: true, result: { exportId: 'e-1', path, rows: rec.rows.length, bytes: readFileSync(path).length } });
    expect(checkHar12(JSON.parse(readFileSync(path, 'utf8')))).toEqual([]);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((p) => p.exportId === 'e-1' && p.total === rec.rows.length)).toBe(true);
    expect(progress.at(-1)!.rows).toBe(rec.rows.length);

    // No path: a file in the exports folder beside the database.
    const auto = await core.dispatch('history.export', { crawlId: rec.crawlId, format: 'csv', slot: 'beta.test' });
    expect(auto.ok).toBe(true);
    const autoPath = (auto as { result: { path: string } }).result.path;
    expect(autoPath.startsWith(join(rec.db, '..', 'exports'))).toBe(true);
    expect(autoPath.endsWith('.csv')).toBe(true);
    expect(parseCsv(readFileSync(autoPath, 'utf8')).length - 1).toBe(rec.rows.filter((r) => r.slot === 'beta.test').length);

    const bad = async (params: unknown) => core.dispatch('history.export', params);
    expect(await bad({ crawlId: 777, format: 'jsonl', path: join(dir, 'a.jsonl') })).toMatchObject({ ok: false, error: { code: 'not-found', field: 'crawlId' } });
    expect(await bad({ crawlId: rec.crawlId, format: 'jsonl', path: join(dir, 'a.exe') }))
      .toMatchObject({ ok: false, error: { code: 'invalid', field: 'path', message: expect.stringMatching(/ending with \.jsonl or \.ndjson/) } });
    expect(await bad({ crawlId: rec.crawlId, format: 'jsonl', path: 'relative.jsonl' })).toMatchObject({ ok: false, error: { field: 'path' } });
    expect(await bad({ crawlId: rec.crawlId, format: 'pdf' })).toMatchObject({ ok: false, error: { code: 'invalid', field: 'format' } });
    expect(await bad({ crawlId: rec.crawlId, format: 'csv', slot: 'zeta.test', path: join(dir, 'z.csv') })).toMatchObject({ ok: false, error: { field: 'slot' } });
    expect(await bad({ crawlId: rec.crawlId, format: 'csv', path: join(dir, 'missing-folder', 'z.csv') })).toMatchObject({ ok: false, error: { field: 'path' } });
    expect(existsSync(join(dir, 'a.jsonl'))).toBe(false);
  });
});
