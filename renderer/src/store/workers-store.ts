// The workers of each shared crawl (issue 18), as the host last listed them: fed by 'workers.update'
// (about once a second while the crawl runs) and by the 'crawls.workers' answer when the panel opens.

import type { WorkerWire } from '../../../shared/contract';
import { FrameStore } from './frame-store';

export interface WorkersOf {
  readonly workers: readonly WorkerWire[];
  /** The host's clock when they were read (epoch ms): "last seen" counts from it. */
  readonly now: number;
  /** Why the host cannot list them (a shared crawl it does not record now: another Redis, or none). */
  readonly unavailable?: string;
}

export class WorkersStore extends FrameStore {
  private readonly byCrawl = new Map<number, WorkersOf>();

  of(crawlId: number): WorkersOf | undefined {
    return this.byCrawl.get(crawlId);
  }

  set(crawlId: number, workers: readonly WorkerWire[], now: number): void {
    const prev = this.byCrawl.get(crawlId);
    // An answer read before the latest event does not replace it.
    if (prev && prev.now > now) return;
    this.byCrawl.set(crawlId, { workers, now });
    this.changed();
  }

  /** The host said why it cannot list this crawl's workers; a later list replaces it. */
  unavailable(crawlId: number, reason: string): void {
    if (this.byCrawl.has(crawlId) && !this.byCrawl.get(crawlId)!.unavailable) return;
    this.byCrawl.set(crawlId, { workers: [], now: 0, unavailable: reason });
    this.changed();
  }
}
