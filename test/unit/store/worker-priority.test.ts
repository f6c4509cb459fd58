// The history worker's CPU priority (thread-priority.ts, HistoryWriter): idle while it keeps up,
// normal as soon as a busy machine makes it lag, idle again once it caught up; read from the kernel.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BACKGROUND_HOLD_MS, BACKGROUND_LAG_MS, openHistoryWriter, type HistoryWriter,
} from '../../../electron/core/store/history-writer';
import { currentThreadId, threadPolicy } from '../../../electron/core/store/thread-priority';
import { buildStoreBundle, freshDir, sampleResponse, type StoreBundle } from './helpers';

const CHRT = process.platform === 'linux' && spawnSync('chrt', ['--version']).status === 0;

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const end = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One more busy thread than there are cores, at normal priority: an idle-priority thread gets (almost) no CPU. */
function spin(): { stop(): Promise<void> } {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const threads = Array.from({ length: availableParallelism() + 1 }, () =>
    new Worker('const f = require("node:worker_threads").workerData; while (Atomics.load(f, 0) === 0) {}', { eval: true, workerData: flag }));
  return {
    async stop() {
      Atomics.store(flag, 0, 1);
      await Promise.all(threads.map((t) => new Promise((r) => t.once('exit', r))));
    },
  };
}

async function record(writer: HistoryWriter, crawlId: number, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) writer.recordResponse(crawlId, sampleResponse(i));
}

describe('thread-priority', () => {
  it('reads this thread\'s id and policy from the kernel (Linux), and nothing elsewhere', () => {
    const tid = currentThreadId();
    if (process.platform !== 'linux') {
      expect(tid).toBeNull();
      return;
    }
    expect(tid).toBeGreaterThan(0);
    expect(threadPolicy(tid!)).toBe('normal');
    expect(threadPolicy(2 ** 31 - 1)).toBeNull();
  });
});

describe.runIf(CHRT)('history worker priority (Linux, chrt)', () => {
  it('idles while the worker keeps up', async () => {
    const writer = await openHistoryWriter(join(freshDir(), 'h.sqlite'), { workerFile: bundle.workerFile });
    try {
      const { tid } = writer.priority;
      expect(tid).toBeGreaterThan(0);
      await until('the idle policy', () => writer.priority.policy === 'idle');
      expect(threadPolicy(tid!)).toBe('idle');
      const crawlId = await writer.createCrawl('quiet', {}, {});
      await record(writer, crawlId, 500);
      await writer.flush();
      expect(writer.priority).toEqual({ tid, policy: 'idle', raised: 0 });
      expect(threadPolicy(tid!)).toBe('idle');
    } finally {
      await writer.close();
    }
  });

  it('runs the worker at normal priority once a busy machine makes it lag, and lets it idle again after it caught up', async () => {
    const writer = await openHistoryWriter(join(freshDir(), 'h.sqlite'), { workerFile: bundle.workerFile });
    try {
      const { tid } = writer.priority;
      await until('the idle policy', () => writer.priority.policy === 'idle');
      const crawlId = await writer.createCrawl('starved', {}, {});
      const spinner = spin();
      let flushMs: number;
      try {
        await new Promise((r) => setTimeout(r, 100)); // the spinners are running
        await record(writer, crawlId, 3000);
        const t0 = performance.now();
        await writer.flush();
        flushMs = performance.now() - t0;
        expect(writer.priority.raised).toBeGreaterThanOrEqual(1);
        expect(writer.priority.policy).toBe('normal');
        expect(threadPolicy(tid!)).toBe('normal');
      } finally {
        await spinner.stop();
      }
      // Starved at idle priority the flush would wait for the spinners; raised, it waits about the lag bound.
      expect(flushMs).toBeLessThan(BACKGROUND_LAG_MS + 2000);
      // Caught up and held normal long enough: the next answered batch puts it back to idle.
      await new Promise((r) => setTimeout(r, BACKGROUND_HOLD_MS));
      await record(writer, crawlId, 10, 3000);
      await writer.flush();
      await until('the idle policy again', () => writer.priority.policy === 'idle');
      expect(threadPolicy(tid!)).toBe('idle');
    } finally {
      await writer.close();
    }
  }, 30_000);

  it('leaves the worker at the process\'s priority with background: false', async () => {
    const writer = await openHistoryWriter(join(freshDir(), 'h.sqlite'), { workerFile: bundle.workerFile, background: false });
    try {
      expect(writer.priority).toEqual({ tid: null, policy: null, raised: 0 });
      await writer.flush();
    } finally {
      await writer.close();
    }
  });
});
