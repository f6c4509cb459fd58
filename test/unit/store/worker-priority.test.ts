// The history worker's CPU priority (thread-priority.ts, HistoryWriter): idle while it keeps up,
// normal as soon as a busy machine makes it lag, idle again once it caught up; read from the kernel.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BACKGROUND_HOLD_MS, BACKGROUND_LAG_MS, openHistoryWriter, type HistoryWriter,
} from '../../../electron/core/store/history-writer';
import { openHistoryReads } from '../../../electron/core/store/read-client';
import { currentThreadId, mayLeaveIdle, processMayLeaveIdle, setThreadPolicy, threadPolicy } from '../../../electron/core/store/thread-priority';
import { buildStoreBundle, freshDir, sampleResponse, type StoreBundle } from './helpers';

const CHRT = process.platform === 'linux' && spawnSync('chrt', ['--version']).status === 0;
/** Root (or CAP_SYS_NICE): may switch a thread to SCHED_IDLE and back, as CI does. */
const MANAGED = CHRT && processMayLeaveIdle();

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

/**
 * Busy loops at idle priority themselves (SCHED_IDLE shell loops, many per core): they share the
 * cores with the idle-priority worker, so it gets a small slice, while every normal-priority
 * process (other test files running beside this one) preempts them and never notices them.
 */
function spin(): { stop(): Promise<void> } {
  const loops = Array.from({ length: 20 * availableParallelism() }, () =>
    spawn('chrt', ['--idle', '0', 'sh', '-c', 'while :; do :; done'], { stdio: 'ignore' }));
  return {
    async stop() {
      await Promise.all(loops.map((p) => new Promise((r) => {
        if (p.exitCode !== null || p.signalCode !== null) r(undefined);
        else {
          p.once('exit', r);
          p.kill('SIGKILL');
        }
      })));
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

  it.runIf(process.platform === 'linux')('the history and read workers name their threads, so top -H and per-thread CPU tell them from V8\'s helpers (all called node)', async () => {
    const file = join(freshDir(), 'h.sqlite');
    const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile, background: false });
    const reads = openHistoryReads(file, bundle.readWorkerFile);
    try {
      const names = (): string[] => readdirSync('/proc/self/task').flatMap((t) => {
        try {
          return [readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()];
        } catch {
          return [];
        }
      });
      expect(names()).toContain('slotscope-hist');
      // A read answered: the read worker has run its first lines.
      await reads.read('slotSummaries', 1);
      expect(names()).toContain('slotscope-read');
    } finally {
      await reads.close();
      await writer.close();
    }
  });

  it('lets a thread go idle only where it may come back: CAP_SYS_NICE or RLIMIT_NICE of 20', () => {
    const limits = (soft: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax nice priority         ${soft}                    ${soft}\n`;
    expect(mayLeaveIdle('Name:\tnode\nCapEff:\t000001fffeffffff\n', limits('0'))).toBe(true); // root
    expect(mayLeaveIdle('CapEff:\t0000000000800000\n', limits('0'))).toBe(true); // CAP_SYS_NICE alone
    expect(mayLeaveIdle('CapEff:\t0000000000000000\n', limits('0'))).toBe(false); // a desktop user
    expect(mayLeaveIdle('CapEff:\t0000000000000000\n', limits('20'))).toBe(true);
    expect(mayLeaveIdle('CapEff:\t0000000000000000\n', limits('19'))).toBe(false);
    expect(mayLeaveIdle('CapEff:\t0000000000000000\n', limits('unlimited'))).toBe(true);
    expect(mayLeaveIdle('', '')).toBe(false);
  });

  it.runIf(process.platform === 'linux' && process.getuid?.() === 0)('reads the kernel\'s answer for root and for an unprivileged user', () => {
    expect(processMayLeaveIdle()).toBe(true);
    const read = "const f = require('node:fs'); process.stdout.write(JSON.stringify([f.readFileSync('/proc/self/status', 'utf8'), f.readFileSync('/proc/self/limits', 'utf8')]))";
    const r = spawnSync(process.execPath, ['-e', read], { uid: 65534, gid: 65534, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const [status, limits] = JSON.parse(r.stdout) as [string, string];
    expect(mayLeaveIdle(status, limits)).toBe(false);
    // ... and the kernel agrees: that user can make a thread idle but not bring it back.
    const sleeper = spawnSync('sh', ['-c', 'sleep 5 & p=$!; chrt --idle --pid 0 $p && chrt --other --pid 0 $p; s=$?; kill $p; exit $s'], { uid: 65534, gid: 65534 });
    expect(sleeper.status).not.toBe(0);
  });
});

/** A thread of this process that waits for its end, and its kernel thread id. */
async function threadOfThisProcess(): Promise<{ tid: number; end(): Promise<void> }> {
  const thread = new Worker(`const { parentPort } = require('node:worker_threads');
    parentPort.postMessage(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()));
    parentPort.once('message', () => process.exit(0));`, { eval: true });
  const tid = await new Promise<number>((resolve) => thread.once('message', resolve));
  return {
    tid,
    async end() {
      thread.postMessage('end');
      await thread.terminate();
    },
  };
}

describe.runIf(MANAGED)('setThreadPolicy (Linux, chrt, may leave SCHED_IDLE)', () => {
  it('sets a thread\'s policy without forking this process on the calling thread (a raise must not stall the crawl\'s event loop)', async () => {
    // A thread of this process that waits for its end.
    const { tid, end } = await threadOfThisProcess();
    try {
      expect(threadPolicy(tid)).toBe('normal');
      // Heap enough that forking this process costs what it costs a crawl's (about 100 MB).
      const ballast = Array.from({ length: 1_000_000 }, (_, i) => ({ i, s: `x${i}` }));
      const blocked: number[] = [];
      for (let k = 0; k < 12; k++) {
        const policy = k % 2 === 0 ? 'idle' : 'normal';
        const t = performance.now();
        const set = setThreadPolicy(tid, policy);
        blocked.push(performance.now() - t);
        expect(await set).toBe(true);
        expect(threadPolicy(tid)).toBe(policy);
      }
      expect(ballast.length).toBe(1_000_000);
      // The calls after the first (which may start what runs chrt): spawning chrt from here blocks 1-9 ms each.
      const rest = blocked.slice(1).sort((a, b) => a - b);
      expect(rest[Math.floor(rest.length / 2)], `ms the caller was held: ${blocked.map((x) => x.toFixed(2)).join(' ')}`).toBeLessThan(0.5);
    } finally {
      await end();
    }
  });
});

describe.runIf(MANAGED)('setThreadPolicy when its shell is gone (Linux, chrt, may leave SCHED_IDLE)', () => {
  it('spawns chrt itself once the shell that runs it died, and still sets the policy', async () => {
    const { tid, end } = await threadOfThisProcess();
    try {
      expect(await setThreadPolicy(tid, 'idle')).toBe(true); // the shell runs by now
      const shells = spawnSync('pgrep', ['-P', String(process.pid), '-f', 'while read p t']).stdout.toString().trim().split('\n').filter(Boolean);
      expect(shells).toHaveLength(1);
      process.kill(Number(shells[0]), 'SIGKILL');
      await until('the shell gone', () => spawnSync('kill', ['-0', shells[0]]).status !== 0);
      await new Promise((r) => setTimeout(r, 50)); // its exit reaches this process
      expect(await setThreadPolicy(tid, 'normal')).toBe(true);
      expect(threadPolicy(tid)).toBe('normal');
      expect(await setThreadPolicy(tid, 'idle')).toBe(true);
      expect(threadPolicy(tid)).toBe('idle');
    } finally {
      await end();
    }
  });
});

describe.runIf(MANAGED)('history worker priority (Linux, chrt, may leave SCHED_IDLE)', () => {
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

  it('raises the worker at once for an urgent flush (a crawl that ended waits for its history), and lets it idle again after', async () => {
    const writer = await openHistoryWriter(join(freshDir(), 'h.sqlite'), { workerFile: bundle.workerFile });
    try {
      const { tid } = writer.priority;
      await until('the idle policy', () => writer.priority.policy === 'idle');
      const crawlId = await writer.createCrawl('ended', {}, {});
      await record(writer, crawlId, 200);
      await writer.flush({ wait: true, urgent: true });
      expect(writer.priority.raised).toBe(1);
      // Set by chrt, which may still be running when the flush is answered.
      await until('the normal policy', () => writer.priority.policy === 'normal');
      expect(threadPolicy(tid!)).toBe('normal');
      // Held normal BACKGROUND_HOLD_MS, then the next answered batch puts it back to idle.
      await new Promise((r) => setTimeout(r, BACKGROUND_HOLD_MS));
      await record(writer, crawlId, 10, 200);
      await writer.flush();
      await until('the idle policy again', () => writer.priority.policy === 'idle');
      expect(threadPolicy(tid!)).toBe('idle');
      // An ordinary flush does not raise it.
      await writer.flush();
      expect(writer.priority.raised).toBe(1);
    } finally {
      await writer.close();
    }
  });

  it('runs the worker at normal priority once it lags behind other idle work, and lets it idle again after it caught up', async () => {
    const writer = await openHistoryWriter(join(freshDir(), 'h.sqlite'), { workerFile: bundle.workerFile });
    try {
      const { tid } = writer.priority;
      await until('the idle policy', () => writer.priority.policy === 'idle');
      const crawlId = await writer.createCrawl('starved', {}, {});
      const loops = spin();
      let flushMs: number;
      try {
        await new Promise((r) => setTimeout(r, 200)); // the loops are running
        // Enough work that a worker starved at idle priority lags past BACKGROUND_LAG_MS (its batches
        // got cheaper: 3,000 rows could be written in a small slice before the lag was noticed).
        await record(writer, crawlId, 12_000);
        const t0 = performance.now();
        let answered = false;
        const flushed = writer.flush().then(() => {
          answered = true;
        });
        // Raised while the flush waits on the starved worker. (Checked then, not after the flush: on
        // a loaded machine the flush can take longer than BACKGROUND_HOLD_MS, and its answer then
        // rightly lets the caught-up worker idle again.)
        await until('the worker raised while the flush waits', () => writer.priority.raised >= 1 || answered);
        expect(writer.priority.raised).toBeGreaterThanOrEqual(1);
        // Set by chrt, which may still be running.
        await until('the normal policy applied', () => writer.priority.policy === 'normal');
        expect(threadPolicy(tid!)).toBe('normal');
        await flushed;
        flushMs = performance.now() - t0;
      } finally {
        await loops.stop();
      }
      // Starved at idle priority the flush would wait for the loops; raised, it waits about the lag bound.
      expect(flushMs).toBeLessThan(BACKGROUND_LAG_MS + 2000);
      // Caught up and held normal long enough: the next answered batch puts it back to idle.
      await new Promise((r) => setTimeout(r, BACKGROUND_HOLD_MS));
      await record(writer, crawlId, 10, 12_000);
      await writer.flush();
      await until('the idle policy again', () => writer.priority.policy === 'idle');
      expect(threadPolicy(tid!)).toBe('idle');
    } finally {
      await writer.close();
    }
  }, 30_000);

  it.runIf(process.getuid?.() === 0)('leaves the worker alone for a user who could not bring it back from idle', () => {
    const dir = freshDir();
    chmodSync(dir, 0o777);
    chmodSync(bundle.dir, 0o755); // mkdtemp made it private to root
    const script = `
      const { openHistoryWriter } = await import(${JSON.stringify(bundle.writerModule.href)});
      const w = await openHistoryWriter(${JSON.stringify(join(dir, 'h.sqlite'))}, { workerFile: new URL(${JSON.stringify(bundle.workerFile.href)}) });
      await new Promise((r) => setTimeout(r, 300));
      const policies = [];
      for (const t of (await import('node:fs')).readdirSync('/proc/self/task')) {
        const stat = (await import('node:fs')).readFileSync('/proc/self/task/' + t + '/stat', 'utf8');
        policies.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]));
      }
      process.stdout.write(JSON.stringify({ priority: w.priority, idleThreads: policies.filter((p) => p === 5).length }));
      await w.close();`;
    writeFileSync(join(dir, 'probe.mjs'), script);
    const r = spawnSync(process.execPath, [join(dir, 'probe.mjs')], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: dir });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ priority: { tid: null, policy: null, raised: 0 }, idleThreads: 0 });
  });

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
