// The selected crawl: its header (status, commands, live figures) over its views in tabs (arrow keys
// move between them): slots, requests, charts, log, stats, settings, warnings. Opening a crawl fetches once.

import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { CrawlLogStore } from '../store/crawl-log-store';
import { useStore } from '../store/use-store';
import { useCrawlShortcuts } from '../keyboard';
import { useApp } from './app-context';
import { CrawlHeader } from './crawl-header';
import { CrawlView } from './crawl-view/crawl-view';
import { JournalView } from './journal/journal-view';
import { CompareTab } from './history/compare-tab';
import { HistoryTab } from './history/history-tab';
import { LogView } from './log/log-view';
import { OverviewTab } from './overview/overview-tab';
import { RequestsTab, type RequestsMode } from './requests/requests-tab';
import { SettingsPanel } from './settings-panel';
import { SlotTable } from './slot-table';
import { StatsTab } from './stats/stats-tab';
import { WarningsPanel } from './warnings-panel';
import { WorkersPanel } from './workers-panel';
import type { CrawlsStore } from '../store/crawls-store';
import type { WorkersStore } from '../store/workers-store';

type Tab = 'slots' | 'workers' | 'requests' | 'overview' | 'history' | 'compare' | 'log' | 'stats' | 'journal' | 'crawl' | 'settings' | 'warnings';
const warningCount = (s: CrawlLogStore) => s.warnings().length;

export function CrawlPanel({ crawlId, onOpenCrawl, onEditCopy }: {
  crawlId: number; onOpenCrawl?: (crawlId: number) => void;
  /** Opens the New crawl form filled from a crawl (Duplicate and edit). */
  onEditCopy?: (crawlId: number) => void;
}) {
  const app = useApp();
  const { stores, commands } = app;
  const [tab, setTab] = useState<Tab>('slots');
  // The slot the History tab shows (set by the slot table's "Open history"), kept across tab switches.
  const [historySlot, setHistorySlot] = useState<string | null>(null);
  // A moment to show in the History tab (a request's "Show in history"), with a sequence so the same moment can be asked twice.
  const [historyFocus, setHistoryFocus] = useState<{ readonly t: number; readonly seq: number } | null>(null);
  const openHistory = (slot: string, t?: number) => {
    setHistorySlot(slot);
    setHistoryFocus(t === undefined ? null : (f) => ({ t, seq: (f?.seq ?? 0) + 1 }));
    setTab('history');
  };
  // Where the Requests tab opens (a slot row's "Show queue").
  const [requestsAt, setRequestsAt] = useState<{ readonly slot?: string; readonly mode?: RequestsMode; readonly seq: number }>({ seq: 0 });
  const openRequests = (slot: string, mode: RequestsMode) => {
    setRequestsAt((r) => ({ slot, mode, seq: r.seq + 1 }));
    setTab('requests');
  };
  // Space pauses/resumes this crawl; `/` brings up the slot table and focuses its filter.
  useCrawlShortcuts(app, crawlId, () => setTab('slots'));
  // Creating the (empty) table store is idempotent; fetching its rows is the effect's job.
  const table = stores.slotTables.open(crawlId).table;
  const warnings = useStore(stores.crawlLogs.get(crawlId), warningCount);
  // A shared crawl (serve --redis) has a Workers tab: the processes that fetch it.
  const shared = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.crawl(crawlId)?.shared === true, [crawlId]));
  const live = useStore(stores.crawls, useCallback((s: CrawlsStore) => ['running', 'paused'].includes(s.crawl(crawlId)?.status ?? ''), [crawlId]));
  const alive = useStore(stores.workers, useCallback((s: WorkersStore) => {
    const of = s.of(crawlId);
    return of?.unavailable === undefined ? of?.workers.filter((w) => w.alive).length : undefined;
  }, [crawlId]));
  useEffect(() => commands.openCrawl(crawlId), [commands, crawlId]);
  // The desktop menu's File › Export…: the Log tab holds the export buttons.
  useEffect(() => app.transport.subscribe('app.command', (p) => {
    if (p.command === 'export') setTab('log');
  }), [app.transport]);
  const tabList = useRef<HTMLDivElement>(null);
  const tabButton = (id: Tab, label: string) => (
    <button type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls="crawl-tabpanel" tabIndex={tab === id ? 0 : -1}
      className={`tab${tab === id ? ' active' : ''}`} onClick={() => setTab(id)} data-tab={id}>
      {label}
    </button>
  );
  // The tab list is one stop for Tab; the arrow keys, Home and End move between the tabs (WAI-ARIA tabs pattern).
  const onTabKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const buttons = [...(tabList.current?.querySelectorAll<HTMLButtonElement>('[role="tab"]') ?? [])];
    const i = buttons.findIndex((b) => b.dataset.tab === tab);
    const next = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? buttons.length - 1 : null;
    if (next === null || buttons.length === 0) return;
    e.preventDefault();
    const b = buttons[(next + buttons.length) % buttons.length];
    setTab(b.dataset.tab as Tab);
    b.focus();
  };
  return (
    <section className="panel crawl-panel" aria-label="Selected crawl" data-testid="crawl-panel" data-crawl={crawlId}>
      <CrawlHeader crawlId={crawlId} onShowWarnings={() => setTab('warnings')} onOpenCrawl={onOpenCrawl} />
      <div className="tabs" role="tablist" aria-label="Crawl views" ref={tabList} onKeyDown={onTabKey}>
        {tabButton('slots', 'Slots')}
        {shared && tabButton('workers', alive === undefined ? 'Workers' : `Workers (${alive})`)}
        {tabButton('requests', 'Requests')}
        {tabButton('overview', 'Overview')}
        {tabButton('history', 'History')}
        {tabButton('compare', 'Compare')}
        {tabButton('log', 'Log')}
        {tabButton('stats', 'Stats')}
        {tabButton('journal', 'Journal')}
        {tabButton('crawl', 'Crawl')}
        {tabButton('settings', 'Settings')}
        {tabButton('warnings', warnings > 0 ? `Warnings (${warnings})` : 'Warnings')}
      </div>
      <div className="tab-body" id="crawl-tabpanel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'slots' && <SlotTable table={table} crawlId={crawlId} onOpenHistory={openHistory} onOpenRequests={openRequests} />}
        {tab === 'workers' && <WorkersPanel crawlId={crawlId} live={live} />}
        {tab === 'requests' && <RequestsTab key={requestsAt.seq} crawlId={crawlId} initial={requestsAt} onOpenHistory={openHistory} />}
        {tab === 'overview' && <OverviewTab crawlId={crawlId} onOpenSlot={openHistory} />}
        {tab === 'history' && <HistoryTab crawlId={crawlId} slot={historySlot} focus={historyFocus} onSlot={(s) => { setHistorySlot(s); setHistoryFocus(null); }} />}
        {tab === 'compare' && <CompareTab crawlId={crawlId} initial={historySlot ? [historySlot] : []} />}
        {tab === 'log' && <LogView crawlId={crawlId} />}
        {tab === 'stats' && <StatsTab crawlId={crawlId} />}
        {tab === 'journal' && <JournalView crawlId={crawlId} onOpenHistory={openHistory} />}
        {tab === 'crawl' && <CrawlView crawlId={crawlId} onEditCopy={(id) => onEditCopy?.(id)} />}
        {tab === 'settings' && <SettingsPanel crawlId={crawlId} />}
        {tab === 'warnings' && <WarningsPanel crawlId={crawlId} />}
      </div>
    </section>
  );
}
