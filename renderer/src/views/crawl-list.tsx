// The crawls in the history, newest first: one row each with its status and figures, a crawl's
// what-if replays listed under it; a click selects the crawl the rest of the window shows and steers.

import { useCallback, useEffect, useMemo, useRef } from 'react';
import type { CrawlInfo } from '../../../shared/contract';
import { Badge } from '../components/badge';
import { OFFLINE_TITLE, useHostOnline } from '../components/connection-notice';
import type { CrawlRates } from '../store/crawl-rates';
import type { CrawlsStore } from '../store/crawls-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { ImportLogButton } from './history/import-log';
import { DASH, formatCount, formatWhen } from './format';
import { CRAWL_STATUS_TONE } from './tones';

const list = (s: CrawlsStore) => s.list();
const loaded = (s: CrawlsStore) => s.isLoaded();

/** The crawls in the host's order, each what-if replay moved under the crawl it replays (oldest replay first). */
export function nestReplays(crawls: readonly CrawlInfo[]): readonly { readonly crawl: CrawlInfo; readonly nested: boolean }[] {
  const ids = new Set(crawls.map((c) => c.id));
  const children = new Map<number, CrawlInfo[]>();
  for (const c of crawls) {
    if (c.derivedFrom !== undefined && ids.has(c.derivedFrom)) children.set(c.derivedFrom, [...(children.get(c.derivedFrom) ?? []), c]);
  }
  const out: { crawl: CrawlInfo; nested: boolean }[] = [];
  for (const c of crawls) {
    if (c.derivedFrom !== undefined && ids.has(c.derivedFrom)) continue;
    out.push({ crawl: c, nested: false });
    for (const d of (children.get(c.id) ?? []).sort((a, b) => a.id - b.id)) out.push({ crawl: d, nested: true });
  }
  return out;
}

export function CrawlList({ selectedId, onSelect, onNew }: { selectedId: number | null; onSelect: (id: number) => void; onNew: () => void }) {
  const { stores } = useApp();
  const crawls = useStore(stores.crawls, list);
  const isLoaded = useStore(stores.crawls, loaded);
  const online = useHostOnline();
  const rows = useMemo(() => nestReplays(crawls), [crawls]);
  return (
    <section className="panel crawl-list" aria-labelledby="crawls-title">
      <div className="panel-head">
        <h2 id="crawls-title">Crawls</h2>
        <span className="panel-note">{isLoaded ? `${crawls.length} in the history` : 'loading…'}</span>
        <span className="panel-action">
          <ImportLogButton onImported={onSelect} />{' '}
          <button type="button" className="btn btn-small" onClick={onNew} disabled={!online} title={online ? undefined : OFFLINE_TITLE}>
            New crawl
          </button>
        </span>
      </div>
      {isLoaded && crawls.length === 0 ? (
        <p className="empty">No crawls yet.</p>
      ) : (
        <div className="table-scroll crawl-list-scroll">
          <table className="grid" data-testid="crawl-list">
            <thead>
              <tr>
                <th className="left">Name</th>
                <th className="left">Status</th>
                <th className="left">Started</th>
                <th className="num">Requests</th>
                <th className="num">Responses</th>
                <th className="num">Failures</th>
                <th className="num" title="Requests per second: over the last 10 s while a crawl runs, on average once it ended">Rate</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ crawl, nested }) => (
                <CrawlRow key={crawl.id} crawl={crawl} nested={nested} selected={crawl.id === selectedId} onSelect={onSelect} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Requests per second: the last 10 s of a live crawl, the whole run's average once it ended. */
function useRate(crawl: CrawlInfo): string {
  const { stores } = useApp();
  const live = useStore(stores.rates, useCallback((s: CrawlRates) => s.rate(crawl.id)?.requestsPerSecond, [crawl.id]));
  if (crawl.status === 'running' || crawl.status === 'paused') return live === undefined ? DASH : `${live.toFixed(1)}/s`;
  if (crawl.startedAt === null || crawl.finishedAt === null || crawl.finishedAt <= crawl.startedAt) return DASH;
  return `${(crawl.requests / ((crawl.finishedAt - crawl.startedAt) / 1000)).toFixed(1)}/s`;
}

function CrawlRow({ crawl, nested, selected, onSelect }: { crawl: CrawlInfo; nested: boolean; selected: boolean; onSelect: (id: number) => void }) {
  const rate = useRate(crawl);
  // The selected crawl is brought into view (a copy just made lands on top), below the sticky
  // header: the list's scroll-padding-top keeps the header from covering it, here and on focus.
  const ref = useRef<HTMLTableRowElement>(null);
  useEffect(() => {
    if (selected) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [selected]);
  return (
    <tr ref={ref} className={`${selected ? 'selected' : ''}${nested ? ' nested-row' : ''}`.trim() || undefined} aria-selected={selected} data-crawl={crawl.id}
      data-derived-from={crawl.derivedFrom} onClick={() => onSelect(crawl.id)}>
      <td className="left">
        {nested && <span className="nested-mark" aria-hidden="true">↳ </span>}
        <button type="button" className="link" onClick={() => onSelect(crawl.id)} title={nested ? `A what-if replay of crawl ${crawl.derivedFrom}` : undefined}>
          {crawl.name}
        </button>
        {crawl.source && <> <Badge tone="info" testId="crawl-source" title={`Run by a ${crawl.source} spider, streamed in by slotscope-scrapy`}>{crawl.source}</Badge></>}
        {crawl.shared && <> <Badge tone="info" testId="crawl-shared" title="A shared crawl: its frontier and slots live in Redis, fetched by every worker">shared</Badge></>}
      </td>
      <td className="left">
        <Badge tone={CRAWL_STATUS_TONE[crawl.status]}>{crawl.status}</Badge>
      </td>
      <td className="left muted">{formatWhen(crawl.startedAt)}</td>
      <td className="num" data-col="requests">{formatCount(crawl.requests)}</td>
      <td className="num" data-col="responses">{formatCount(crawl.responses)}</td>
      <td className={`num${crawl.failures > 0 ? ' bad-text' : ''}`} data-col="failures">
        {formatCount(crawl.failures)}
      </td>
      <td className="num muted" data-col="rate">{rate}</td>
    </tr>
  );
}
