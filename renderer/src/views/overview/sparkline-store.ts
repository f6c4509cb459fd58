// Delay sparklines of the busiest slots: each slot's downsampled history (about 60 buckets over the
// crawl), fetched together for the slots shown and refreshed every few seconds while the crawl runs.

import { FrameStore } from '../../store/frame-store';
import type { Transport } from '../../transport/transport';
import { fetchSeries } from '../history/history-api';

const SPARK_POINTS = 60;

/** At most one round of sparkline requests this often (the busiest slots can reorder ten times a second). */
const MIN_GAP_MS = 3000;

export class SparklineStore extends FrameStore {
  private readonly values = new Map<string, readonly number[]>();
  private seq = 0;
  private lastLoad = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly transport: Transport, private readonly crawlId: number) {
    super();
  }

  get(slot: string): readonly number[] | undefined {
    return this.values.get(slot);
  }

  /** Loads now, or once MIN_GAP_MS passed since the last round (the latest call wins). */
  request(slots: readonly string[], from: number, to: number): void {
    if (this.timer) clearTimeout(this.timer);
    const wait = this.lastLoad + MIN_GAP_MS - performance.now();
    if (wait <= 0) void this.load(slots, from, to);
    else this.timer = setTimeout(() => { this.timer = null; void this.load(slots, from, to); }, wait);
  }

  /** Drops a pending round. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Fetches the delays of `slots` over [from, to]; a later call supersedes an earlier one still running. */
  async load(slots: readonly string[], from: number, to: number): Promise<void> {
    const seq = ++this.seq;
    this.lastLoad = performance.now();
    const results = await Promise.allSettled(
      slots.map((slot) => fetchSeries(this.transport, { crawlId: this.crawlId, slot, from, to: to + 1, maxPoints: SPARK_POINTS })),
    );
    if (seq !== this.seq) return;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') this.values.set(slots[i], downsample(r.value.map((p) => p.avgDelay), SPARK_POINTS));
    });
    this.changed();
  }
}

/** At most `n` values: means of equal runs (the host may not downsample). */
export function downsample(values: readonly number[], n: number): number[] {
  if (values.length <= n) return [...values];
  const out: number[] = [];
  const step = values.length / n;
  for (let i = 0; i < n; i++) {
    const a = Math.floor(i * step);
    const b = Math.max(a + 1, Math.floor((i + 1) * step));
    let s = 0;
    for (let j = a; j < b; j++) s += values[j];
    out.push(s / (b - a));
  }
  return out;
}
