// The browser host's ingest route for the slotscope-scrapy extension: POST /ingest/scrapy?token=…
// with a JSON batch; answered with the commands waiting for the spider (or 400/409/503 in words).
// The server checks the token, Host and Origin before it gets here, as for every other request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IngestReply } from '../core/scrapy/scrapy-crawls';
import { BadQuery, readQuery } from './query';

/** The route's path. */
export const SCRAPY_INGEST_PATH = '/ingest/scrapy';

/** The largest batch accepted, in bytes (the extension sends at most 2,000 records, well under 2 MB). */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024;

/** What the route needs from the host: the core's ingestScrapy. */
export interface ScrapyIngester {
  ingestScrapy(body: unknown): Promise<IngestReply>;
}

/** Whether `x` takes Scrapy batches (the core does; a stand-in dispatcher may not). */
export function isScrapyIngester(x: unknown): x is ScrapyIngester {
  return typeof x === 'object' && x !== null && typeof (x as { ingestScrapy?: unknown }).ingestScrapy === 'function';
}

function reply(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** Reads the body (at most MAX_BATCH_BYTES), parses it as JSON and hands it to the core. */
export async function handleScrapyIngest(
  req: IncomingMessage, res: ServerResponse, rawQuery: string, ingester: ScrapyIngester, headers: Record<string, string>, log: (line: string) => void,
): Promise<void> {
  try {
    readQuery(rawQuery, ['token'], SCRAPY_INGEST_PATH);
  } catch (e) {
    if (!(e instanceof BadQuery)) throw e;
    req.resume();
    reply(res, 400, headers, { ok: false, error: e.message });
    return;
  }
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type)) {
    req.resume();
    reply(res, 415, headers, { ok: false, error: `Content-Type ${JSON.stringify(type)} is not allowed (application/json)` });
    return;
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BATCH_BYTES) {
    req.resume();
    reply(res, 413, { ...headers, Connection: 'close' }, { ok: false, error: `a batch of ${declared} bytes is too large (at most ${MAX_BATCH_BYTES})` });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const tooLarge = await new Promise<boolean>((resolve, reject) => {
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BATCH_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve(true);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(false));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('the batch was cut off')));
  });
  if (tooLarge) {
    reply(res, 413, { ...headers, Connection: 'close' }, { ok: false, error: `the batch is too large (at most ${MAX_BATCH_BYTES} bytes)` });
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    reply(res, 400, headers, { ok: false, error: `batch refused, nothing of it applied: the body is not JSON (${(e as Error).message})` });
    return;
  }
  const r = await ingester.ingestScrapy(body);
  if (r.status === 400) log(`refused a Scrapy batch: ${'error' in r.body ? r.body.error : ''}`);
  reply(res, r.status, headers, r.body);
}
