// Time is injected (ARCHITECTURE convention 1): the engine reads time and sets timers only
// through a Clock, so tests and the replay tools can run hours of crawl on a virtual clock.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds (fractional), monotonic within a run. */
  now(): number;
  /** Calls `fn` once at (or just after) the absolute time `at`. */
  setTimer(at: number, fn: () => void): TimerHandle;
  /** Calls `fn` on the next turn of the event loop, after pending I/O callbacks. */
  defer(fn: () => void): void;
  /**
   * How long (ms) before a request's start time the scheduler may hand it to the downloader, which
   * then holds its write until that time (see HANDOVER_LEAD_MS); 0 or absent: handed over at its time.
   */
  readonly handoverLeadMs?: number;
}

/**
 * The real clock's handover lead. A timer fires up to a millisecond late and the HTTP client writes
 * a request on a reused connection one event-loop phase after it is handed over (undici checks an
 * idle socket first): handed over this much early, with its write held to the exact start time, a
 * request leaves on time instead of one to two milliseconds late. Costs at most this much busy
 * waiting per dispatch turn.
 */
export const HANDOVER_LEAD_MS = 1;

/** performance.timeOrigin, read once: it is fixed for the process, and its getter costs on every clock read. */
const TIME_ORIGIN = performance.timeOrigin;

/** The real clock's time, epoch ms: wall time anchored once (at process start), advanced by the monotonic performance clock. */
export const realNow = (): number => TIME_ORIGIN + performance.now();

/**
 * Longest wait setTimeout takes (2^31 - 1 ms, about 24.8 days): Node turns a longer one into
 * 1 ms, with a TimeoutOverflowWarning, so an overlong timer would fire, re-arm and spin.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Wall time anchored once, advanced by the monotonic performance clock. */
export function createRealClock(): Clock {
  const now = realNow;
  return {
    now,
    handoverLeadMs: HANDOVER_LEAD_MS,
    defer: (fn) => void setImmediate(fn),
    setTimer(at, fn) {
      let handle: NodeJS.Timeout | null = null;
      let turn: NodeJS.Immediate | null = null;
      const check = (): void => {
        handle = null;
        turn = null;
        const wait = at - now();
        if (!(wait > 0)) fn(); // a NaN time fires at once
        // Node counts a timer in whole milliseconds from the loop's cached time, so it may fire a
        // fraction of a millisecond early: that fraction is waited out in turns of the event loop
        // (I/O keeps running), not with another timer, which would fire a millisecond or more late.
        else if (wait < 1) turn = setImmediate(check);
        // A wait beyond MAX_TIMER_MS is armed in clamped pieces.
        else handle = setTimeout(check, Math.min(Math.ceil(wait), MAX_TIMER_MS));
      };
      const wait = at - now();
      handle = setTimeout(check, wait > 0 ? Math.min(Math.ceil(wait), MAX_TIMER_MS) : 0);
      return {
        cancel: () => {
          if (handle) clearTimeout(handle);
          if (turn) clearImmediate(turn);
          handle = null;
          turn = null;
        },
      };
    },
  };
}

interface VirtualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers run in time order, ties in the order they were set. */
export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: VirtualTimer[] = [];
  private deferred: (() => void)[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  defer(fn: () => void): void {
    this.deferred.push(fn);
  }

  /** Runs deferred calls (and those they defer) until none is left. */
  private drainDeferred(): void {
    while (this.deferred.length > 0) {
      const batch = this.deferred;
      this.deferred = [];
      for (const fn of batch) fn();
    }
  }

  setTimer(at: number, fn: () => void): TimerHandle {
    const timer: VirtualTimer = { at: Math.max(at, this.t), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Moves time forward to `to`, running every timer due on the way. */
  advanceTo(to: number): void {
    this.drainDeferred();
    for (;;) {
      this.timers = this.timers.filter((x) => !x.cancelled);
      let next: VirtualTimer | undefined;
      for (const x of this.timers) if (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq)) next = x;
      if (!next || next.at > to) break;
      this.t = next.at;
      next.cancelled = true;
      next.fn();
      this.drainDeferred();
    }
    this.t = Math.max(this.t, to);
  }

  /**
   * Like advanceTo, but lets promise callbacks and microtasks (the engine's coalesced dispatch)
   * run after each timer, as they would between two real timers.
   */
  async runTo(to: number): Promise<void> {
    await settle();
    this.drainDeferred();
    for (;;) {
      const at = this.nextTimerAt();
      if (at === undefined || at > to) break;
      this.advanceTo(at);
      await settle();
      this.drainDeferred();
    }
    this.t = Math.max(this.t, to);
  }

  /** Time of the next pending timer, if any. */
  nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const x of this.timers) if (!x.cancelled && (at === undefined || x.at < at)) at = x.at;
    return at;
  }
}

/** Resolves after pending microtasks and promise callbacks have run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
