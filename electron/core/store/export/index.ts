// The one export function behind the CLI, the core's 'history.export' and the browser download:
// rows streamed from SQLite in order, formatted, written in chunks that respect backpressure.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { EXPORT_FORMATS, type ExportFormat } from '../../../../shared/contract';
import { openHistoryReader } from '../queries';
import { csvHeader, csvLine } from './csv';
import { harEntry, harHead, harTail } from './har';
import { jsonlLine } from './jsonl';
import { scrapyDebugLine } from './scrapy-debug';
import { openExportSource } from './source';

export { EXPORT_FORMATS, type ExportFormat } from '../../../../shared/contract';

/** What to export. Times are epoch ms; `to` is exclusive. */
export interface ExportQuery {
  /** The crawl; the newest one (highest id) when absent. */
  readonly crawlId?: number;
  /** Only this slot's responses. */
  readonly slot?: string;
  readonly from?: number;
  readonly to?: number;
  readonly format: ExportFormat;
}

export interface ExportProgress {
  /** Records written so far. */
  readonly rows: number;
  /** Responses in the selection (scrapy-debug writes fewer: failed downloads have no debug line). */
  readonly total: number;
}

export interface ExportOptions {
  /** Called about every 100 ms and once at the end. */
  readonly onProgress?: (p: ExportProgress) => void;
  /** Aborting stops the export between two chunks; it then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** End `out` when done and wait until it has flushed (default true; false for process.stdout). */
  readonly end?: boolean;
}

export interface ExportResult {
  readonly crawlId: number;
  readonly format: ExportFormat;
  /** Records written (lines, CSV records without the header, HAR entries). */
  readonly rows: number;
  readonly bytes: number;
  /** Responses in the selection. */
  readonly total: number;
}

/** The query field an ExportError is about. */
export type ExportField = 'crawlId' | 'slot' | 'from' | 'to' | 'format' | 'path';

/** A bad export request: the field, the value given and what is allowed. Nothing was written. */
export class ExportError extends Error {
  constructor(
    readonly field: ExportField,
    readonly value: unknown,
    readonly allowed: string,
    /** 'not-found' for a crawl that does not exist, 'invalid' otherwise. */
    readonly code: 'invalid' | 'not-found' = 'invalid',
  ) {
    super(`${field}: ${show(value)} is not allowed (${allowed})`);
    this.name = 'ExportError';
  }

  /** The same message under another name for the field (a CLI flag such as `--crawl`). */
  describe(label: string): string {
    return `${label}: ${show(this.value)} is not allowed (${this.allowed})`;
  }
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Bytes gathered before one write: big enough for speed, small enough to yield to the event loop often. */
const CHUNK_CHARS = 64 * 1024;
const PROGRESS_MS = 100;

function waitDrain(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      out.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (e: Error) => done(e);
    const onClose = () => done(new Error('the output was closed before the export finished'));
    out.on('drain', onDrain);
    out.on('error', onError);
    out.on('close', onClose);
  });
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Streams the responses of one crawl (optionally one slot and a time range), ordered by time, to
 * `out` in `format`. Memory stays flat: rows come from one SQLite iterator on a connection of its
 * own, and a chunk is written only when `out` can take it. Throws ExportError for a bad query
 * before writing anything; I/O errors of `out` reject.
 */
export async function exportHistory(dbFile: string, q: ExportQuery, out: Writable, o: ExportOptions = {}): Promise<ExportResult> {
  if (!(EXPORT_FORMATS as readonly string[]).includes(q.format)) throw new ExportError('format', q.format, EXPORT_FORMATS.join(', '));
  if (q.crawlId !== undefined && (!Number.isInteger(q.crawlId) || q.crawlId < 1)) {
    throw new ExportError('crawlId', q.crawlId, 'a crawl id, a whole number >= 1');
  }
  for (const k of ['from', 'to'] as const) {
    const v = q[k];
    if (v !== undefined && !Number.isFinite(v)) throw new ExportError(k, v, 'a time in epoch ms');
  }
  if (q.from !== undefined && q.to !== undefined && q.from >= q.to) {
    throw new ExportError('to', q.to, `a time after from (${q.from}); the range is [from, to)`);
  }
  if (q.slot !== undefined && (typeof q.slot !== 'string' || q.slot === '')) throw new ExportError('slot', q.slot, 'a slot key');

  const source = openExportSource(dbFile);
  let crawl;
  let total: number;
  try {
    crawl = source.crawl(q.crawlId);
    if (!crawl) {
      if (q.crawlId === undefined) throw new ExportError('crawlId', null, `a crawl id, but ${dbFile} holds no crawls`, 'not-found');
      const ids = source.crawlIds(10);
      throw new ExportError('crawlId', q.crawlId,
        ids.length === 0 ? `a crawl id, but ${dbFile} holds no crawls` : `a crawl of this database: ${ids.join(', ')}${ids.length === 10 ? ', ...' : ''}`, 'not-found');
    }
    if (q.slot !== undefined && !source.hasSlot(crawl.id, q.slot)) {
      const { keys, count } = source.someSlots(crawl.id, 5);
      throw new ExportError('slot', q.slot, count === 0 ? `a slot of crawl ${crawl.id}, which has none`
        : `a slot of crawl ${crawl.id}: ${keys.join(', ')}${count > keys.length ? ` and ${count - keys.length} more` : ''}`);
    }
    total = source.count(crawl.id, q.slot, q.from ?? -Infinity, q.to ?? Infinity);
  } finally {
    source.close();
  }

  const crawlId = crawl.id;
  const reader = openHistoryReader(dbFile);
  const parts: string[] = [];
  let chars = 0;
  let bytes = 0;
  let rows = 0;
  let lastProgress = 0;
  let outError: Error | undefined;
  const onOutError = (e: Error) => {
    outError ??= e;
  };
  out.on('error', onOutError);
  const progress = (force: boolean) => {
    if (!o.onProgress) return;
    const now = Date.now();
    if (!force && now - lastProgress < PROGRESS_MS) return;
    lastProgress = now;
    o.onProgress({ rows, total });
  };
  const check = () => {
    if (o.signal?.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new Error('the export was cancelled');
    if (outError) throw outError;
    if (out.destroyed) throw new Error('the output was closed before the export finished');
  };
  const flush = async () => {
    check();
    if (parts.length === 0) return;
    const buf = Buffer.from(parts.join(''), 'utf8');
    parts.length = 0;
    chars = 0;
    bytes += buf.length;
    if (!out.write(buf)) await waitDrain(out);
    else await nextTurn();
    progress(false);
  };
  const push = (s: string) => {
    parts.push(s);
    chars += s.length;
  };

  try {
    progress(true);
    if (q.format === 'csv') push(csvHeader());
    else if (q.format === 'har') push(harHead({ id: crawlId, name: crawl.name, startedAt: crawl.startedAt ?? crawl.createdAt }));
    const rowsOf = reader.eachResponse(crawlId, { slot: q.slot, from: q.from, to: q.to });
    try {
      for (const r of rowsOf) {
        switch (q.format) {
          case 'jsonl':
            push(jsonlLine(crawlId, r));
            break;
          case 'csv':
            push(csvLine(crawlId, r));
            break;
          case 'har':
            push(rows === 0 ? harEntry(crawlId, r) : `,\n${harEntry(crawlId, r)}`);
            break;
          case 'scrapy-debug': {
            const line = scrapyDebugLine(r);
            if (line === null) continue;
            push(line);
            break;
          }
        }
        rows++;
        if (chars >= CHUNK_CHARS) await flush();
      }
    } finally {
      rowsOf.return?.(undefined);
    }
    if (q.format === 'har') push(harTail());
    await flush();
    if (o.end !== false) {
      out.end();
      await finished(out);
    }
    if (outError) throw outError;
    progress(true);
    return { crawlId, format: q.format, rows, bytes, total };
  } finally {
    out.off('error', onOutError);
    reader.close();
  }
}

/**
 * exportHistory into a file, atomically: the export goes to a temporary file beside `path` that is
 * renamed over `path` only when complete, so a failed or cancelled export leaves no half file (and
 * an existing file at `path` untouched).
 */
export async function exportToFile(dbFile: string, q: ExportQuery, path: string, o: Omit<ExportOptions, 'end'> = {}): Promise<ExportResult> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.partial`);
  const out = createWriteStream(temp, { flags: 'wx' });
  await new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  try {
    const result = await exportHistory(dbFile, q, out, o);
    await rename(temp, path);
    return result;
  } catch (e) {
    out.destroy();
    await unlink(temp).catch(() => undefined);
    throw e;
  }
}
