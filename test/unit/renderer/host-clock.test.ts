// The slot table's host clock: rows carry the time of a slot's next start on the host's clock,
// and the page counts down against that clock, carried forward by its own between updates.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SlotTuple } from '../../../shared/contract';

/** What these tests use of the renderer's module (the renderer is a TypeScript project of its own, with DOM types). */
interface HostClockLike {
  now(): number;
  sync(hostNow: number): void;
  subscribe(listener: () => void): () => void;
  getVersion(): number;
}
interface StoreModule {
  CLOCK_TICK_MS: number;
  HostClock: new (local?: () => number) => HostClockLike;
  SlotTableStore: new (crawlId: number, schedule?: (cb: () => void) => void, storage?: null) => {
    readonly clock: HostClockLike;
    replaceAll(rows: readonly SlotTuple[], hostNow?: number): void;
    apply(rows: readonly SlotTuple[], hostNow?: number): void;
    row(key: string): SlotTuple | undefined;
  };
}
const MODULE = '../../../renderer/src/store/slot-table-store';
const { CLOCK_TICK_MS, HostClock, SlotTableStore } = (await import(/* @vite-ignore */ MODULE)) as StoreModule;

afterEach(() => {
  vi.useRealTimers();
});

const row = (key: string, nextStartAt: number | null): SlotTuple =>
  [key, 'waiting', 0, 1, null, 1, 'floor', nextStartAt, null, null, 1, 1, 0, 0, 0, 0, 0, 0, 1, 100, null, null];

describe('HostClock', () => {
  it('is the host time last received, carried forward by the local clock', () => {
    let local = 5_000;
    const clock = new HostClock(() => local);
    expect(clock.now()).toBe(5_000); // nothing received: the local clock
    clock.sync(1_700_000_000_000);
    expect(clock.now()).toBe(1_700_000_000_000);
    local += 250;
    expect(clock.now()).toBe(1_700_000_000_250);
    clock.sync(1_700_000_000_200); // a later message says the host is 50 ms behind that
    expect(clock.now()).toBe(1_700_000_000_200);
    clock.sync(Number.NaN); // nonsense leaves it as it was
    expect(clock.now()).toBe(1_700_000_000_200);
  });

  it('ticks only while someone watches it, and stops its timer when the last one leaves', () => {
    vi.useFakeTimers();
    const clock = new HostClock(() => 0);
    expect(vi.getTimerCount()).toBe(0);
    const seen: number[] = [];
    const off = clock.subscribe(() => seen.push(clock.getVersion()));
    const off2 = clock.subscribe(() => {});
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(CLOCK_TICK_MS * 3 + 10);
    expect(seen).toEqual([1, 2, 3]);
    off();
    expect(vi.getTimerCount()).toBe(1);
    off2();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(CLOCK_TICK_MS * 3);
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe('SlotTableStore and the host clock', () => {
  it('takes the host time from snapshots and updates, not from a slot command\'s row', () => {
    const table = new SlotTableStore(1, (cb) => cb(), null);
    table.replaceAll([row('a.test', 2_000)], 1_000);
    expect(table.clock.now()).toBeGreaterThanOrEqual(1_000);
    expect(table.clock.now()).toBeLessThan(1_100);
    table.apply([row('a.test', 3_000)], 2_500);
    expect(table.clock.now()).toBeGreaterThanOrEqual(2_500);
    expect(table.clock.now()).toBeLessThan(2_600);
    table.apply([row('a.test', 4_000)]); // a command's answer: no host time with it
    expect(table.clock.now()).toBeGreaterThanOrEqual(2_500);
    expect(table.clock.now()).toBeLessThan(2_600);
    expect(table.row('a.test')?.[7]).toBe(4_000);
  });
});
