// afterFrame, the page's "right after the next painted frame" queue: one job per frame while frames
// come, and everything at once when none come (a hidden tab), so 10 Hz slot updates never pile up.

import { afterEach, describe, expect, it, vi } from 'vitest';

type Raf = (cb: (t: number) => void) => number;
const g = globalThis as { requestAnimationFrame?: Raf };

afterEach(() => {
  delete g.requestAnimationFrame;
  vi.useRealTimers();
  vi.resetModules();
});

/** The renderer's module, fresh for each test (the renderer is a TypeScript project of its own, with DOM types). */
const MODULE = '../../../renderer/src/store/frame-store';
async function load(): Promise<(job: () => void) => void> {
  return ((await import(/* @vite-ignore */ MODULE)) as { afterFrame: (job: () => void) => void }).afterFrame;
}

describe('afterFrame', () => {
  it('runs one job after each frame, in order, jobs queued by jobs included', async () => {
    vi.useFakeTimers();
    const frames: ((t: number) => void)[] = [];
    g.requestAnimationFrame = (cb) => frames.push(cb);
    const afterFrame = await load();
    const ran: string[] = [];
    afterFrame(() => {
      ran.push('a');
      afterFrame(() => ran.push('c'));
    });
    afterFrame(() => ran.push('b'));
    expect(ran).toEqual([]);
    const frame = () => {
      frames.shift()!(0);
      vi.advanceTimersByTime(0);
    };
    frame();
    expect(ran).toEqual(['a']);
    frame();
    expect(ran).toEqual(['a', 'b']);
    frame();
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(frames).toHaveLength(0); // nothing left: no frame asked for
  });

  it('runs every waiting job after 250 ms when no frame comes (a hidden tab)', async () => {
    vi.useFakeTimers();
    g.requestAnimationFrame = () => 0; // frames never come
    const afterFrame = await load();
    const ran: number[] = [];
    for (let i = 0; i < 10; i++) afterFrame(() => ran.push(i));
    afterFrame(() => afterFrame(() => ran.push(99)));
    vi.advanceTimersByTime(249);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 99]);
  });

  it('keeps going after a job throws', async () => {
    const afterFrame = await load(); // no requestAnimationFrame at all: jobs run on a 0 ms timer
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const ran: string[] = [];
    await new Promise<void>((resolve) => {
      afterFrame(() => {
        throw new Error('boom');
      });
      afterFrame(() => {
        ran.push('after');
        resolve();
      });
    });
    expect(ran).toEqual(['after']);
    expect(errors).toHaveBeenCalledTimes(1);
    errors.mockRestore();
  });
});
