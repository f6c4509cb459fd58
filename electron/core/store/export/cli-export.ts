// `slotscope export`: flags checked one by one (an error names the flag, the value and what is
// allowed), then one streaming export to a file (atomically) or stdout, progress on stderr.
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { EXPORT_FORMATS, type ExportFormat } from '../../../../shared/contract';
import { ExportError, exportHistory, exportToFile, type ExportField, type ExportProgress, type ExportQuery, type ExportResult } from './index';
import { parseTimeArg, TIME_ALLOWED } from './wall-time';

export const EXPORT_USAGE = `  slotscope export --db FILE.sqlite [--crawl ID] [--slot KEY] [--from T] [--to T]
                   --format scrapy-debug|jsonl|csv|har --out FILE|- [--quiet]
      Write a crawl's responses (the newest crawl without --crawl) in one format; T is epoch ms or
      ISO 8601 (2026-11-22T10:00:00Z; local time without an offset), --to exclusive; --out - is stdout.`;

/** Where the command writes: the process's streams, or a test's. */
export interface CommandIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** A bad command line: printed with the usage, exit code 2. */
export class FlagError extends Error {}

/**
 * Reads `--name value` / `--name=value` flags and `--switch`es; refuses unknown or repeated ones.
 * Shared by export and import.
 */
export function readFlags(argv: readonly string[], flags: readonly string[], switches: readonly string[] = []): Map<string, string | true> {
  const out = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new FlagError(`unexpected argument ${JSON.stringify(a)} (flags start with --)`);
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (out.has(name)) throw new FlagError(`--${name} is given twice`);
    if (switches.includes(name)) {
      if (eq >= 0) throw new FlagError(`--${name} takes no value`);
      out.set(name, true);
    } else if (flags.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new FlagError(`--${name} needs a value`);
      out.set(name, v);
    } else {
      throw new FlagError(`unknown flag ${JSON.stringify(a)}; known: ${[...flags, ...switches].map((f) => `--${f}`).join(', ')}`);
    }
  }
  return out;
}

/** `--flag: "value" is not allowed (what is)`. */
export function flagError(flag: string, value: unknown, allowed: string): FlagError {
  return new FlagError(`--${flag}: ${JSON.stringify(value)} is not allowed (${allowed})`);
}

const FLAG_OF: Record<ExportField, string> = { crawlId: '--crawl', slot: '--slot', from: '--from', to: '--to', format: '--format', path: '--out' };

/** Checks an existing history database file named by `--db`. */
export function dbFlag(flags: Map<string, string | true>): string {
  const v = flags.get('db');
  if (typeof v !== 'string' || v === '') throw new FlagError('--db FILE.sqlite is required');
  const file = resolve(v);
  if (!existsSync(file)) throw flagError('db', v, 'an existing Slotscope history database; there is no such file');
  if (!statSync(file).isFile()) throw flagError('db', v, 'a history database file, not a folder');
  return file;
}

function parseQuery(flags: Map<string, string | true>): ExportQuery {
  const format = flags.get('format');
  if (format === undefined) throw new FlagError(`--format is required (${EXPORT_FORMATS.join(', ')})`);
  if (!(EXPORT_FORMATS as readonly unknown[]).includes(format)) throw flagError('format', format, EXPORT_FORMATS.join(', '));
  let crawlId: number | undefined;
  const crawl = flags.get('crawl');
  if (crawl !== undefined) {
    if (typeof crawl !== 'string' || !/^[1-9]\d{0,14}$/.test(crawl)) throw flagError('crawl', crawl, 'a crawl id, a whole number >= 1');
    crawlId = Number(crawl);
  }
  const time = (k: 'from' | 'to'): number | undefined => {
    const v = flags.get(k);
    if (v === undefined) return undefined;
    const t = typeof v === 'string' ? parseTimeArg(v) : null;
    if (t === null) throw flagError(k, v, TIME_ALLOWED);
    return t;
  };
  const from = time('from');
  const to = time('to');
  if (from !== undefined && to !== undefined && from >= to) {
    throw flagError('to', flags.get('to'), `a time after --from ${JSON.stringify(flags.get('from'))}; the range is [from, to)`);
  }
  const slot = flags.get('slot');
  if (slot !== undefined && (typeof slot !== 'string' || slot === '')) throw flagError('slot', slot, 'a slot key, e.g. a host name');
  return { format: format as ExportFormat, crawlId, slot: slot as string | undefined, from, to };
}

const thousands = (n: number) => n.toLocaleString('en-US');
const megabytes = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

/** Progress on stderr: one rewritten line on a terminal, a line every 2 s otherwise. */
function progressPrinter(stderr: CommandIo['stderr']): { update(p: ExportProgress): void; done(): void } {
  const tty = stderr.isTTY === true;
  let last = Date.now();
  let shown = false;
  return {
    update(p) {
      const now = Date.now();
      if (now - last < (tty ? 200 : 2000)) return;
      last = now;
      const pct = p.total > 0 ? ` (${Math.min(100, Math.floor((p.rows / p.total) * 100))}%)` : '';
      const line = `export: ${thousands(p.rows)} of ${thousands(p.total)} rows${pct}`;
      stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
      shown = true;
    },
    done() {
      if (tty && shown) stderr.write('\r\x1b[K');
    },
  };
}

/** Runs `slotscope export …`; resolves with the exit code (0 ok, 1 failure, 2 invalid input). */
export async function runExportCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  let db: string;
  let q: ExportQuery;
  let outPath: string;
  let quiet: boolean;
  try {
    const flags = readFlags(argv, ['db', 'crawl', 'slot', 'from', 'to', 'format', 'out'], ['quiet']);
    db = dbFlag(flags);
    q = parseQuery(flags);
    const out = flags.get('out');
    if (typeof out !== 'string' || out === '') throw new FlagError('--out FILE is required (- writes to stdout)');
    outPath = out === '-' ? '-' : resolve(out);
    if (outPath !== '-') {
      if (!existsSync(dirname(outPath)) || !statSync(dirname(outPath)).isDirectory()) throw flagError('out', out, 'a file in an existing folder');
      if (existsSync(outPath) && statSync(outPath).isDirectory()) throw flagError('out', out, 'a file, not a folder');
    }
    quiet = flags.get('quiet') === true;
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    err(`slotscope export: ${e.message}\n\nUsage:\n${EXPORT_USAGE}`);
    return 2;
  }

  const progress = progressPrinter(io.stderr);
  const onProgress = quiet ? undefined : (p: ExportProgress) => progress.update(p);
  const started = Date.now();
  let result: ExportResult;
  try {
    result = outPath === '-'
      ? await exportHistory(db, q, io.stdout as unknown as Writable, { onProgress, end: false })
      : await exportToFile(db, q, outPath, { onProgress });
  } catch (e) {
    progress.done();
    if (e instanceof ExportError) {
      err(`slotscope export: ${e.describe(FLAG_OF[e.field])}`);
      return 2;
    }
    const m = (e as Error).message;
    // A file that is not a (readable) history database is bad input, not a crash.
    if (/history database|SQLite|database schema/i.test(m)) {
      err(`slotscope export: --db: ${m}`);
      return 2;
    }
    err(`slotscope export: failed: ${m}`);
    return 1;
  }
  progress.done();
  const seconds = (Date.now() - started) / 1000;
  if (!quiet) {
    err(`export: ${thousands(result.rows)} ${q.format === 'scrapy-debug' ? 'debug lines' : 'responses'} of crawl ${result.crawlId} ` +
      `(${megabytes(result.bytes)}) in ${seconds.toFixed(1)} s${outPath === '-' ? '' : ` to ${outPath}`}`);
  }
  if (outPath !== '-') {
    io.stdout.write(`${JSON.stringify({ crawl_id: result.crawlId, format: result.format, rows: result.rows, total: result.total, bytes: result.bytes, out: outPath, seconds })}\n`);
  }
  return 0;
}
