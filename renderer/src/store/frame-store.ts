// The base of every live store (ARCHITECTURE convention 6): data is changed in place as events
// arrive, and subscribers hear about it at most once per animation frame, however many events came.

/** What `useStore` needs of a store: a version that moves when subscribers are notified. */
export interface ReadableStore {
  readonly subscribe: (listener: () => void) => () => void;
  readonly getVersion: () => number;
}

export type Scheduler = (callback: () => void) => void;

/** The next animation frame; a timer where there are no frames (a worker, a test). */
export const nextFrame: Scheduler = (callback) => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => callback());
  else setTimeout(callback, 16);
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
