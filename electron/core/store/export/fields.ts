// The fields of one exported response (SPEC 7), declared once: JSON Lines and CSV write exactly
// these, in this order, and the README's field table is checked against this list by the tests.
import type { ResponseRecord } from '../../../../shared/types';

/** One column of the JSONL/CSV exports. */
export interface ExportField {
  /** The key in JSONL and the CSV header. */
  readonly name: string;
  /** Unit or type, as the README table shows it. */
  readonly unit: string;
  /** What the value means, as the README table shows it. */
  readonly meaning: string;
}

/** A response row with the crawl it belongs to. */
export interface ExportRow extends ResponseRecord {
  readonly crawlId: number;
}

/**
 * Every exported field, in column order. The names are ResponseRecord's (plus crawlId), so a JSONL
 * line parses back into the record the store returns.
 */
export const EXPORT_FIELDS: readonly ExportField[] = [
  { name: 'crawlId', unit: 'integer', meaning: 'The crawl the response belongs to.' },
  { name: 't', unit: 'epoch ms', meaning: 'When the response ended (body read) or the download failed.' },
  { name: 'startedAt', unit: 'epoch ms', meaning: 'When the request was handed to the HTTP client.' },
  { name: 'waitMs', unit: 'ms', meaning: "Time the request waited in its slot's queue before it started (the HAR `blocked` time)." },
  { name: 'slot', unit: 'text', meaning: 'The throttling slot (by default the lower-cased host name).' },
  { name: 'url', unit: 'text', meaning: 'The requested URL (empty when unknown, e.g. an imported Scrapy line without its Crawled line).' },
  { name: 'method', unit: 'text', meaning: 'HTTP method (empty when unknown).' },
  { name: 'status', unit: 'integer or null', meaning: 'HTTP status; null for a failed download (or an imported line whose status the log does not give).' },
  { name: 'latency', unit: 's or null', meaning: 'From hand-over to the HTTP client until the response headers arrived (what AutoThrottle uses).' },
  { name: 'downloadTime', unit: 's or null', meaning: 'From the headers to the end of the body; null when no body was read.' },
  { name: 'bytes', unit: 'bytes', meaning: 'Body bytes as received on the wire (before decompression).' },
  { name: 'inFlight', unit: 'count', meaning: 'Requests in flight on the slot when the response arrived, this one included (`conc` of the debug line).' },
  { name: 'delayBefore', unit: 's', meaning: "The slot's effective delay just before the response was processed." },
  { name: 'delayAfter', unit: 's', meaning: "The slot's effective delay just after the response was processed." },
  { name: 'delayCause', unit: 'text', meaning: 'What binds the delay after: none, floor, autothrottle, backoff, rampup, crawl-delay, retry-after or pin.' },
  { name: 'backoffLevel', unit: 'integer', meaning: "The slot's backoff level after the response (0 = no backoff)." },
  { name: 'reused', unit: 'boolean or null', meaning: 'Whether the request went over an already open connection; null when unknown.' },
  { name: 'errorKind', unit: 'text or null', meaning: 'Failure kind (timeout, connect-refused, connect-reset, tls, dns, maxsize, cancelled, redirect-limit, invalid-url, other); null for a response.' },
  { name: 'errorMessage', unit: 'text or null', meaning: "The failure's message; null for a response." },
  { name: 'depth', unit: 'integer', meaning: 'Link depth of the request (0 for a seed).' },
  { name: 'contentType', unit: 'text or null', meaning: 'The Content-Type response header, if any.' },
];

/** The values of one row of crawl `crawlId` in EXPORT_FIELDS order. */
export function fieldValues(crawlId: number, r: ResponseRecord): unknown[] {
  return [
    crawlId, r.t, r.startedAt, r.waitMs, r.slot, r.url, r.method, r.status, r.latency, r.downloadTime, r.bytes,
    r.inFlight, r.delayBefore, r.delayAfter, r.delayCause, r.backoffLevel, r.reused, r.errorKind, r.errorMessage,
    r.depth, r.contentType,
  ];
}
