// Window pacing (issue 17): at most `n` starts in any `spanMs`, from a ring of the scope's own start
// times. A gap alone lets timer lateness and jitter pile up; the window keeps the count right.
//
// Rampup and the RateLimit-header pacing both say "this many per this long": the gap spreads the
// starts (no bursts), this window makes sure no window of the server's length ever holds more.

/** Largest ring kept per scope (a scope paced by a bigger window is paced by a scaled one). */
export const MAX_RING = 65_536;
/** How far back a start is looked for when its send time comes. */
const SENT_SCAN = 256;

/** A ring of start times (epoch ms), grown on demand up to MAX_RING. */
export class StartRing {
  private buf = new Float64Array(64).fill(-Infinity);
  /** Index of the next write. */
  private head = 0;
  /** Starts recorded in all (for the caller's counts). */
  count = 0;

  get capacity(): number {
    return this.buf.length;
  }

  /** Makes room for at least `n` starts (up to MAX_RING). */
  reserve(n: number): void {
    const want = Math.min(MAX_RING, n);
    if (want <= this.buf.length) return;
    let size = this.buf.length;
    while (size < want) size *= 2;
    const next = new Float64Array(Math.min(size, MAX_RING)).fill(-Infinity);
    // Oldest first into the new buffer.
    const old = this.buf;
    for (let i = 0; i < old.length; i++) next[i] = old[(this.head + i) % old.length];
    this.head = old.length % next.length;
    this.buf = next;
  }

  push(t: number): void {
    this.buf[this.head] = t;
    this.head = (this.head + 1) % this.buf.length;
    this.count++;
  }

  /**
   * A start recorded at `begin` went onto the wire at `t` (later): the window counts from when the
   * server can see it. Looked for among the latest SENT_SCAN starts; the ring stays in order.
   */
  replace(begin: number, t: number): void {
    const len = this.buf.length;
    const scan = Math.min(SENT_SCAN, len, this.count);
    for (let k = 1; k <= scan; k++) {
      let i = (this.head - k + len * 2) % len;
      if (this.buf[i] !== begin) continue;
      this.buf[i] = t;
      // Keep newest-last order: move it past the starts that began before it but are now older.
      for (let j = k - 1; j >= 1; j--) {
        const newer = (this.head - j + len * 2) % len;
        if (this.buf[newer] >= this.buf[i]) break;
        const x = this.buf[newer];
        this.buf[newer] = this.buf[i];
        this.buf[i] = x;
        i = newer;
      }
      return;
    }
  }

  /** The k-th most recent start (k = 1: the latest); −∞ when there is none. */
  nth(k: number): number {
    if (k < 1 || k > this.buf.length) return -Infinity;
    return this.buf[(this.head - k + this.buf.length * 2) % this.buf.length];
  }

  /** Starts in [from, to). */
  countIn(from: number, to: number): number {
    let n = 0;
    for (let k = 1; k <= this.buf.length; k++) {
      const t = this.nth(k);
      if (t < from) break;
      if (t < to) n++;
    }
    return n;
  }

  /** Whether the ring still holds every start since `t` (its oldest entry is before `t`, or it never filled). */
  covers(t: number): boolean {
    return this.count < this.buf.length || this.nth(this.buf.length) < t;
  }

  /**
   * Earliest time (epoch ms) the next start keeps at most `n` starts in any `spanMs`: the n-th most
   * recent start plus the span (−∞ while fewer than n started). A window larger than the ring is
   * paced as the ring's share of it.
   */
  windowReadyAt(n: number, spanMs: number): number {
    if (n < 1) return -Infinity;
    if (n > this.buf.length) {
      spanMs = (spanMs * this.buf.length) / n;
      n = this.buf.length;
    }
    return this.nth(n) + spanMs;
  }
}
