// A stored response row as the readers select it and map it back to a ResponseRecord: one column
// list and one mapper for the history's reads (queries.ts) and the Requests tab's (request-queries.ts).

import type { ResponseRecord, DelayCause, FailureKind } from '../../../shared/types';

/** The columns of a ResponseRecord, in toResponse's order (`r` responses, `s` slots). */
export const RESPONSE_COLUMNS = `r.t, r.started_at, r.wait_ms, s.key, r.url, r.method, r.status, r.latency, r.download_time,
  r.bytes, r.in_flight, r.delay_before, r.delay_after, r.delay_cause, r.backoff_level, r.reused, r.error_kind,
  r.error_message, r.depth, r.content_type`;

/** A row of RESPONSE_COLUMNS as a ResponseRecord. */
export function toResponse(r: readonly unknown[]): ResponseRecord {
  return {
    t: r[0] as number,
    startedAt: r[1] as number,
    waitMs: r[2] as number,
    slot: r[3] as string,
    url: r[4] as string,
    method: r[5] as string,
    status: r[6] as number | null,
    latency: r[7] as number | null,
    downloadTime: r[8] as number | null,
    bytes: r[9] as number,
    inFlight: r[10] as number,
    delayBefore: r[11] as number,
    delayAfter: r[12] as number,
    delayCause: r[13] as DelayCause,
    backoffLevel: r[14] as number,
    reused: r[15] === null ? null : r[15] === 1,
    errorKind: r[16] as FailureKind | null,
    errorMessage: r[17] as string | null,
    depth: r[18] as number,
    contentType: r[19] as string | null,
  };
}
