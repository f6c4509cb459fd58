// The selected crawl: its header (status, commands, live figures) over its live slot table.
// Opening a crawl fetches its slot snapshot and figures once; events keep them current after.

import { useEffect } from 'react';
import { useApp } from './app-context';
import { CrawlHeader } from './crawl-header';
import { SlotTable } from './slot-table';

export function CrawlPanel({ crawlId }: { crawlId: number }) {
  const { stores, commands } = useApp();
  // Creating the (empty) table store is idempotent; fetching its rows is the effect's job.
  const table = stores.slotTables.open(crawlId).table;
  useEffect(() => commands.openCrawl(crawlId), [commands, crawlId]);
  return (
    <section className="panel crawl-panel" aria-label="Selected crawl" data-testid="crawl-panel" data-crawl={crawlId}>
      <CrawlHeader crawlId={crawlId} />
      <SlotTable table={table} crawlId={crawlId} />
    </section>
  );
}
