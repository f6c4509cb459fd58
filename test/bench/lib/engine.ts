// Runs the real engine the way `slotscope crawl` does (runCrawl: history recorded in SQLite
// through the worker thread) and returns its timings, for the benchmark scripts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCrawlConfig, type CrawlConfig } from '../../../electron/core/engine/crawl-config';
import type { Crawler, CrawlStats } from '../../../electron/core/engine/crawler';
import { runCrawl } from '../../../electron/core/crawl-runner';

/** Throughput settings of the issue: no delay, 64 in flight, nothing adaptive, no robots.txt. */
export const FLAT_OUT: Readonly<Record<string, unknown>> = {
  DOWNLOAD_DELAY: 0,
  CONCURRENT_REQUESTS: 64,
  CONCURRENT_REQUESTS_PER_DOMAIN: 64,
  AUTOTHROTTLE_ENABLED: false,
  ROBOTSTXT_OBEY: false,
};

export function makeConfig(seeds: readonly string[], settings: Readonly<Record<string, unknown>>, resolve: Readonly<Record<string, string>>): CrawlConfig {
  const r = parseCrawlConfig({ name: 'bench', seeds, follow: { scope: 'none' }, settings, resolve });
  if (!r.ok) throw new Error(`bench config refused: ${r.errors.map((e) => e.message).join('; ')}`);
  return r.config;
}

/** Epoch ms on the same scale as the engine's real clock (performance.timeOrigin + now()). */
export function clockNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface EngineRun {
  readonly stats: CrawlStats;
  /** runCrawl called (before the history worker is opened). */
  readonly calledAt: number;
  /** crawler.start() began (stats.startedAt). */
  readonly startedAt: number;
  /** Last response handled (stats.finishedAt). */
  readonly finishedAt: number;
  /** Every record committed to SQLite (the final flush answered), before the database closed. */
  readonly committedAt: number;
  /** runCrawl returned: everything flushed to SQLite and the worker closed. */
  readonly returnedAt: number;
  /** The SQLite file (deleted by `cleanup`). */
  readonly db: string;
  cleanup(): void;
}

/** One crawl with history recording into a fresh temporary SQLite file. */
export async function runEngine(config: CrawlConfig, onStart?: (crawler: Crawler, crawlId: number) => void): Promise<EngineRun> {
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-bench-'));
  const db = join(dir, 'history.sqlite');
  const calledAt = clockNow();
  const { stats, committedAt } = await runCrawl({ config, db, onStart, progressEvery: 0 });
  const returnedAt = clockNow();
  return {
    stats,
    calledAt,
    startedAt: stats.startedAt ?? calledAt,
    finishedAt: stats.finishedAt ?? returnedAt,
    committedAt,
    returnedAt,
    db,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
