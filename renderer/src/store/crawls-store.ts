// The crawl list and each crawl's latest live figures, fed by 'crawls.list', 'crawls.changed'
// and 'crawl.status' (and by the CrawlInfo that crawl commands answer with).

import type { CrawlInfo, CrawlStatsWire } from '../../../shared/contract';
import { FrameStore } from './frame-store';

export class CrawlsStore extends FrameStore {
  private crawls: readonly CrawlInfo[] = [];
  private readonly stats = new Map<number, CrawlStatsWire>();
  /** When this page saw a crawl go from running to paused (epoch ms), while it stays paused. */
  private readonly pausedAt = new Map<number, number>();
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

  /** When the crawl was seen to pause (epoch ms), while it is paused; null when it is not, or paused before this page saw it run. */
  pausedSince(id: number): number | null {
    return this.pausedAt.get(id) ?? null;
  }

  /** Notes a crawl's status as it changes: the moment it pauses is kept (ELAPSED stops there). */
  private track(id: number, before: CrawlInfo['status'] | undefined, after: CrawlInfo['status']): void {
    if (after !== 'paused') this.pausedAt.delete(id);
    else if (before === 'running' && !this.pausedAt.has(id)) this.pausedAt.set(id, Date.now());
  }

  /** The latest 'crawl.status' figures of a crawl (or its 'crawls.stats' answer), if any came. */
  statsOf(id: number): CrawlStatsWire | undefined {
    return this.stats.get(id);
  }

  setList(crawls: readonly CrawlInfo[]): void {
    for (const c of crawls) this.track(c.id, this.crawl(c.id)?.status, c.status);
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
    this.track(info.id, this.crawl(info.id)?.status, info.status);
    const i = this.crawls.findIndex((c) => c.id === info.id);
    this.crawls = i < 0 ? [info, ...this.crawls] : this.crawls.map((c, j) => (j === i ? info : c));
    this.changed();
  }

  applyStats(crawlId: number, stats: CrawlStatsWire): void {
    this.track(crawlId, this.stats.get(crawlId)?.status ?? this.crawl(crawlId)?.status, stats.status);
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
