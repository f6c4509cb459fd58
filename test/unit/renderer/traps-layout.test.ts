// Issue 16's layout rules as pure functions: the slot columns that give way by priority (the row
// actions never do), and long delays and countdowns written as durations, not thousands of seconds.
import { describe, expect, it } from 'vitest';

interface Column { readonly id: string; readonly minPx: number; readonly priority: number }
interface ColumnsModule {
  GRID_COLUMNS: readonly Column[];
  fitColumns(widthPx: number, columns?: readonly Column[]): readonly Column[];
  columnsWidth(columns: readonly Column[]): number;
}
interface FormatModule {
  formatStartIn(ms: number | null): string;
  formatDelayCell(seconds: number): string;
  formatSeconds(seconds: number): string;
}
const COLUMNS = '../../../renderer/src/views/slot-table/columns';
const FORMAT = '../../../renderer/src/views/format';
const { GRID_COLUMNS, fitColumns, columnsWidth } = (await import(/* @vite-ignore */ COLUMNS)) as ColumnsModule;
const { formatStartIn, formatDelayCell, formatSeconds } = (await import(/* @vite-ignore */ FORMAT)) as FormatModule;

const ids = (cols: readonly Column[]) => cols.map((c) => c.id);

describe('slot columns by priority', () => {
  it('shows every column when there is room, in their order', () => {
    expect(ids(fitColumns(5000))).toEqual(ids(GRID_COLUMNS));
  });

  it('at 1280 px (the grid ~1223 px wide with a scrollbar) only 3xx and bytes give way; the target stays', () => {
    const shown = fitColumns(1223);
    expect(ids(GRID_COLUMNS).filter((id) => !ids(shown).includes(id))).toEqual(['s3xx', 'bytes']);
    expect(columnsWidth(shown)).toBeLessThanOrEqual(1223);
  });

  it('at 1024 px the least needed go first and the row actions, delay, state and slot stay', () => {
    const shown = ids(fitColumns(967));
    for (const id of ['pin', 'key', 'state', 'delay', 'cause', 'next', 'requests', 's429', 'backoff', 'action']) expect(shown).toContain(id);
    for (const id of ['s3xx', 'bytes', 'target', 's2xx', 'queued']) expect(shown).not.toContain(id);
    expect(columnsWidth(fitColumns(967))).toBeLessThanOrEqual(967);
  });

  it('never drops a column of priority 0, however narrow', () => {
    expect(ids(fitColumns(100))).toEqual(GRID_COLUMNS.filter((c) => c.priority === 0).map((c) => c.id));
  });
});

describe('long delays as durations', () => {
  it('counts down in ms, then seconds, then minutes and hours', () => {
    expect(formatStartIn(null)).toBe('—');
    expect(formatStartIn(0)).toBe('now');
    expect(formatStartIn(350)).toBe('350 ms');
    expect(formatStartIn(12_340)).toBe('12.3 s');
    expect(formatStartIn(245_000)).toBe('4 min 05 s');
    expect(formatStartIn(100_147_600)).toBe('27 h 49 min');
  });

  it('writes a delay cell in seconds under a minute and as a duration after', () => {
    expect(formatDelayCell(0.5)).toBe('0.50');
    expect(formatDelayCell(59.994)).toBe('59.99');
    expect(formatDelayCell(80_000)).toBe('22 h 13 min');
    expect(formatSeconds(2)).toBe('2.00 s');
    expect(formatSeconds(100_000)).toBe('27 h 46 min');
  });
});
