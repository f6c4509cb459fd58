// The history views' calls to the host, in one place: downsampled series, response points, changes
// and events; methods a host may not offer yet are detected once ('unknown-method') and reported as absent.

import type { HistoryPoint, Method, Params, Result, ScatterPoint } from '../../../../shared/contract';
import type { Transport } from '../../transport/transport';
import { toAppError } from '../../transport/transport';

/** At most this many buckets per series request (the host downsamples to it): about one per pixel of a wide chart. */
export const MAX_POINTS = 600;

/** At most this many response points in a slot's scatter (the host keeps each bucket's extremes). */
export const SCATTER_POINTS = 2 * MAX_POINTS;

/** Methods found missing on this host (asked once per page). */
const missing = new Set<string>();

/** True when the host answered `unknown-method` for `method` earlier. */
export function isMissing(method: string): boolean {
  return missing.has(method);
}

/** Calls a method; resolves null when the host does not know it (remembered). Other refusals reject. */
export async function invokeIfPresent<M extends Method>(transport: Transport, method: M, params: Params<M>): Promise<Result<M> | null> {
  if (missing.has(method)) return null;
  try {
    return await transport.invoke(method, params);
  } catch (e) {
    if (toAppError(e).code === 'unknown-method') {
      missing.add(method);
      return null;
    }
    throw e;
  }
}

export type Resolution = 'second' | 'minute';



export interface SeriesQuery {
  readonly crawlId: number;
  /** One slot; the whole crawl without it. */
  readonly slot?: string;
  readonly from?: number;
  readonly to?: number;
  /** The finest bucket; the host merges them into coarser round spans when the range holds more than `maxPoints`. Default 'second'. */
  readonly resolution?: Resolution;
  readonly maxPoints?: number;
}

/** A slot's (or the crawl's) history buckets, oldest first. */
export function fetchSeries(transport: Transport, q: SeriesQuery): Promise<readonly HistoryPoint[]> {
  return transport.invoke('slots.history', {
    id: q.crawlId,
    ...(q.slot !== undefined ? { slot: q.slot } : {}),
    resolution: q.resolution ?? 'second',
    ...(q.from !== undefined ? { from: Math.floor(q.from) } : {}),
    ...(q.to !== undefined ? { to: Math.ceil(q.to) } : {}),
    maxPoints: q.maxPoints ?? MAX_POINTS,
  });
}

/** One response of the latency scatter (the host keeps each bucket's extremes when it downsamples). */
export type ResponsePoint = ScatterPoint;

/** A slot's responses as scatter points, or null when the host has no `slots.responses`. */
export function fetchResponses(
  transport: Transport, q: { crawlId: number; slot: string; from?: number; to?: number; maxPoints?: number },
): Promise<readonly ResponsePoint[] | null> {
  return invokeIfPresent(transport, 'slots.responses', {
    crawlId: q.crawlId, slot: q.slot, maxPoints: q.maxPoints ?? SCATTER_POINTS,
    ...(q.from !== undefined ? { from: Math.floor(q.from) } : {}),
    ...(q.to !== undefined ? { to: Math.ceil(q.to) } : {}),
  });
}
