// The browser host's upload of a Scrapy log: POST /import?name=…[&tz=…] with the log as the body,
// streamed into the core's importer (constant memory, no size limit beyond the disk), answered with
// the import's report as JSON. The WebSocket's 'history.importScrapyLog' takes logs up to 1 MiB;
// this route takes any size. The server checks the token, Host and Origin before it gets here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type { ImportReport } from '../../shared/contract';
import type { LogSource } from '../core/store/import/import-scrapy';
import { parseTimeZone, TIME_ZONE_ALLOWED, type TimeZoneSpec } from '../core/store/export/wall-time';
import { BadQuery, readQuery } from './query';

/** The route's path. */
export const IMPORT_PATH = '/import';

/** What the route needs from the host: the core's importLog. */
export interface LogImporter {
  importLog(src: LogSource, o?: { readonly tz?: TimeZoneSpec }): Promise<ImportReport>;
}

/** Whether `x` can take uploads (the core can; a stand-in dispatcher may not). */
export function isLogImporter(x: unknown): x is LogImporter {
  return typeof x === 'object' && x !== null && typeof (x as { importLog?: unknown }).importLog === 'function';
}

const PARAMS = ['token', 'name', 'tz'];

/** Reads and checks the query (the raw string after `?`); throws BadQuery naming the parameter. */
export function parseImportQuery(raw: string): { readonly name: string; readonly tz?: TimeZoneSpec } {
  const q = readQuery(raw, PARAMS, IMPORT_PATH);
  const name = q.get('name');
  if (name === null || name.trim() === '' || name.length > 255) throw new BadQuery('name', name, "the log file's name, 1 to 255 characters");
  const tzText = q.get('tz');
  const tz = tzText === null ? undefined : parseTimeZone(tzText);
  if (tz === null) throw new BadQuery('tz', tzText, TIME_ZONE_ALLOWED);
  return { name: name.trim(), ...(tz !== undefined ? { tz } : {}) };
}

function reply(res: ServerResponse, status: number, headers: Record<string, string>, type: string, body: string): void {
  res.writeHead(status, { ...headers, 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/**
 * Answers POST /import: 400 for a bad query or a log with no AUTOTHROTTLE_DEBUG line (in words),
 * 200 with the ImportReport as JSON once the crawl is stored.
 */
export async function handleImport(
  req: IncomingMessage, res: ServerResponse, rawQuery: string, importer: LogImporter,
  headers: Record<string, string>, log: (line: string) => void,
): Promise<void> {
  let q: ReturnType<typeof parseImportQuery>;
  try {
    q = parseImportQuery(rawQuery);
  } catch (e) {
    if (!(e instanceof BadQuery)) throw e;
    req.resume();
    reply(res, 400, headers, 'text/plain; charset=utf-8', `${e.message}\n`);
    return;
  }
  const declared = Number(req.headers['content-length']);
  let bytes = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  req.pipe(counted);
  req.on('aborted', () => counted.destroy(new Error('the upload was cut off')));
  try {
    const report = await importer.importLog(
      { input: counted, size: Number.isFinite(declared) ? declared : 0, fileName: q.name, bytesRead: () => bytes },
      { tz: q.tz },
    );
    reply(res, 200, headers, 'application/json; charset=utf-8', JSON.stringify(report));
  } catch (e) {
    const err = e as Error & { field?: string };
    req.unpipe(counted);
    req.resume();
    if (err.name === 'ImportRefused' || err.field === 'text') {
      reply(res, 400, headers, 'text/plain; charset=utf-8', `${err.message}\n`);
      return;
    }
    log(`import of ${q.name} failed: ${err.message}`);
    if (!res.headersSent) reply(res, 500, headers, 'text/plain; charset=utf-8', `Import failed: ${err.message}\n`);
  }
}
