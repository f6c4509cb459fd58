// Figure 3: memory of a big waiting frontier: 100,000 queued requests over 10,000 slots in a
// crawl that is paused before anything starts (runCrawl, history on), RSS after a full GC.

import { getHeapStatistics } from 'node:v8';
import type { Crawler } from '../../electron/core/engine/crawler';
import { makeConfig, runEngine } from './lib/engine';
import { detail, figure, fmt, fullGc, mb, sleep } from './lib/report';

const SLOTS = Number(process.env.BENCH_MEMORY_SLOTS ?? 10_000);
const PER_SLOT = Number(process.env.BENCH_MEMORY_PER_SLOT ?? 10);
const TOTAL = SLOTS * PER_SLOT;

function settle(): { rss: number; heap: number; external: number } {
  fullGc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
}

if (!fullGc()) console.log('    warning: run with node --expose-gc (run-all does) for figures after a full GC');
// Load and warm everything the crawl uses, so "before" is the process ready to crawl.
await sleep(50);
const before = settle();

// Seeds on hosts that are never contacted: the crawl is paused before its first dispatch.
const seeds: string[] = [];
for (let k = 0; k < PER_SLOT; k++) for (let i = 0; i < SLOTS; i++) seeds.push(`http://m${i + 1}.test/item/${k + 1}?ref=bench`);
const config = makeConfig(seeds, { DOWNLOAD_DELAY: 1, AUTOTHROTTLE_ENABLED: false, ROBOTSTXT_OBEY: false, CONCURRENT_REQUESTS: 64 }, {});
seeds.length = 0;

let crawler: Crawler | null = null;
const startedAt = performance.now();
const running = runEngine(config, (c) => {
  // Called synchronously after crawler.start() queued every seed; the first dispatch is a microtask away.
  c.pause();
  crawler = c;
});
while (!crawler) await sleep(10);
await sleep(1000); // let the history writer commit the crawl row and settle
const after = settle();
const c = crawler as Crawler;
const s = c.stats();
const heapLimit = getHeapStatistics().heap_size_limit;
// Issue 17 part 2: stays within 260 MB (the earlier bound was 300) while the response path gets leaner.
figure(`memory ${fmt(TOTAL)} queued over ${fmt(SLOTS)} slots`, `RSS after GC ${mb(after.rss)} (before the crawl ${mb(before.rss)}, +${mb(after.rss - before.rss)})`,
  Math.round(after.rss / (1024 * 1024)), 260, { atMost: true, unit: ' MB' });
detail(`paused crawl (runCrawl, history on): ${fmt(s.queued)} queued, ${fmt(s.inFlight)} in flight, ${fmt(s.slots)} slots, seed intake ${fmt(performance.now() - startedAt - 1000)} ms`);
detail(`JS heap used ${mb(after.heap)} (before ${mb(before.heap)}): ${fmt((after.heap - before.heap) / TOTAL)} bytes per queued request; ` +
  `external + array buffers ${mb(after.external)}; heap limit ${mb(heapLimit)}`);
await c.stop();
await running.then((r) => r.cleanup());
