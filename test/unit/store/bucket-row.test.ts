// A bucket's stored histogram and p95 come straight from its sparse bins (issue 17: no 186-bin copy
// per row written); they must be what the dense counts give, bin for bin.
import { describe, expect, it } from 'vitest';
import { addEncodedHist, BucketAcc, HIST_BINS, histQuantile, latencyBin, SERIES_COLUMNS } from '../../../electron/core/store/aggregates';

const P95 = SERIES_COLUMNS.indexOf('latency_p95');
const HIST = SERIES_COLUMNS.indexOf('latency_hist');

/** A deterministic U[0, 1) source. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('BucketAcc.row', () => {
  it('stores the histogram and p95 the dense counts give, for sparse and dense buckets', () => {
    const random = rng(17);
    for (let trial = 0; trial < 500; trial++) {
      const a = new BucketAcc(1, 2, 1000, 0);
      const counts = new Float64Array(HIST_BINS);
      const n = Math.floor(random() * (trial % 4 === 0 ? 300 : 40));
      const spread = trial % 2 === 0 ? 0.01 : 50;
      let min = Infinity;
      let max = -Infinity;
      let latencies = 0;
      for (let i = 0; i < n; i++) {
        const latency = random() < 0.1 ? null : random() * spread * (random() < 0.05 ? 1e4 : 1);
        const bin = latency === null ? -1 : latencyBin(latency);
        a.add(i, 200, latency, bin, false, 0, 0, 1, 1);
        if (latency !== null) {
          counts[bin]++;
          latencies++;
          min = Math.min(min, latency);
          max = Math.max(max, latency);
        }
      }
      const row = a.row();
      const blob = row[HIST] as Uint8Array | null;
      const stored = new Float64Array(HIST_BINS);
      expect(addEncodedHist(stored, blob)).toBe(latencies);
      expect(Array.from(stored)).toEqual(Array.from(counts));
      if (blob !== null) for (let o = 5; o < blob.length; o += 5) expect(blob[o]).toBeGreaterThan(blob[o - 5]);
      expect(row[P95]).toBe(histQuantile(counts, latencies, 0.95, min, max));
      // Read back and written again: the same row.
      expect(BucketAcc.fromRow(row).row()).toEqual(row);
    }
  });
});
