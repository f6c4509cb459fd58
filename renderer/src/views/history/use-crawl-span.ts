// When a crawl ran, read from the crawls store with a narrow selector: start, end (null while it
// runs) and whether it is live, so history views know which range "all" and "last 5 min" mean.

import { useCallback } from 'react';
import type { CrawlsStore } from '../../store/crawls-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import type { CrawlSpan } from './history-source';

const sameSpan = (a: CrawlSpan, b: CrawlSpan) => a.start === b.start && a.end === b.end && a.live === b.live;

export function useCrawlSpan(crawlId: number): CrawlSpan {
  const { stores } = useApp();
  return useStore(
    stores.crawls,
    useCallback((s: CrawlsStore) => {
      const c = s.crawl(crawlId);
      const st = s.statsOf(crawlId);
      const status = st?.status ?? c?.status;
      const live = status === 'running' || status === 'paused';
      const start = st?.startedAt ?? c?.startedAt ?? null;
      const end = live ? null : (st?.finishedAt ?? c?.finishedAt ?? null);
      return { start, end, live };
    }, [crawlId]),
    sameSpan,
  );
}
