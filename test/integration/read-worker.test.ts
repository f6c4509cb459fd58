// Chart and log reads run off the scheduler's event loop (issue 14): a heavy read of a long crawl
// through the core keeps the core's own loop ticking, where the same read on the loop stalls it.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../electron/core/create-core';
import { openHistoryWriter } from '../../electron/core/store/history-writer';
import { openHistoryReader } from '../../electron/core/store/queries';
import type { ResponseRecord } from '../../shared/types';
import { defer, ensureBuilt, freshDir } from './helpers';

beforeAll(ensureBuilt, 120_000);

/** The longest the event loop went without running a 1 ms interval while `work` ran. */
async function worstStall(work: () => Promise<unknown> | unknown): Promise<number> {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  last = performance.now();
  await work();
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(timer);
  return Math.max(worst, performance.now() - last);
}

describe('the read worker', () => {
  it('answers chart and log reads without stalling the core loop the way the same read on it does', async () => {
    const db = join(freshDir(), 'reads.sqlite');
    const writer = await openHistoryWriter(db);
    const crawlId = await writer.createCrawl('long crawl', { seeds: ['http://long.test/'] }, {});
    const t0 = 1_795_000_000_000;
    const N = 150_000;
    for (let i = 0; i < N; i++) {
      const r: ResponseRecord = {
        t: t0 + i * 10, startedAt: t0 + i * 10 - 5, waitMs: 1, slot: `s${i % 20}`, url: `http://long.test/p/${i}`, method: 'GET',
        status: i % 17 === 0 ? 503 : 200, latency: 0.005 + (i % 13) / 1000, downloadTime: 0.001, bytes: 1000 + (i % 7), inFlight: 1,
        delayBefore: 0.1, delayAfter: 0.1, delayCause: 'floor', backoffLevel: 0, reused: true, errorKind: null, errorMessage: null, depth: 1,
        contentType: 'text/html',
      };
      writer.recordResponse(crawlId, r);
    }
    await writer.close();

    const c = await createCore({ db });
    defer(() => c.close());
    const query = { crawlId, slot: 's3', maxPoints: 100_000 };
    // Baseline, in the same run: the same read on this thread's loop.
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    let direct: unknown;
    const onLoop = await worstStall(() => {
      direct = reader.scatter(crawlId, { slot: 's3', maxPoints: 100_000 });
    });
    let viaCore: unknown;
    const offLoop = await worstStall(async () => {
      const r = await c.dispatch('slots.responses', query);
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      viaCore = r.result;
    });
    expect(viaCore).toEqual(direct);
    expect((direct as unknown[]).length).toBeGreaterThan(1000);
    // The read itself takes a while on the loop; through the core, the loop only waits for messages.
    expect(onLoop).toBeGreaterThan(20);
    expect(offLoop, `worst stall ${offLoop.toFixed(1)} ms via the core, ${onLoop.toFixed(1)} ms on the loop`).toBeLessThan(onLoop / 2);
  }, 120_000);
});
