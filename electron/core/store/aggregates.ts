// Aggregates of the responses per second, 10 seconds, minute, 10 minutes and hour, per slot and for
// the whole crawl, kept by the history worker as samples arrive so charts over hours read buckets.
//
// Each bucket holds counts by status class, latency sum/min/max and a p95 estimate, the delay (sum
// and last), in-flight (sum and max), bytes, and three exemplar responses (the slowest, the
// fastest and the one with the worst status) that the latency scatter shows when it cannot show
// every response. Buckets still filling stay in memory and are written (INSERT OR REPLACE) at most
// once per AGGREGATE_WRITE_MS and on every flush; `series_state.covered_id` records which response
// rows the stored buckets include, so after a crash the worker re-aggregates the rows above it.
//
// p95: a fixed log-scale histogram of 8 bins per doubling between 2^-14 s (61 µs) and 2^9 s (512 s),
// plus an underflow and an overflow bin, stored sparsely in the bucket (latency_hist). The estimate is
// the geometric middle of the bin holding the nearest-rank 95th percentile, clamped to the bucket's
// exact min and max, so it is within 2^(1/16) − 1 ≈ 4.4 % of the true nearest-rank p95 for latencies
// in [61 µs, 512 s), within 61 µs below that range, and at most the max above it. Merged buckets
// (downsampling) merge their histograms, so the same bound holds for any group of buckets.
import type { Database, Statement } from 'better-sqlite3';

/**
 * Bucket widths kept, in ms: 1 s, 10 s, 1 min, 10 min, 1 h. A downsampled point then never merges
 * more than a few buckets of the level below it (reads stay small for any range).
 */
export const LEVELS = [1000, 10_000, 60_000, 600_000, 3_600_000] as const;
export type Level = (typeof LEVELS)[number];

/**
 * Stored buckets are written at most this often (and on every flush/close), in ms: a slot's coarse
 * buckets are rewritten once per write, so writing less often is what keeps them cheap at 100,000
 * samples/s. Readers flush first; after a crash the rows of those seconds are aggregated again.
 */
export const AGGREGATE_WRITE_MS = 5000;

// --------------------------------------------------------------------------------------------
// The latency histogram.

/** Bins per doubling of latency. */
export const HIST_BINS_PER_OCTAVE = 8;
const LOW_EXP = -14;
const HIGH_EXP = 9;
/** Bins: 0 = below 2^-14 s, 1..184 log-scale, 185 = 2^9 s and above. */
export const HIST_BINS = (HIGH_EXP - LOW_EXP) * HIST_BINS_PER_OCTAVE + 2;
const LOW = 2 ** LOW_EXP;
const HIGH = 2 ** HIGH_EXP;
/** Largest relative error of a p95 estimate for latencies in [2^-14 s, 2^9 s). */
export const P95_RELATIVE_ERROR = 2 ** (1 / (2 * HIST_BINS_PER_OCTAVE)) - 1;

/** The histogram bin of a latency in seconds. */
export function latencyBin(latency: number): number {
  if (!(latency >= LOW)) return 0;
  if (latency >= HIGH) return HIST_BINS - 1;
  const b = 1 + Math.floor((Math.log2(latency) - LOW_EXP) * HIST_BINS_PER_OCTAVE);
  return b < 1 ? 1 : b > HIST_BINS - 2 ? HIST_BINS - 2 : b;
}

/** The value a bin stands for: its geometric middle (NaN for the open-ended end bins). */
export function binValue(bin: number): number {
  if (bin <= 0 || bin >= HIST_BINS - 1) return NaN;
  return 2 ** ((bin - 0.5) / HIST_BINS_PER_OCTAVE + LOW_EXP);
}

/**
 * The nearest-rank `q` quantile (0 < q ≤ 1) of a histogram given as dense counts, clamped to
 * [min, max]; null when it is empty.
 */
export function histQuantile(counts: ArrayLike<number>, n: number, q: number, min: number, max: number): number | null {
  if (n <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let b = 0; b < HIST_BINS; b++) {
    seen += counts[b];
    if (seen >= rank) return quantileOfBin(b, min, max);
  }
  return max;
}

/** What a quantile that falls in bin `b` is said to be: the bin's value clamped to [min, max] (the end bins: min, max). */
function quantileOfBin(b: number, min: number, max: number): number {
  if (b === 0) return min;
  if (b === HIST_BINS - 1) return max;
  const v = binValue(b);
  return v < min ? min : v > max ? max : v;
}

/** Adds a stored (sparse) histogram to dense counts; returns the number of samples it held. */
export function addEncodedHist(counts: Float64Array, blob: Uint8Array | null): number {
  if (blob === null) return 0;
  let n = 0;
  for (let o = 0; o + 5 <= blob.length; o += 5) {
    const c = blob[o + 1] | (blob[o + 2] << 8) | (blob[o + 3] << 16) | (blob[o + 4] * 0x1000000);
    counts[blob[o]] += c;
    n += c;
  }
  return n;
}

/** What a histogram held at a point in time (Hist.mark). */
interface HistMark {
  readonly bins: readonly number[];
  readonly counts: readonly number[];
  readonly dense: Float64Array | null;
}

/** Most (bin, count) pairs a histogram keeps sparse; past it, it goes dense. */
const SPARSE_MAX = 24;
/** Scratch of Hist.ascending (one thread, never re-entered). */
const ORDER = new Int32Array(SPARSE_MAX);

/**
 * A count as uint32 little-endian at `o` (what Buffer's writeUInt32LE writes, without its range
 * checks: a count is a whole number of responses, far below 2^32).
 */
function putUint32(out: Uint8Array, o: number, c: number): void {
  out[o] = c & 0xff;
  out[o + 1] = (c >>> 8) & 0xff;
  out[o + 2] = (c >>> 16) & 0xff;
  out[o + 3] = c >>> 24;
}

/** A bucket's histogram while it fills: sparse (bin, count) pairs, dense once it spreads wide. */
class Hist {
  bins: number[] = [];
  counts: number[] = [];
  dense: Float64Array | null = null;
  private last = -1;

  add(bin: number, k = 1): void {
    if (this.dense !== null) {
      this.dense[bin] += k;
      return;
    }
    const bins = this.bins;
    if (this.last >= 0 && bins[this.last] === bin) {
      this.counts[this.last] += k;
      return;
    }
    for (let i = 0; i < bins.length; i++) {
      if (bins[i] === bin) {
        this.counts[i] += k;
        this.last = i;
        return;
      }
    }
    if (bins.length >= SPARSE_MAX) {
      const d = new Float64Array(HIST_BINS);
      for (let i = 0; i < bins.length; i++) d[bins[i]] = this.counts[i];
      d[bin] += k;
      this.dense = d;
      this.bins = [];
      this.counts = [];
      return;
    }
    bins.push(bin);
    this.counts.push(k);
    this.last = bins.length - 1;
  }

  /** A copy of the counts so far, for addDeltaTo. */
  mark(): HistMark {
    return this.dense !== null
      ? { bins: [], counts: [], dense: Float64Array.from(this.dense) }
      : { bins: this.bins.slice(), counts: this.counts.slice(), dense: null };
  }

  /** Adds to `into` what was added to this histogram since `since` (null: since it was empty). */
  addDeltaTo(into: Hist, since: HistMark | null): void {
    if (this.dense === null) {
      // Sparse bins only ever get appended, so entry i of the mark is entry i here.
      const prev = since?.counts ?? [];
      for (let i = 0; i < this.bins.length; i++) {
        const d = this.counts[i] - (i < prev.length ? prev[i] : 0);
        if (d > 0) into.add(this.bins[i], d);
      }
      return;
    }
    let before: Float64Array | null = null;
    if (since !== null) {
      before = since.dense ?? new Float64Array(HIST_BINS);
      if (since.dense === null) for (let i = 0; i < since.bins.length; i++) before[since.bins[i]] = since.counts[i];
    }
    for (let b = 0; b < HIST_BINS; b++) {
      const d = this.dense[b] - (before === null ? 0 : before[b]);
      if (d > 0) into.add(b, d);
    }
  }

  /** Dense counts (a copy when sparse). */
  toDense(): Float64Array {
    if (this.dense !== null) return this.dense;
    const d = new Float64Array(HIST_BINS);
    for (let i = 0; i < this.bins.length; i++) d[this.bins[i]] = this.counts[i];
    return d;
  }

  /**
   * Puts the indexes of the sparse bins in ascending bin order into ORDER (an insertion sort: there
   * are at most SPARSE_MAX) and returns how many there are. No allocation: a bucket's row is built
   * once per write for thousands of buckets, mostly by code the worker has not optimised yet.
   */
  private ascending(): number {
    const bins = this.bins;
    const k = bins.length;
    for (let i = 0; i < k; i++) {
      const b = bins[i];
      let j = i;
      while (j > 0 && bins[ORDER[j - 1]] > b) {
        ORDER[j] = ORDER[j - 1];
        j--;
      }
      ORDER[j] = i;
    }
    return k;
  }

  /**
   * histQuantile of these counts (`n` of them). A sparse histogram (most buckets: a few bins) is
   * read in bin order without being spread into the 186 dense bins first, with the same result.
   */
  quantile(n: number, q: number, min: number, max: number): number | null {
    if (this.dense !== null) return histQuantile(this.dense, n, q, min, max);
    if (n <= 0) return null;
    const rank = Math.max(1, Math.ceil(q * n));
    let seen = 0;
    const k = this.ascending();
    for (let r = 0; r < k; r++) {
      const i = ORDER[r];
      seen += this.counts[i];
      if (seen >= rank) return quantileOfBin(this.bins[i], min, max);
    }
    return max;
  }

  /** Sparse bytes: 5 per non-empty bin (bin, then its count as uint32 little-endian), bins ascending. */
  encode(): Uint8Array | null {
    if (this.dense === null) {
      // The same bytes as from the dense counts below, without spreading them first.
      const counts = this.counts;
      const k = this.ascending();
      let m = 0;
      for (let r = 0; r < k; r++) if (counts[ORDER[r]] > 0) m++;
      if (m === 0) return null;
      // A plain Uint8Array (SQLite stores it as a BLOB, read back as a Buffer): Buffer's pool costs more per small blob.
      const out = new Uint8Array(m * 5);
      let o = 0;
      for (let r = 0; r < k; r++) {
        const i = ORDER[r];
        const c = counts[i];
        if (c <= 0) continue;
        out[o] = this.bins[i];
        putUint32(out, o + 1, c);
        o += 5;
      }
      return out;
    }
    const d = this.dense;
    let k = 0;
    for (let b = 0; b < HIST_BINS; b++) if (d[b] > 0) k++;
    if (k === 0) return null;
    const out = new Uint8Array(k * 5);
    let o = 0;
    for (let b = 0; b < HIST_BINS; b++) {
      const c = d[b];
      if (c <= 0) continue;
      out[o] = b;
      putUint32(out, o + 1, c);
      o += 5;
    }
    return out;
  }

  static decode(blob: Uint8Array | null): Hist {
    const h = new Hist();
    if (blob === null) return h;
    for (let o = 0; o + 5 <= blob.length; o += 5) {
      h.add(blob[o], blob[o + 1] | (blob[o + 2] << 8) | (blob[o + 3] << 16) | (blob[o + 4] * 0x1000000));
    }
    return h;
  }
}

// --------------------------------------------------------------------------------------------
// One bucket.

/** How bad a response's outcome is, for the scatter's "worst status" exemplar (0 = a 2xx). */
export function severity(status: number | null, failed: boolean): number {
  if (failed || status === null) return 6;
  if (status >= 500) return 5;
  if (status === 429) return 4;
  if (status >= 400) return 3;
  if (status >= 300) return 2;
  if (status < 200) return 1;
  return 0;
}

/** The columns of a series row, in the order BucketAcc.row() returns them. */
export const SERIES_COLUMNS = [
  'crawl_id', 'res_ms', 'slot_id', 'bucket', 'requests', 'responses', 's2xx', 's3xx', 's4xx', 's5xx', 's429', 'failures',
  'latency_sum', 'latency_n', 'latency_min', 'min_t', 'min_status', 'min_delay', 'latency_max', 'max_t', 'max_status',
  'max_delay', 'latency_p95', 'latency_hist', 'odd_sev', 'odd_t', 'odd_latency', 'odd_status', 'odd_delay', 'delay_sum',
  'delay_last', 'delay_last_t', 'in_flight_sum', 'in_flight_max', 'bytes',
] as const;

/** The sums and counts of a bucket at one time (BucketAcc.mark), to add only what came after. */
interface FoldMark {
  readonly requests: number;
  readonly responses: number;
  readonly s2xx: number;
  readonly s3xx: number;
  readonly s4xx: number;
  readonly s5xx: number;
  readonly s429: number;
  readonly failures: number;
  readonly latencySum: number;
  readonly latencyN: number;
  readonly delaySum: number;
  readonly inFlightSum: number;
  readonly bytes: number;
  readonly hist: HistMark;
}

/** The running figures of one bucket (one slot or the whole crawl, one level, one time span). */

/** The counters a response's HTTP status moves; slot_stats and series rows count alike (s4xx includes 429). */
export interface StatusCounts {
  responses: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s5xx: number;
  s429: number;
}

export function countStatus(c: StatusCounts, status: number): void {
  c.responses++;
  if (status >= 200 && status < 300) c.s2xx++;
  else if (status >= 300 && status < 400) c.s3xx++;
  else if (status >= 400 && status < 500) {
    c.s4xx++;
    if (status === 429) c.s429++;
  } else if (status >= 500 && status < 600) c.s5xx++;
}

export class BucketAcc {
  requests = 0;
  responses = 0;
  s2xx = 0;
  s3xx = 0;
  s4xx = 0;
  s5xx = 0;
  s429 = 0;
  failures = 0;
  latencySum = 0;
  latencyN = 0;
  latencyMin = Infinity;
  minT = 0;
  minStatus: number | null = null;
  minDelay = 0;
  latencyMax = -Infinity;
  maxT = 0;
  maxStatus: number | null = null;
  maxDelay = 0;
  readonly hist = new Hist();
  oddSev = 0;
  oddT = 0;
  oddLatency: number | null = null;
  oddStatus: number | null = null;
  oddDelay = 0;
  delaySum = 0;
  delayLast = 0;
  delayLastT = -Infinity;
  inFlightSum = 0;
  inFlightMax = 0;
  bytes = 0;
  /** Changed since it was last written. */
  dirty = false;
  /** What of this (current) second bucket was already added to the coarser levels (null: nothing). */
  folded: FoldMark | null = null;

  constructor(
    readonly crawlId: number,
    readonly slotId: number,
    readonly res: number,
    readonly bucket: number,
  ) {}

  /** One response; `bin` is latencyBin(latency) and `sev` severity(status, failed), computed once per row by the caller. */
  add(
    t: number, status: number | null, latency: number | null, bin: number, failed: boolean, sev: number, delay: number, bytes: number,
    inFlight: number,
  ): void {
    this.requests++;
    if (status !== null) countStatus(this, status);
    if (failed) this.failures++;
    if (latency !== null) {
      this.latencySum += latency;
      this.latencyN++;
      if (latency < this.latencyMin) {
        this.latencyMin = latency;
        this.minT = t;
        this.minStatus = status;
        this.minDelay = delay;
      }
      if (latency > this.latencyMax) {
        this.latencyMax = latency;
        this.maxT = t;
        this.maxStatus = status;
        this.maxDelay = delay;
      }
      this.hist.add(bin);
    }
    if (sev > this.oddSev) {
      this.oddSev = sev;
      this.oddT = t;
      this.oddLatency = latency;
      this.oddStatus = status;
      this.oddDelay = delay;
    }
    this.delaySum += delay;
    if (t >= this.delayLastT) {
      this.delayLastT = t;
      this.delayLast = delay;
    }
    this.inFlightSum += inFlight;
    if (inFlight > this.inFlightMax) this.inFlightMax = inFlight;
    this.bytes += bytes;
  }

  /** A record of what this bucket holds now (see folded). */
  mark(): FoldMark {
    return {
      requests: this.requests, responses: this.responses, s2xx: this.s2xx, s3xx: this.s3xx, s4xx: this.s4xx, s5xx: this.s5xx,
      s429: this.s429, failures: this.failures, latencySum: this.latencySum, latencyN: this.latencyN, delaySum: this.delaySum,
      inFlightSum: this.inFlightSum, bytes: this.bytes, hist: this.hist.mark(),
    };
  }

  /**
   * Adds what `src` (a finer bucket inside this one) received since `since`: sums and counts by
   * difference, the histogram by difference, min/max/worst/last by comparison (repeating is harmless).
   */
  addDelta(src: BucketAcc, since: FoldMark | null): void {
    this.requests += src.requests - (since?.requests ?? 0);
    this.responses += src.responses - (since?.responses ?? 0);
    this.s2xx += src.s2xx - (since?.s2xx ?? 0);
    this.s3xx += src.s3xx - (since?.s3xx ?? 0);
    this.s4xx += src.s4xx - (since?.s4xx ?? 0);
    this.s5xx += src.s5xx - (since?.s5xx ?? 0);
    this.s429 += src.s429 - (since?.s429 ?? 0);
    this.failures += src.failures - (since?.failures ?? 0);
    this.latencySum += src.latencySum - (since?.latencySum ?? 0);
    this.latencyN += src.latencyN - (since?.latencyN ?? 0);
    this.delaySum += src.delaySum - (since?.delaySum ?? 0);
    this.inFlightSum += src.inFlightSum - (since?.inFlightSum ?? 0);
    this.bytes += src.bytes - (since?.bytes ?? 0);
    src.hist.addDeltaTo(this.hist, since?.hist ?? null);
    if (src.latencyN > 0) {
      if (src.latencyMin < this.latencyMin) {
        this.latencyMin = src.latencyMin;
        this.minT = src.minT;
        this.minStatus = src.minStatus;
        this.minDelay = src.minDelay;
      }
      if (src.latencyMax > this.latencyMax) {
        this.latencyMax = src.latencyMax;
        this.maxT = src.maxT;
        this.maxStatus = src.maxStatus;
        this.maxDelay = src.maxDelay;
      }
    }
    if (src.oddSev > this.oddSev) {
      this.oddSev = src.oddSev;
      this.oddT = src.oddT;
      this.oddLatency = src.oddLatency;
      this.oddStatus = src.oddStatus;
      this.oddDelay = src.oddDelay;
    }
    if (src.requests > 0 && src.delayLastT >= this.delayLastT) {
      this.delayLastT = src.delayLastT;
      this.delayLast = src.delayLast;
    }
    if (src.inFlightMax > this.inFlightMax) this.inFlightMax = src.inFlightMax;
  }

  /** p95 of the latencies so far (see the module comment for its error), null without any. */
  p95(): number | null {
    return this.hist.quantile(this.latencyN, 0.95, this.latencyMin, this.latencyMax);
  }

  /** The row to store, in SERIES_COLUMNS order. */
  row(): unknown[] {
    const has = this.latencyN > 0;
    return [
      this.crawlId, this.res, this.slotId, this.bucket, this.requests, this.responses, this.s2xx, this.s3xx, this.s4xx,
      this.s5xx, this.s429, this.failures, this.latencySum, this.latencyN,
      has ? this.latencyMin : null, has ? this.minT : null, has ? this.minStatus : null, has ? this.minDelay : null,
      has ? this.latencyMax : null, has ? this.maxT : null, has ? this.maxStatus : null, has ? this.maxDelay : null,
      this.p95(), this.hist.encode(),
      this.oddSev, this.oddSev > 0 ? this.oddT : null, this.oddSev > 0 ? this.oddLatency : null,
      this.oddSev > 0 ? this.oddStatus : null, this.oddSev > 0 ? this.oddDelay : null,
      this.delaySum, this.delayLast, this.delayLastT === -Infinity ? 0 : this.delayLastT, this.inFlightSum, this.inFlightMax,
      this.bytes,
    ];
  }

  /** A bucket read back from its stored row (SERIES_COLUMNS order), to go on filling it. */
  static fromRow(r: readonly unknown[]): BucketAcc {
    const a = new BucketAcc(r[0] as number, r[2] as number, r[1] as number, r[3] as number);
    a.requests = r[4] as number;
    a.responses = r[5] as number;
    a.s2xx = r[6] as number;
    a.s3xx = r[7] as number;
    a.s4xx = r[8] as number;
    a.s5xx = r[9] as number;
    a.s429 = r[10] as number;
    a.failures = r[11] as number;
    a.latencySum = r[12] as number;
    a.latencyN = r[13] as number;
    if (a.latencyN > 0) {
      a.latencyMin = r[14] as number;
      a.minT = r[15] as number;
      a.minStatus = r[16] as number | null;
      a.minDelay = r[17] as number;
      a.latencyMax = r[18] as number;
      a.maxT = r[19] as number;
      a.maxStatus = r[20] as number | null;
      a.maxDelay = r[21] as number;
    }
    const h = Hist.decode(r[23] as Uint8Array | null);
    (a as { hist: Hist }).hist = h;
    a.oddSev = r[24] as number;
    if (a.oddSev > 0) {
      a.oddT = r[25] as number;
      a.oddLatency = r[26] as number | null;
      a.oddStatus = r[27] as number | null;
      a.oddDelay = r[28] as number;
    }
    a.delaySum = r[29] as number;
    a.delayLast = r[30] as number;
    a.delayLastT = r[31] as number;
    a.inFlightSum = r[32] as number;
    a.inFlightMax = r[33] as number;
    a.bytes = r[34] as number;
    return a;
  }
}

// --------------------------------------------------------------------------------------------
// The aggregator of the writer.

/** One level of one slot (or of the whole crawl): the buckets filling, newest last. */
interface LevelState {
  readonly res: number;
  /** Highest bucket known to be stored (NaN: not looked up yet). Later buckets are new. */
  maxStored: number;
  open: BucketAcc[];
}

/**
 * A slot's (slotId > 0) or a whole crawl's (slotId 0) levels. A response of the current second
 * goes into that second only; what the second gained is added to the coarser buckets holding it
 * ("folded") when the next second starts and before each write, so a response costs one bucket
 * update per series instead of one per level. A response for an older second (a late one) goes
 * into every level at once.
 */
interface Series {
  readonly crawlId: number;
  readonly slotId: number;
  readonly levels: readonly LevelState[];
  /** The second bucket responses are arriving in, or null. */
  current: BucketAcc | null;
  /** `current` got responses since its last fold. */
  unfolded: boolean;
  /** Write round in which it was last touched, to drop idle series from memory. */
  touched: number;
}

/** Series idle for this many write rounds (a few minutes) leave memory. */
const IDLE_ROUNDS = 60;

/**
 * Maintains the `series` table from the response rows the worker inserts. add() is called once per
 * response inside the batch transaction; write() stores the changed buckets (call it inside a
 * transaction too). Buckets still filling are kept in memory between writes.
 */
export class SeriesAggregator {
  /** slot id (> 0) → series; −crawl id → the crawl's whole-crawl series. */
  private readonly series = new Map<number, Series>();
  private dirty: BucketAcc[] = [];
  /**
   * Slots whose row the writer has just created (noneStored): their first series skips the
   * `max(bucket)` look-ups of its five levels (1,000 new slots: 5,000 queries). Cleared by reset().
   */
  private readonly fresh = new Set<number>();
  /** Series whose current second has responses not yet folded into the coarser levels. */
  private unfolded: Series[] = [];
  /** Highest response id added since the last write (0: none). */
  private addedUpTo = 0;
  private round = 0;
  private lastWrite = 0;
  private readonly put: Statement;
  private readonly get: Statement;
  private readonly maxBucket: Statement;
  private readonly readCovered: Statement;
  private readonly setCovered: Statement;

  constructor(private readonly db: Database) {
    this.put = db.prepare(
      `INSERT OR REPLACE INTO series (${SERIES_COLUMNS.join(', ')}) VALUES (${SERIES_COLUMNS.map(() => '?').join(', ')})`,
    );
    this.get = db
      .prepare(`SELECT ${SERIES_COLUMNS.join(', ')} FROM series WHERE crawl_id = ? AND res_ms = ? AND slot_id = ? AND bucket = ?`)
      .raw();
    this.maxBucket = db.prepare(`SELECT max(bucket) FROM series WHERE crawl_id = ? AND res_ms = ? AND slot_id = ?`).pluck();
    this.readCovered = db.prepare(`SELECT covered_id FROM series_state WHERE id = 1`).pluck();
    this.setCovered = db.prepare(`UPDATE series_state SET covered_id = ? WHERE id = 1`);
  }

  /** Whether buckets changed since the last write. */
  get pending(): boolean {
    return this.dirty.length > 0 || this.addedUpTo > 0;
  }

  /** The slot row `slotId` was just created (in the current transaction): no bucket of it is stored. */
  noneStored(slotId: number): void {
    this.fresh.add(slotId);
  }

  /** The response rows up to id `responseId` are in the buckets (their add() calls are done). */
  coverUpTo(responseId: number): void {
    if (responseId > this.addedUpTo) this.addedUpTo = responseId;
  }

  /** One response row (its id goes to coverUpTo: a batch's rows are inserted together, their ids known after). */
  add(
    crawlId: number, slotId: number, t: number, status: number | null, latency: number | null,
    failed: boolean, delay: number, bytes: number, inFlight: number,
  ): void {
    const bin = latency === null ? -1 : latencyBin(latency);
    const sev = severity(status, failed);
    this.addTo(this.seriesOf(slotId, crawlId, slotId), t, status, latency, bin, failed, sev, delay, bytes, inFlight);
    this.addTo(this.seriesOf(-crawlId, crawlId, 0), t, status, latency, bin, failed, sev, delay, bytes, inFlight);
  }

  /** Writes the changed buckets when AGGREGATE_WRITE_MS passed since the last write (inside a transaction). */
  maybeWrite(now: number = Date.now()): void {
    if (this.pending && now - this.lastWrite >= AGGREGATE_WRITE_MS) this.write(now);
  }

  /** Writes every changed bucket and the covered response id (inside a transaction). */
  write(now: number = Date.now()): void {
    this.lastWrite = now;
    const round = ++this.round;
    for (const s of this.unfolded) this.fold(s);
    this.unfolded = [];
    for (const a of this.dirty) {
      this.put.run(...a.row());
      a.dirty = false;
    }
    this.dirty = [];
    if (this.addedUpTo > 0) {
      const covered = this.readCovered.get() as number;
      if (this.addedUpTo > covered) this.setCovered.run(this.addedUpTo);
      this.addedUpTo = 0;
    }
    // Keep only the newest bucket of each level in memory; forget series idle for a while.
    for (const [key, s] of this.series) {
      if (round - s.touched > IDLE_ROUNDS) {
        this.series.delete(key);
        continue;
      }
      for (const l of s.levels) {
        if (l.open.length > 1) l.open = [l.open[l.open.length - 1]];
      }
    }
  }

  /** Forgets everything in memory (after a rolled-back transaction, or a deleted crawl). */
  reset(): void {
    this.series.clear();
    this.fresh.clear();
    this.dirty = [];
    this.unfolded = [];
    this.addedUpTo = 0;
  }

  /**
   * A database aggregated before every level of LEVELS existed (an early build of schema 3) gets
   * its buckets rebuilt from the raw rows by the next catchUp. Returns whether it did.
   */
  rebuildIfLevelsMissing(): boolean {
    const has = this.db.prepare(`SELECT 1 FROM series WHERE res_ms = ? LIMIT 1`).pluck();
    if (has.get(LEVELS[0]) === undefined || LEVELS.every((res) => has.get(res) !== undefined)) return false;
    this.db.transaction(() => {
      this.db.exec(`DELETE FROM series`);
      this.setCovered.run(0);
    }).immediate();
    this.reset();
    return true;
  }

  /**
   * Aggregates the response rows above `series_state.covered_id` (rows a crash kept from being
   * aggregated, or every row after the migration that added this table), in transactions of
   * `chunk` rows. Returns the number of rows aggregated. Run it with nothing pending.
   */
  catchUp(chunk = 50_000): number {
    this.reset();
    const rows = this.db
      .prepare(
        `SELECT id, crawl_id, slot_id, t, status, latency, error_kind IS NOT NULL, delay_after, bytes, in_flight
         FROM responses WHERE id > ? ORDER BY id LIMIT ?`,
      )
      .raw();
    let total = 0;
    for (;;) {
      const covered = this.readCovered.get() as number;
      const n = this.db.transaction(() => {
        // all(), not iterate(): the loads and writes below need the connection.
        const batch = rows.all(covered, chunk) as unknown[][];
        for (const r of batch) {
          this.add(
            r[1] as number, r[2] as number, r[3] as number, r[4] as number | null, r[5] as number | null,
            r[6] === 1, r[7] as number, r[8] as number, r[9] as number,
          );
          this.coverUpTo(r[0] as number);
        }
        if (batch.length > 0) this.write();
        return batch.length;
      }).immediate();
      total += n;
      if (n < chunk) break;
    }
    return total;
  }

  /** After rows were deleted: the covered id may not exceed the highest remaining row (ids get reused). */
  clampCovered(): void {
    const max = (this.db.prepare(`SELECT coalesce(max(id), 0) FROM responses`).pluck().get() as number);
    const covered = this.readCovered.get() as number;
    if (covered > max) this.setCovered.run(max);
  }

  private seriesOf(key: number, crawlId: number, slotId: number): Series {
    let s = this.series.get(key);
    if (s === undefined) {
      // NaN: look the level's stored buckets up when first needed; -Infinity: none are stored.
      const maxStored = slotId > 0 && this.fresh.delete(slotId) ? -Infinity : NaN;
      s = {
        crawlId,
        slotId,
        levels: LEVELS.map((res) => ({ res, maxStored, open: [] })),
        current: null,
        unfolded: false,
        touched: this.round,
      };
      this.series.set(key, s);
    } else s.touched = this.round;
    return s;
  }

  private addTo(
    s: Series, t: number, status: number | null, latency: number | null, bin: number, failed: boolean, sev: number, delay: number,
    bytes: number, inFlight: number,
  ): void {
    const second = Math.floor(t / 1000) * 1000;
    let cur = s.current;
    if (cur === null || cur.bucket !== second) {
      if (cur !== null && second < cur.bucket) {
        // A late response for an earlier second: straight into every level.
        for (const l of s.levels) this.touch(this.bucketOf(s, l, Math.floor(t / l.res) * l.res)).add(t, status, latency, bin, failed, sev, delay, bytes, inFlight);
        return;
      }
      if (cur !== null && s.unfolded) this.fold(s);
      cur = this.bucketOf(s, s.levels[0], second);
      // What a stored second already holds is in its stored coarser buckets.
      cur.folded = cur.requests > 0 ? cur.mark() : null;
      s.current = cur;
    }
    if (!s.unfolded) {
      s.unfolded = true;
      this.unfolded.push(s);
    }
    this.touch(cur).add(t, status, latency, bin, failed, sev, delay, bytes, inFlight);
  }

  /** Adds what the current second gained since its last fold to the coarser buckets holding it. */
  private fold(s: Series): void {
    const cur = s.current;
    if (cur === null || !s.unfolded) return;
    for (let i = 1; i < s.levels.length; i++) {
      const l = s.levels[i];
      this.touch(this.bucketOf(s, l, Math.floor(cur.bucket / l.res) * l.res)).addDelta(cur, cur.folded);
    }
    cur.folded = cur.mark();
    s.unfolded = false;
  }

  /** Marks a bucket to be written. */
  private touch(a: BucketAcc): BucketAcc {
    if (!a.dirty) {
      a.dirty = true;
      this.dirty.push(a);
    }
    return a;
  }

  /** The bucket of a level in memory, loaded or created when it is not. */
  private bucketOf(s: Series, l: LevelState, bucket: number): BucketAcc {
    const open = l.open;
    for (let i = open.length - 1; i >= 0; i--) if (open[i].bucket === bucket) return open[i];
    const a = this.load(s, l, bucket);
    // Keep `open` ordered by bucket so the newest is last.
    let i = open.length;
    while (i > 0 && open[i - 1].bucket > bucket) i--;
    open.splice(i, 0, a);
    return a;
  }

  /** The stored bucket to go on filling, or a new one. */
  private load(s: Series, l: LevelState, bucket: number): BucketAcc {
    if (Number.isNaN(l.maxStored)) l.maxStored = (this.maxBucket.get(s.crawlId, l.res, s.slotId) as number | null) ?? -Infinity;
    if (bucket <= l.maxStored) {
      const row = this.get.get(s.crawlId, l.res, s.slotId, bucket) as unknown[] | undefined;
      if (row !== undefined) return BucketAcc.fromRow(row);
    } else l.maxStored = bucket;
    return new BucketAcc(s.crawlId, s.slotId, l.res, bucket);
  }
}

// --------------------------------------------------------------------------------------------
// SQL functions of the read side.

/**
 * Registers on a (read) connection:
 * - `slotscope_p95(latency_hist, latency_min, latency_max)`: aggregate, the p95 of merged buckets;
 * - `slotscope_last(t, value)`: aggregate, the value with the largest t (the first of equal ones).
 */
export function registerSeriesFunctions(db: Database): void {
  type P95State = { counts: Float64Array; n: number; min: number; max: number };
  db.aggregate('slotscope_p95', {
    start: (): P95State => ({ counts: new Float64Array(HIST_BINS), n: 0, min: Infinity, max: -Infinity }),
    step: ((s: P95State, blob: Uint8Array | null, min: number | null, max: number | null) => {
      s.n += addEncodedHist(s.counts, blob);
      if (min !== null && min < s.min) s.min = min;
      if (max !== null && max > s.max) s.max = max;
    }) as never,
    result: (s: P95State) => histQuantile(s.counts, s.n, 0.95, s.min, s.max),
    deterministic: true,
  });
  type LastState = { t: number; v: unknown };
  db.aggregate('slotscope_last', {
    start: (): LastState => ({ t: -Infinity, v: null }),
    step: ((s: LastState, t: number, v: unknown) => {
      if (t > s.t) {
        s.t = t;
        s.v = v;
      }
    }) as never,
    result: (s: LastState) => s.v as number,
    deterministic: true,
  });
}
