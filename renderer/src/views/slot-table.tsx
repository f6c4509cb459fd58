// The live slot table of one crawl: per slot what it does, why it waits, how it answers, and a
// pause/resume action; each row reads its own tuple from the store, so only changed rows re-render.

import { memo, useCallback, useState } from 'react';
import type { SlotTuple } from '../../../shared/contract';
import type { CrawlStatus } from '../../../shared/types';
import { Badge } from '../components/badge';
import { CommandButton } from '../components/command-button';
import type { CrawlsStore } from '../store/crawls-store';
import { cell, type SlotColumn, type SlotSort, type SlotTableStore } from '../store/slot-table-store';
import { sameItems, useStore } from '../store/use-store';
import { useApp } from './app-context';
import { CAUSE_WORDS, DASH, formatCount, formatDelay, formatLatencyMs, formatStartIn } from './format';
import { SLOT_STATE_TONE } from './tones';

interface Column {
  readonly id: string;
  readonly label: string;
  /** What a click on the header sorts by; none for the action column. */
  readonly sort?: SlotColumn;
  /** First direction of a click: counts and delays start with the largest. */
  readonly first?: 'asc' | 'desc';
  readonly align: 'left' | 'num';
  readonly title?: string;
}

const COLUMNS: readonly Column[] = [
  { id: 'key', label: 'Slot', sort: 'key', first: 'asc', align: 'left', title: 'The download slot: a host, or a throttling scope' },
  { id: 'state', label: 'State', sort: 'state', first: 'asc', align: 'left' },
  { id: 'inflight', label: 'In flight', sort: 'inFlight', align: 'num', title: 'Requests in flight / concurrency allowed' },
  { id: 'delay', label: 'Delay', sort: 'delay', align: 'left', title: 'Effective delay between request starts, and what sets it' },
  { id: 'next', label: 'Next start', sort: 'nextStartInMs', first: 'asc', align: 'num', title: 'Time until the next queued request may start' },
  { id: 'latency', label: 'Latency ms', sort: 'avgLatency', align: 'num', title: 'Last / average response latency, milliseconds' },
  { id: 'requests', label: 'Requests', sort: 'requests', align: 'num' },
  { id: 's2xx', label: '2xx', sort: 's2xx', align: 'num' },
  { id: 's3xx', label: '3xx', sort: 's3xx', align: 'num' },
  { id: 's4xx', label: '4xx', sort: 's4xx', align: 'num', title: '4xx responses, 429 included' },
  { id: 's5xx', label: '5xx', sort: 's5xx', align: 'num' },
  { id: 's429', label: '429', sort: 's429', align: 'num', title: 'Too Many Requests' },
  { id: 'backoff', label: 'Backoff', sort: 'backoffLevel', align: 'num', title: 'Backoff level (0: none)' },
  { id: 'queued', label: 'Queued', sort: 'queued', align: 'num' },
  { id: 'action', label: '', align: 'left' },
];

const DEFAULT_SORT: SlotSort = { column: 'key', direction: 'asc' };
const LIVE: ReadonlySet<CrawlStatus> = new Set(['running', 'paused']);

export function SlotTable({ table, crawlId }: { table: SlotTableStore; crawlId: number }) {
  const { stores } = useApp();
  const [sort, setSort] = useState<SlotSort>(DEFAULT_SORT);
  const keys = useStore(table, useCallback((t: SlotTableStore) => t.sortedKeys(sort), [sort]), sameItems);
  const hasData = useStore(table, hasRows);
  const status = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.crawl(crawlId)?.status, [crawlId]));
  const live = status !== undefined && LIVE.has(status);

  const onSort = (c: Column) => {
    if (!c.sort) return;
    const column = c.sort;
    setSort((s) => (s.column === column ? { column, direction: s.direction === 'asc' ? 'desc' : 'asc' } : { column, direction: c.first ?? 'desc' }));
  };

  if (!hasData) {
    return (
      <div className="empty slot-empty" data-testid="slot-empty">
        {status === 'created'
          ? 'Press Start: each host gets a row here as soon as the crawl reaches it.'
          : live
            ? 'Waiting for the first slot rows…'
            : `This crawl is ${status ?? 'unknown'}. Slot rows are live figures of a running crawl.`}
      </div>
    );
  }

  return (
    <div className="slot-table-wrap">
      <div className="slot-table-caption">
        <h3>Slots</h3>
        <span className="muted">
          {keys.length} {keys.length === 1 ? 'slot' : 'slots'}
          {live ? '' : ' · final figures'}
        </span>
      </div>
      <div className="table-scroll">
        <table className="grid slot-table" data-testid="slot-table">
          <thead>
            <tr>
              {COLUMNS.map((c) => {
                const active = c.sort !== undefined && c.sort === sort.column;
                return (
                  <th
                    key={c.id}
                    className={`${c.align} col-${c.id}`}
                    title={c.title}
                    aria-sort={active ? (sort.direction === 'asc' ? 'ascending' : 'descending') : undefined}
                  >
                    {c.sort ? (
                      <button type="button" className={`sort${active ? ' active' : ''}`} onClick={() => onSort(c)} data-sort={c.id}>
                        {c.label}
                        {active && (
                          <span className="sort-arrow" aria-hidden="true">
                            {sort.direction === 'asc' ? '▲' : '▼'}
                          </span>
                        )}
                      </button>
                    ) : (
                      <span className="visually-hidden">Actions</span>
                    )}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <SlotRow key={k} table={table} slotKey={k} crawlId={crawlId} live={live} />
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

const hasRows = (t: SlotTableStore) => t.hasData();

const SlotRow = memo(function SlotRow({ table, slotKey, crawlId, live }: { table: SlotTableStore; slotKey: string; crawlId: number; live: boolean }) {
  const row = useStore(table, useCallback((t: SlotTableStore) => t.row(slotKey), [slotKey]));
  if (!row) return null;
  return <SlotCells row={row} crawlId={crawlId} live={live} />;
});

function SlotCells({ row, crawlId, live }: { row: SlotTuple; crawlId: number; live: boolean }) {
  const { commands } = useApp();
  const key = cell(row, 'key');
  const state = cell(row, 'state');
  const cause = cell(row, 'cause');
  const delay = cell(row, 'delay');
  const pinned = cell(row, 'pinDelay') !== null || cell(row, 'pinConcurrency') !== null;
  const paused = state === 'paused';
  const s429 = cell(row, 's429');
  const s5xx = cell(row, 's5xx');
  const backoff = cell(row, 'backoffLevel');
  const target = cell(row, 'target');
  return (
    <tr data-slot={key} data-state={state}>
      <td className="left slot-key" title={key}>
        {key}
        {pinned && <span className="pin" title="Delay or concurrency pinned by hand"> pinned</span>}
      </td>
      <td className="left" data-col="state">
        <Badge tone={SLOT_STATE_TONE[state]}>{state}</Badge>
      </td>
      <td className="num" data-col="inflight" title={target === null ? undefined : `AutoThrottle target concurrency ${target}`}>
        {cell(row, 'inFlight')} / {cell(row, 'concurrency')}
      </td>
      <td className={`left delay cause-${cause}`} data-col="delay" title={`${delay.toFixed(3)} s, set by ${CAUSE_WORDS[cause]}`}>
        {formatDelay(delay, cause, state)}
      </td>
      <td className="num" data-col="next">
        {paused ? DASH : formatStartIn(cell(row, 'nextStartInMs'))}
      </td>
      <td className="num" data-col="latency">
        {formatLatencyMs(cell(row, 'lastLatency'))} <span className="muted">/ {formatLatencyMs(cell(row, 'avgLatency'))}</span>
      </td>
      <td className="num strong" data-col="requests">
        {formatCount(cell(row, 'requests'))}
      </td>
      <td className="num" data-col="s2xx">
        {formatCount(cell(row, 's2xx'))}
      </td>
      <td className="num" data-col="s3xx">
        {formatCount(cell(row, 's3xx'))}
      </td>
      <td className="num" data-col="s4xx">
        {formatCount(cell(row, 's4xx'))}
      </td>
      <td className={`num${s5xx > 0 ? ' bad-text' : ''}`} data-col="s5xx">
        {formatCount(s5xx)}
      </td>
      <td className={`num${s429 > 0 ? ' warn-text' : ''}`} data-col="s429">
        {formatCount(s429)}
      </td>
      <td className={`num${backoff > 0 ? ' warn-text' : ''}`} data-col="backoff">
        {backoff}
      </td>
      <td className="num" data-col="queued">
        {formatCount(cell(row, 'queued'))}
      </td>
      <td className="left action">
        <CommandButton
          variant="small"
          disabled={!live}
          label={`${paused ? 'Resume' : 'Pause'} slot ${key}`}
          onRun={() => commands.slot(paused ? 'resume' : 'pause', crawlId, key)}
        >
          {paused ? 'Resume' : 'Pause'}
        </CommandButton>
      </td>
    </tr>
  );
}
