// JSON Lines export: one JSON object per response with every field of EXPORT_FIELDS, so a line
// parses back into the record the store holds (null stays null, numbers keep every digit).
import type { ResponseRecord } from '../../../../shared/types';

/** One JSONL line (with its newline) for a response row of crawl `crawlId`. */
export function jsonlLine(crawlId: number, r: ResponseRecord): string {
  // Written out field by field: fixed key order, and no accidental extra keys from the row object.
  return `${JSON.stringify({
    crawlId,
    t: r.t,
    startedAt: r.startedAt,
    waitMs: r.waitMs,
    slot: r.slot,
    url: r.url,
    method: r.method,
    status: r.status,
    latency: r.latency,
    downloadTime: r.downloadTime,
    bytes: r.bytes,
    inFlight: r.inFlight,
    delayBefore: r.delayBefore,
    delayAfter: r.delayAfter,
    delayCause: r.delayCause,
    backoffLevel: r.backoffLevel,
    reused: r.reused,
    errorKind: r.errorKind,
    errorMessage: r.errorMessage,
    depth: r.depth,
    contentType: r.contentType,
  })}\n`;
}
