// The window: header, message line, the crawl list and the selected crawl. Only the selection
// is React state here; everything live comes from the stores.

import { useCallback, useEffect, useState } from 'react';
import type { CrawlInfo } from '../../../shared/contract';
import { ConnectionNotice } from '../components/connection-notice';
import { MessageLine } from '../components/message-line';
import type { CrawlsStore } from '../store/crawls-store';
import { useStore } from '../store/use-store';
import { AppHeader } from './app-header';
import { useApp } from './app-context';
import { CrawlList } from './crawl-list';
import { CrawlPanel } from './crawl-panel';
import { NewCrawlForm } from './new-crawl-form';

/** What to show before the user picks: a running (or paused) crawl, else the newest. */
function defaultPick(crawls: readonly CrawlInfo[]): number | null {
  return (crawls.find((c) => c.status === 'running' || c.status === 'paused') ?? crawls[0])?.id ?? null;
}
const pickDefault = (s: CrawlsStore) => defaultPick(s.list());

export function App() {
  const { stores, transport } = useApp();
  const [selected, setSelected] = useState<number | null>(null);
  // The New crawl form, empty or filled from a crawl (its Duplicate and edit); null while a crawl is shown.
  const [creating, setCreating] = useState<{ readonly from?: number } | null>(null);
  const fallback = useStore(stores.crawls, pickDefault);
  const selectedExists = useStore(stores.crawls, useCallback((s: CrawlsStore) => selected !== null && s.crawl(selected) !== undefined, [selected]));
  const crawlId = selected !== null && selectedExists ? selected : fallback;

  // The desktop menu's File › New crawl (Electron only; the browser host never sends 'app.command').
  useEffect(() => transport.subscribe('app.command', (p) => {
    if (p.command === 'new-crawl') setCreating({});
  }), [transport]);

  // Pin the default once shown, so a crawl that starts elsewhere never pulls the view away.
  useEffect(() => {
    if (crawlId !== null && crawlId !== selected) setSelected(crawlId);
  }, [crawlId, selected]);

  return (
    <div className="app">
      <AppHeader />
      <MessageLine />
      <ConnectionNotice />
      <main className="content">
        <CrawlList selectedId={crawlId} onSelect={(id) => { setSelected(id); setCreating(null); }} onNew={() => setCreating({})} />
        {creating ? (
          <NewCrawlForm key={creating.from ?? 'new'} from={creating.from} onCancel={() => setCreating(null)} onOpen={(id) => { setSelected(id); setCreating(null); }} />
        ) : (
          crawlId !== null && <CrawlPanel key={crawlId} crawlId={crawlId} onOpenCrawl={setSelected} onEditCopy={(from) => setCreating({ from })} />
        )}
      </main>
    </div>
  );
}
