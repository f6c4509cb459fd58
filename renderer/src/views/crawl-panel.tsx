// The selected crawl: its header (status, commands, live figures) over one of three views: the
// live slot table, its settings with their changes, or its warnings. Opening a crawl fetches once.

import { useEffect, useState } from 'react';
import type { CrawlLogStore } from '../store/crawl-log-store';
import { useStore } from '../store/use-store';
import { useCrawlShortcuts } from '../keyboard';
import { useApp } from './app-context';
import { CrawlHeader } from './crawl-header';
import { CompareTab } from './history/compare-tab';
import { HistoryTab } from './history/history-tab';
import { LogView } from './log/log-view';
import { OverviewTab } from './overview/overview-tab';
import { SettingsPanel } from './settings-panel';
import { SlotTable } from './slot-table';
import { WarningsPanel } from './warnings-panel';

type Tab = 'slots' | 'overview' | 'history' | 'compare' | 'log' | 'settings' | 'warnings';
const warningCount = (s: CrawlLogStore) => s.warnings().length;

export function CrawlPanel({ crawlId, onOpenCrawl }: { crawlId: number; onOpenCrawl?: (crawlId: number) => void }) {
  const app = useApp();
  const { stores, commands } = app;
  const [tab, setTab] = useState<Tab>('slots');
  // The slot the History tab shows (set by the slot table's "Open history"), kept across tab switches.
  const [historySlot, setHistorySlot] = useState<string | null>(null);
  const openHistory = (slot: string) => {
    setHistorySlot(slot);
    setTab('history');
  };
  // Space pauses/resumes this crawl; `/` brings up the slot table and focuses its filter.
  useCrawlShortcuts(app, crawlId, () => setTab('slots'));
  // Creating the (empty) table store is idempotent; fetching its rows is the effect's job.
  const table = stores.slotTables.open(crawlId).table;
  const warnings = useStore(stores.crawlLogs.get(crawlId), warningCount);
  useEffect(() => commands.openCrawl(crawlId), [commands, crawlId]);
  // The desktop menu's File › Export…: the Log tab holds the export buttons.
  useEffect(() => app.transport.subscribe('app.command', (p) => {
    if (p.command === 'export') setTab('log');
  }), [app.transport]);
  const tabButton = (id: Tab, label: string) => (
    <button type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls="crawl-tabpanel"
      className={`tab${tab === id ? ' active' : ''}`} onClick={() => setTab(id)}>
      {label}
    </button>
  );
  return (
    <section className="panel crawl-panel" aria-label="Selected crawl" data-testid="crawl-panel" data-crawl={crawlId}>
      <CrawlHeader crawlId={crawlId} onShowWarnings={() => setTab('warnings')} onOpenCrawl={onOpenCrawl} />
      <div className="tabs" role="tablist" aria-label="Crawl views">
        {tabButton('slots', 'Slots')}
        {tabButton('overview', 'Overview')}
        {tabButton('history', 'History')}
        {tabButton('compare', 'Compare')}
        {tabButton('log', 'Log')}
        {tabButton('settings', 'Settings')}
        {tabButton('warnings', warnings > 0 ? `Warnings (${warnings})` : 'Warnings')}
      </div>
      <div className="tab-body" id="crawl-tabpanel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'slots' && <SlotTable table={table} crawlId={crawlId} onOpenHistory={openHistory} />}
        {tab === 'overview' && <OverviewTab crawlId={crawlId} onOpenSlot={openHistory} />}
        {tab === 'history' && <HistoryTab crawlId={crawlId} slot={historySlot} onSlot={setHistorySlot} />}
        {tab === 'compare' && <CompareTab crawlId={crawlId} initial={historySlot ? [historySlot] : []} />}
        {tab === 'log' && <LogView crawlId={crawlId} />}
        {tab === 'settings' && <SettingsPanel crawlId={crawlId} />}
        {tab === 'warnings' && <WarningsPanel crawlId={crawlId} />}
      </div>
    </section>
  );
}
