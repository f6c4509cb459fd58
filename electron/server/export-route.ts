// The browser host's download of a crawl's history: GET /export?crawlId=…&format=… streams an
// export file with Content-Disposition. The server checks the token, Host and Origin before it gets here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { EXPORT_EXTENSIONS, EXPORT_FORMATS, type ExportFormat } from '../../shared/contract';
import type { ExportProgress, ExportQuery, ExportResult } from '../core/store/export/index';
import { parseTimeArg, TIME_ALLOWED } from '../core/store/export/wall-time';
import { BadQuery, readQuery } from './query';

/** The route's path. */
export const EXPORT_PATH = '/export';

/** What the route needs from the host: the core's exportHistory. */
export interface HistoryExporter {
  exportHistory(q: ExportQuery, out: Writable, onProgress?: (p: ExportProgress) => void): Promise<ExportResult>;
}

/** Whether `x` can serve downloads (the core can; a stand-in dispatcher may not). */
export function isHistoryExporter(x: unknown): x is HistoryExporter {
  return typeof x === 'object' && x !== null && typeof (x as { exportHistory?: unknown }).exportHistory === 'function';
}

/** Content types of the downloads. */
export const EXPORT_CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  'scrapy-debug': 'text/plain; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  har: 'application/json; charset=utf-8',
};

const PARAMS = ['token', 'crawlId', 'format', 'slot', 'from', 'to'];

/** Reads and checks the query (the raw string after `?`); throws BadQuery naming the parameter. */
export function parseExportQuery(raw: string): ExportQuery & { readonly crawlId: number } {
  const q = readQuery(raw, PARAMS, EXPORT_PATH);
  const idText = q.get('crawlId');
  if (idText === null || !/^[1-9]\d{0,14}$/.test(idText)) throw new BadQuery('crawlId', idText, 'a crawl id, a whole number >= 1');
  const format = q.get('format');
  if (format === null || !(EXPORT_FORMATS as readonly string[]).includes(format)) throw new BadQuery('format', format, EXPORT_FORMATS.join(', '));
  const time = (k: 'from' | 'to'): number | undefined => {
    const v = q.get(k);
    if (v === null) return undefined;
    const t = parseTimeArg(v);
    if (t === null) throw new BadQuery(k, v, TIME_ALLOWED);
    return t;
  };
  const from = time('from');
  const to = time('to');
  if (from !== undefined && to !== undefined && from >= to) throw new BadQuery('to', q.get('to'), 'a time after from; the range is [from, to)');
  const slot = q.get('slot');
  if (slot === '') throw new BadQuery('slot', slot, 'a slot key');
  return { crawlId: Number(idText), format: format as ExportFormat, ...(slot !== null ? { slot } : {}), from, to };
}

/** A time in a file name: UTC to the second, `20261122T140327Z`. */
function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * The download's file name: `slotscope-crawl-<id>[-<slot>][-<from>-<to>].<ext>`, plain ASCII; a time
 * range is written as its UTC ends (`start`/`end` for an open one), so two ranges never share a name.
 */
export function exportFileName(q: ExportQuery & { readonly crawlId: number }): string {
  const slot = q.slot ? `-${q.slot.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}` : '';
  const range = q.from !== undefined || q.to !== undefined
    ? `-${q.from !== undefined ? fileStamp(q.from) : 'start'}-${q.to !== undefined ? fileStamp(q.to) : 'end'}` : '';
  return `slotscope-crawl-${q.crawlId}${slot}${range}${EXPORT_EXTENSIONS[q.format][0]}`;
}

function text(res: ServerResponse, status: number, headers: Record<string, string>, body: string, head: boolean): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(head ? undefined : body);
}

/**
 * Answers GET/HEAD /export: 400 for a bad query (the parameter, the value and what is allowed),
 * 404 for an unknown crawl or slot, else 200 with the file streamed as an attachment. HEAD checks the
 * query only. An error once streaming has begun cuts the connection, so a download is never
 * silently short.
 */
export async function handleExport(
  req: IncomingMessage, res: ServerResponse, rawQuery: string, exporter: HistoryExporter,
  headers: Record<string, string>, log: (line: string) => void,
): Promise<void> {
  const head = req.method === 'HEAD';
  let q: ExportQuery & { readonly crawlId: number };
  try {
    q = parseExportQuery(rawQuery);
  } catch (e) {
    if (!(e instanceof BadQuery)) throw e;
    text(res, 400, headers, `${e.message}\n`, head);
    return;
  }
  res.statusCode = 200;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Type', EXPORT_CONTENT_TYPES[q.format]);
  res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(q)}"`);
  res.setHeader('Cache-Control', 'no-store');
  if (head) {
    res.end();
    return;
  }
  try {
    await exporter.exportHistory(q, res);
  } catch (e) {
    const err = e as Error & { field?: string; code?: string };
    if (!res.headersSent) {
      res.removeHeader('Content-Disposition');
      const status = err.name === 'ExportError' ? (err.code === 'not-found' || err.field === 'slot' ? 404 : 400) : 500;
      text(res, status, headers, status === 500 ? 'Export failed.\n' : `${err.message}\n`, false);
      if (status === 500) log(`export of crawl ${q.crawlId} failed: ${err.message}`);
      return;
    }
    log(`export of crawl ${q.crawlId} stopped: ${err.message}`);
    res.destroy(err);
  }
}
