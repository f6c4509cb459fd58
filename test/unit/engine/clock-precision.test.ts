// The real clock's timers on the wire's scale (issue 17, "timing on the wire"): Node counts a timer
// in whole milliseconds from the loop's cached time, so a timer may fire a fraction of a millisecond
// before its time. The clock must then wait out that fraction in turns of the event loop, not arm
// another timer (which fires a millisecond or more later and makes every such gap late).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRealClock } from '../../../electron/core/clock';

const realSetImmediate = globalThis.setImmediate;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('real clock timer that Node fires early', () => {
  it('fires at its time without arming another timer', async () => {
    // Node's early firing, made certain: every setTimeout the clock arms runs on the next turn.
    const arms: number[] = [];
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      arms.push(Number(ms));
      return realSetImmediate(fn) as unknown as NodeJS.Timeout;
    }) as typeof setTimeout);
    vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((h: NodeJS.Immediate) => clearImmediate(h)) as unknown as typeof clearTimeout);
    const clock = createRealClock();
    const at = clock.now() + 0.8;
    const fired: number[] = [];
    clock.setTimer(at, () => fired.push(clock.now()));
    const deadline = performance.now() + 200;
    while (fired.length === 0 && performance.now() < deadline) await new Promise((r) => realSetImmediate(r));
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeGreaterThanOrEqual(at);
    // Only the first arm: the early fraction was waited out in loop turns.
    expect(arms).toEqual([1]);
  });

  it('cancel stops a timer that is waiting out its last fraction', async () => {
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void) => realSetImmediate(fn) as unknown as NodeJS.Timeout) as typeof setTimeout);
    vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((h: NodeJS.Immediate) => clearImmediate(h)) as unknown as typeof clearTimeout);
    const clock = createRealClock();
    let fired = 0;
    const t = clock.setTimer(clock.now() + 0.9, () => fired++);
    await new Promise((r) => realSetImmediate(r));
    t.cancel();
    const until = performance.now() + 5;
    while (performance.now() < until) await new Promise((r) => realSetImmediate(r));
    expect(fired).toBe(0);
  });
});
