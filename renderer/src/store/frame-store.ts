// The base of every live store (ARCHITECTURE convention 6): data is changed in place as events
// arrive, and subscribers hear about it at most once per animation frame, however many events came.

/** What `useStore` needs of a store: a version that moves when subscribers are notified. */
export interface ReadableStore {
  readonly subscribe: (listener: () => void) => () => void;
  readonly getVersion: () => number;
}

export type Scheduler = (callback: () => void) => void;

/** requestAnimationFrame where the page has frames; undefined in a worker or a Node test. */
const raf = (): ((cb: () => void) => unknown) | undefined =>
  (globalThis as { requestAnimationFrame?: (cb: () => void) => unknown }).requestAnimationFrame;

/** The next animation frame; a timer where there are no frames (a worker, a test). */
export const nextFrame: Scheduler = (callback) => {
  const frame = raf();
  if (frame) frame(() => callback());
  else setTimeout(callback, 16);
};

/** Jobs waiting for a frame to be painted; one runs after each frame. */
const postFrameJobs: (() => void)[] = [];
let postFrameArmed = false;

function armPostFrame(): void {
  if (postFrameArmed || postFrameJobs.length === 0) return;
  postFrameArmed = true;
  let done = false;
  const run = (framed: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(fallback);
    postFrameArmed = false;
    // After a frame: one job, the next after the next frame. No frame came (a hidden tab, or no
    // frames at all): every job now, those they queue included, so nothing piles up unseen.
    do {
      const job = postFrameJobs.shift()!;
      try {
        job();
      } catch (e) {
        console.error('slotscope: an after-frame job threw', e);
      }
    } while (!framed && postFrameJobs.length > 0);
    armPostFrame();
  };
  // No frame within 250 ms (a hidden tab): run anyway. Without frames at all (a test): at once.
  const frame = raf();
  const fallback = setTimeout(() => run(false), frame ? 250 : 0);
  if (frame) frame(() => setTimeout(() => run(true), 0));
}

/**
 * Runs `job` in a task of its own right after the next painted frame, one job per frame in the order
 * given. Heavy work that is not drawing (parsing a 10,000-row update, re-sorting the slot table)
 * goes here, into the idle end of a frame, so it does not push a frame past its vsync.
 */
export const afterFrame: Scheduler = (job) => {
  postFrameJobs.push(job);
  armPostFrame();
};

export class FrameStore implements ReadableStore {
  private version = 0;
  private scheduled = false;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly schedule: Scheduler = nextFrame) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  };

  readonly getVersion = (): number => this.version;

  /** Marks the store changed; subscribers run once, on the next frame. */
  protected changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      this.version++;
      for (const l of [...this.listeners]) {
        try {
          l();
        } catch (e) {
          console.error('slotscope: a store subscriber threw', e);
        }
      }
    });
  }
}
