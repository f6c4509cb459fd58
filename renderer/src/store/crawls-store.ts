// The crawl list and each crawl's latest live figures, fed by 'crawls.list', 'crawls.changed'
// and 'crawl.status' (and by the CrawlInfo that crawl commands answer with).

import type { CrawlInfo, CrawlStatsWire } from '../../../shared/contract';
import { FrameStore } from './frame-store';

export class CrawlsStore extends FrameStore {
  private crawls: readonly CrawlInfo[] = [];
  private readonly stats = new Map<number, CrawlStatsWire>();
  private loaded = false;

  /** Newest first, as the host lists them; a new array whenever anything in it changed. */
  list(): readonly CrawlInfo[] {
    return this.crawls;
  }

  /** False until the first list arrived. */
  isLoaded(): boolean {
    return this.loaded;
  }

  crawl(id: number): CrawlInfo | undefined {
    return this.crawls.find((c) => c.id === id);
  }

  /** The latest 'crawl.status' figures of a crawl (or its 'crawls.stats' answer), if any came. */
  statsOf(id: number): CrawlStatsWire | undefined {
    return this.stats.get(id);
  }

  setList(crawls: readonly CrawlInfo[]): void {
    // A running crawl's live figures can be newer than the listed ones: keep the larger counts.
    this.crawls = crawls.map((c) => {
      const s = this.stats.get(c.id);
      return s && s.status === c.status ? withStats(c, s) : c;
    });
    this.loaded = true;
    this.changed();
  }

  /** A crawl command's answer (start, pause…): the crawl as it is now. */
  applyInfo(info: CrawlInfo): void {
    const i = this.crawls.findIndex((c) => c.id === info.id);
    this.crawls = i < 0 ? [info, ...this.crawls] : this.crawls.map((c, j) => (j === i ? info : c));
    this.changed();
  }

  applyStats(crawlId: number, stats: CrawlStatsWire): void {
    this.stats.set(crawlId, stats);
    const i = this.crawls.findIndex((c) => c.id === crawlId);
    if (i >= 0) this.crawls = this.crawls.map((c, j) => (j === i ? withStats(c, stats) : c));
    this.changed();
  }
}

function withStats(c: CrawlInfo, s: CrawlStatsWire): CrawlInfo {
  return {
    ...c,
    status: s.status,
    startedAt: s.startedAt ?? c.startedAt,
    finishedAt: s.finishedAt ?? c.finishedAt,
    requests: Math.max(c.requests, s.requests),
    responses: Math.max(c.responses, s.responses),
    failures: Math.max(c.failures, s.failures),
    slots: Math.max(c.slots, s.slots),
  };
}
