// The data behind a slot's (or the crawl's) charts for one time range, outside React: fetched
// downsampled from the host, then, while the crawl runs, the tail refetched every second and appended.

import type { HistoryPoint } from '../../../../shared/contract';
import type { EventRecord, ThrottleNote } from '../../../../shared/types';
import { FrameStore } from '../../store/frame-store';
import type { Transport } from '../../transport/transport';
import { toAppError } from '../../transport/transport';
import { fetchResponses, fetchSeries, MAX_POINTS, SCATTER_POINTS, type ResponsePoint } from './history-api';

/** The range picker's choice: the last N ms, the whole crawl, or a range zoomed or typed. */
export type RangeChoice =
  | { readonly kind: 'last'; readonly ms: number }
  | { readonly kind: 'all' }
  | { readonly kind: 'custom'; readonly from: number; readonly to: number };

/** When the crawl ran: `end` is null while it runs (now moves). */
export interface CrawlSpan {
  readonly start: number | null;
  readonly end: number | null;
  readonly live: boolean;
}

export interface HistoryData {
  /** The range shown, epoch ms. */
  readonly from: number;
  readonly to: number;
  readonly points: readonly HistoryPoint[];
  /** Response points for the scatter; null when not asked for or the host has no `slots.responses`. */
  readonly responses: readonly ResponsePoint[] | null;
  /** The response points of this range are still on their way (charts keep the previous ones meanwhile). */
  readonly scatterPending: boolean;
  /** Retry-After info events of the slot (their reason words). */
  readonly infos: readonly EventRecord[];
  readonly loading: boolean;
  readonly error: string | null;
  /** Milliseconds the last full fetch took (host round trip included). */
  readonly fetchMs: number | null;
  /** Bumped on every full (re)load; live tail appends keep it. */
  readonly generation: number;
}

const EMPTY: HistoryData = {
  from: 0, to: 0, points: [], responses: null, scatterPending: false, infos: [], loading: true, error: null, fetchMs: null, generation: 0,
};

const LIVE_MS = 1000;

/** The throttle's note that a Retry-After block began: its text says why. */
const RETRY_AFTER: ThrottleNote = 'retry-after';
const isRetryAfter = (e: EventRecord): boolean => e.code === RETRY_AFTER;

export interface HistorySourceOptions {
  readonly crawlId: number;
  /** One slot; the whole crawl without it. */
  readonly slot?: string;
  /** Ask for response points (the latency scatter). */
  readonly responses?: boolean;
  /** Ask for the slot's Retry-After info events. */
  readonly infos?: boolean;
  /** At most this many buckets (the host downsamples). */
  readonly maxPoints?: number;
}

export class HistorySource extends FrameStore {
  private value: HistoryData = EMPTY;
  private range: RangeChoice = { kind: 'all' };
  private span: CrawlSpan = { start: null, end: null, live: false };
  private seq = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private tailBusy = false;
  private infosLoaded = false;
  /**
   * Hears every change at once (not on the next frame like subscribers): charts take their new
   * points in the same turn the answer arrived and paint on the next frame.
   */
  onData: ((v: HistoryData) => void) | null = null;
  private disposed = false;

  constructor(private readonly transport: Transport, readonly o: HistorySourceOptions) {
    super();
  }

  current(): HistoryData {
    return this.value;
  }

  rangeChoice(): RangeChoice {
    return this.range;
  }

  /** Sets the range and the crawl's span; refetches when either changed what is shown. */
  configure(range: RangeChoice, span: CrawlSpan): void {
    const same = sameRange(range, this.range) && span.start === this.span.start && span.end === this.span.end && span.live === this.span.live;
    this.range = range;
    this.span = span;
    this.disposed = false;
    this.setLive(span.live && range.kind !== 'custom');
    if (!same || this.value.generation === 0) void this.load();
  }

  /** The range [from, to] the choice means now. */
  window(now = Date.now()): { from: number; to: number } {
    const r = this.range;
    if (r.kind === 'custom') return { from: r.from, to: r.to };
    const end = this.span.live || this.span.end === null ? now : this.span.end;
    if (r.kind === 'last') return { from: end - r.ms, to: end };
    return { from: this.span.start ?? end - 60_000, to: Math.max(end, (this.span.start ?? end) + 1000) };
  }

  /**
   * Refetches the whole range in two steps, each painted as it arrives: the buckets first (every
   * chart but the scatter), then the response points, the slower query over raw rows.
   */
  async load(): Promise<void> {
    const seq = ++this.seq;
    const { from, to } = this.window();
    const started = performance.now();
    const slot = this.o.slot;
    const wantScatter = this.o.responses === true && slot !== undefined;
    this.set({ ...this.value, loading: true });
    try {
      // The buckets first, with the Retry-After reasons (once: they do not depend on the range); the
      // response points are asked only once the buckets are in, so their slower query over raw rows
      // never holds up the host's answer with the buckets.
      const series = fetchSeries(this.transport, { crawlId: this.o.crawlId, slot, from, to: to + 1, maxPoints: this.o.maxPoints });
      const infosAsked = this.o.infos && slot !== undefined && !this.infosLoaded
        ? this.transport.invoke('log.events', { id: this.o.crawlId, slot, kind: 'info' })
        : Promise.resolve(null);
      infosAsked.catch(() => undefined);
      const points = await series;
      const infos = await infosAsked;
      if (seq !== this.seq || this.disposed) return;
      if (infos) this.infosLoaded = true;
      const keep = this.value.from === from && this.value.to === to ? this.value.responses : null;
      this.set({
        from, to, points, responses: wantScatter ? keep : null, scatterPending: wantScatter && keep === null,
        infos: infos ? infos.filter(isRetryAfter) : this.value.infos,
        loading: wantScatter, error: null, fetchMs: performance.now() - started, generation: this.value.generation + 1,
      });
      if (!wantScatter) return;
      const responses = await fetchResponses(this.transport, { crawlId: this.o.crawlId, slot, from, to: to + 1 });
      if (seq !== this.seq || this.disposed) return;
      this.set({ ...this.value, responses, scatterPending: false, loading: false, fetchMs: performance.now() - started });
    } catch (e) {
      if (seq !== this.seq || this.disposed) return;
      this.set({ ...this.value, loading: false, scatterPending: false, error: toAppError(e).message });
    }
  }

  /** While live: the tail since the last bucket, appended; the window slides. */
  async tail(): Promise<void> {
    if (this.tailBusy || this.value.generation === 0 || this.value.loading) return;
    const { from, to } = this.window();
    const v = this.value;
    // The tail comes in 1 s buckets; once they pile up, one full load merges them again.
    if (v.points.length > 2.5 * (this.o.maxPoints ?? MAX_POINTS)) return void this.load();
    const lastT = v.points.length > 0 ? v.points[v.points.length - 1].t : from;
    // The last bucket is fetched again: it was still filling.
    const tailFrom = Math.max(from, lastT);
    const lastResponse = v.responses && v.responses.length > 0 ? v.responses[v.responses.length - 1].t : from;
    const seq = this.seq;
    this.tailBusy = true;
    try {
      const [points, responses, infos] = await Promise.all([
        fetchSeries(this.transport, { crawlId: this.o.crawlId, slot: this.o.slot, from: tailFrom, to: to + 1, maxPoints: this.o.maxPoints }),
        v.responses !== null && this.o.slot !== undefined
          ? fetchResponses(this.transport, {
            crawlId: this.o.crawlId, slot: this.o.slot, from: lastResponse, to: to + 1,
            // As dense as the loaded range: the points scale with the tail's share of the window.
            maxPoints: Math.max(50, Math.ceil((SCATTER_POINTS * (to - lastResponse)) / Math.max(1, to - from))),
          })
          : Promise.resolve(null),
        this.o.infos && this.o.slot !== undefined
          ? this.transport.invoke('log.events', { id: this.o.crawlId, slot: this.o.slot, kind: 'info', limit: 200 })
          : Promise.resolve([] as readonly EventRecord[]),
      ]);
      if (seq !== this.seq || this.disposed) return;
      const kept = v.points.filter((p) => p.t >= from && p.t < tailFrom);
      const keptResponses = v.responses?.filter((p) => p.t >= from && p.t < lastResponse) ?? null;
      const newInfos = infos.filter(isRetryAfter);
      const seen = new Set(v.infos.map((e) => e.t));
      this.set({
        ...v, from, to,
        points: kept.concat(points),
        responses: keptResponses && responses ? keptResponses.concat(responses) : v.responses,
        infos: newInfos.some((e) => !seen.has(e.t)) ? v.infos.concat(newInfos.filter((e) => !seen.has(e.t))) : v.infos,
      });
    } catch {
      // A failed tail is retried on the next tick; the shown data stays.
    } finally {
      this.tailBusy = false;
    }
  }

  /** Stops the live tail and drops answers still on their way (configure() starts again). */
  dispose(): void {
    this.disposed = true;
    this.setLive(false);
  }

  private setLive(on: boolean): void {
    if (on && !this.timer) this.timer = setInterval(() => void this.tail(), LIVE_MS);
    if (!on && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private set(v: HistoryData): void {
    this.value = v;
    this.onData?.(v);
    this.changed();
  }
}

function sameRange(a: RangeChoice, b: RangeChoice): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'last' && b.kind === 'last') return a.ms === b.ms;
  if (a.kind === 'custom' && b.kind === 'custom') return a.from === b.from && a.to === b.to;
  return true;
}
