// `slotscope import --scrapy-log FILE --db FILE`: a Scrapy crawl's AUTOTHROTTLE_DEBUG log into a
// crawl record, with what was read and what was not reported on stderr and as one JSON line on stdout.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { FlagError, flagError, readFlags, type CommandIo } from '../export/cli-export';
import { parseTimeZone, TIME_ZONE_ALLOWED, type TimeZoneSpec } from '../export/wall-time';
import { settingSpec } from '../../../../shared/settings';
import type { Readable } from 'node:stream';
import { openHistoryWriter } from '../history-writer';
import { importScrapyLog, importScrapyLogInto, type ImportOptions, type ScrapyImportReport } from './import-scrapy';

export const IMPORT_USAGE = `  slotscope import --scrapy-log FILE|- --db FILE.sqlite [--name NAME] [--tz local|UTC|+HH:MM] [--quiet]
      Turn a Scrapy log written with AUTOTHROTTLE_DEBUG (2.8 to 2.18) into a finished crawl; lines it
      cannot read, and settings whose value it cannot read or use, are listed, never fatal.
      --scrapy-log - reads standard input: scrapy crawl NAME 2>&1 | slotscope import --scrapy-log - --db F.sqlite
      --tz: zone of the log's times (default local).`;

/** What `--scrapy-log -` reads: the process's standard input. */
export interface ImportIo extends CommandIo {
  readonly stdin?: Readable;
}

/** `--scrapy-log -`: the log read from a stream (standard input) into a crawl of `db`. */
function importFromStream(input: Readable, db: string): (o: ImportOptions) => Promise<ScrapyImportReport> {
  return async (o) => {
    const writer = await openHistoryWriter(db);
    input.setEncoding('utf8');
    try {
      return await importScrapyLogInto(writer, { input, size: 0, fileName: 'standard input', bytesRead: () => 0 }, o);
    } finally {
      await writer.close().catch(() => undefined);
    }
  };
}

/** Runs `slotscope import …`; resolves with the exit code (0 ok, 1 nothing imported or failure, 2 invalid input). */
export async function runImportCommand(argv: readonly string[], io: ImportIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  let log: string;
  let db: string;
  let name: string | undefined;
  let tz: TimeZoneSpec;
  let quiet: boolean;
  try {
    const flags = readFlags(argv, ['scrapy-log', 'db', 'name', 'tz'], ['quiet']);
    const l = flags.get('scrapy-log');
    if (typeof l !== 'string' || l === '') throw new FlagError('--scrapy-log FILE is required');
    log = l === '-' ? '-' : resolve(l);
    if (l === '-' && !io.stdin) throw flagError('scrapy-log', l, 'a Scrapy log file (standard input is not available here)');
    if (l !== '-' && !existsSync(log)) throw flagError('scrapy-log', l, 'an existing Scrapy log file; there is no such file');
    if (l !== '-' && !statSync(log).isFile()) throw flagError('scrapy-log', l, 'a log file, not a folder');
    const d = flags.get('db');
    if (typeof d !== 'string' || d === '') throw new FlagError('--db FILE.sqlite is required (created when missing)');
    db = resolve(d);
    if (existsSync(db) && !statSync(db).isFile()) throw flagError('db', d, 'a history database file, not a folder');
    const n = flags.get('name');
    if (n !== undefined && (typeof n !== 'string' || n.trim() === '')) throw flagError('name', n, 'a non-empty name');
    name = typeof n === 'string' ? n.trim() : undefined;
    const z = flags.get('tz');
    const parsedTz = z === undefined ? 'local' : typeof z === 'string' ? parseTimeZone(z) : null;
    if (parsedTz === null) throw flagError('tz', z, TIME_ZONE_ALLOWED);
    tz = parsedTz;
    quiet = flags.get('quiet') === true;
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    err(`slotscope import: ${e.message}\n\nUsage:\n${IMPORT_USAGE}`);
    return 2;
  }

  mkdirSync(dirname(db), { recursive: true });
  const tty = io.stderr.isTTY === true;
  let shown = false;
  let report;
  try {
    report = await (log === '-' ? importFromStream(io.stdin!, db) : (o: ImportOptions) => importScrapyLog(log, db, o))({
      name,
      tz,
      onProgress: quiet || !tty ? undefined : (p) => {
        shown = true;
        io.stderr.write(`\rimport: ${p.lines.toLocaleString('en-US')} lines (${p.size > 0 ? Math.floor((p.bytes / p.size) * 100) : 100}%)\x1b[K`);
      },
    });
  } catch (e) {
    if (shown) io.stderr.write('\r\x1b[K');
    const m = (e as Error).message;
    if (/history database|SQLite|database schema/i.test(m)) {
      err(`slotscope import: --db: ${m}`);
      return 2;
    }
    err(`slotscope import: failed: ${m}`);
    return 1;
  }
  if (shown) io.stderr.write('\r\x1b[K');

  const r = report;
  if (!quiet || r.unreadable > 0) {
    for (const u of r.firstUnreadable) err(`import: line ${u.line} not read (${u.reason}): ${u.text}`);
    if (r.unreadable > r.firstUnreadable.length) err(`import: ... and ${r.unreadable - r.firstUnreadable.length} more unreadable lines`);
  }
  // A skipped setting Slotscope uses changes what the crawl (and a what-if of it) does: said even with --quiet.
  for (const k of r.settingsSkipped) {
    if (!quiet || settingSpec(k.setting)) err(`import: setting ${k.setting} skipped (${k.reason})`);
  }
  if (r.crawlId === null) {
    err(`slotscope import: no AUTOTHROTTLE_DEBUG line in ${log === '-' ? 'standard input' : log} (${r.lines} lines read); Scrapy writes them with ` +
      'AUTOTHROTTLE_ENABLED = True and AUTOTHROTTLE_DEBUG = True. Nothing was imported.');
  } else if (!quiet) {
    err(`import: ${r.debugLines} debug lines of ${r.lines} lines${r.scrapyVersion ? ` (Scrapy ${r.scrapyVersion})` : ''} -> crawl ${r.crawlId} ` +
      `"${r.name}" in ${db}; ${r.withStatus} with a status and URL, ${r.slots} slot${r.slots === 1 ? '' : 's'}, ` +
      `${r.unreadable} unreadable line${r.unreadable === 1 ? '' : 's'}`);
  }
  io.stdout.write(`${JSON.stringify({
    crawl_id: r.crawlId, name: r.name, lines: r.lines, debug_lines: r.debugLines, with_status: r.withStatus, slots: r.slots,
    unreadable: r.unreadable, unreadable_lines: r.firstUnreadable.map((u) => u.line), scrapy_version: r.scrapyVersion,
    settings_applied: r.settingsApplied, settings_ignored: r.settingsIgnored,
    settings_skipped: r.settingsSkipped.map((k) => ({ setting: k.setting, reason: k.reason })), started_at: r.startedAt, finished_at: r.finishedAt,
  })}\n`);
  return r.crawlId === null ? 1 : 0;
}
