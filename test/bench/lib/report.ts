// Number formatting, order statistics and the one-line figure format every benchmark prints,
// so run-all can pick out the PASS/MISS lines and list them again at the end.

import { readdirSync, readFileSync } from 'node:fs';

/** `14,200`, with `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return String(n);
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile (p in 0..100) of an unsorted list. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = Float64Array.from(xs).sort();
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank];
}

export type Verdict = 'PASS' | 'MISS';

/** `value >= target` (or `<=` with `atMost`) as PASS/MISS, with the `(target >= x)` text. */
export function judge(value: number, target: number, atMost = false, unit = ''): { verdict: Verdict; text: string } {
  const ok = atMost ? value <= target : value >= target;
  return { verdict: ok ? 'PASS' : 'MISS', text: `(target ${atMost ? '<=' : '>='} ${target}${unit})` };
}

/** Prints one figure line: `<name>: <body> (target …) PASS|MISS`. */
export function figure(name: string, body: string, value: number, target: number, opts: { atMost?: boolean; unit?: string } = {}): Verdict {
  const j = judge(value, target, opts.atMost, opts.unit ?? '');
  console.log(`${name}: ${body} ${j.text} ${j.verdict}`);
  return j.verdict;
}

/** An indented detail line under a figure. */
export function detail(text: string): void {
  console.log(`    ${text}`);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** CPU seconds (user+system) of this process between two process.cpuUsage() samples, as a share of one core over `wallMs`. */
export function coreShare(before: NodeJS.CpuUsage, after: NodeJS.CpuUsage, wallMs: number): number {
  const us = after.user - before.user + (after.system - before.system);
  return us / 1000 / wallMs;
}

/** Forces a full collection several times (needs node --expose-gc); false when gc is not exposed. */
export function fullGc(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return false;
  for (let i = 0; i < 4; i++) gc();
  return true;
}

export function mb(bytes: number): string {
  return `${fmt(bytes / (1024 * 1024), 1)} MB`;
}

/**
 * CPU microseconds (user+system) of this process's main thread, from /proc (Linux; null elsewhere),
 * at the kernel's tick resolution (10 ms: over a trial of thousands of requests, a fraction of a
 * microsecond per request). The rest of process.cpuUsage() is the other threads' (worker threads,
 * GC and libuv helpers), ended threads included.
 */
export function mainThreadCpu(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * (1e6 / 100); // utime, stime (fields 14 and 15) at USER_HZ 100
  } catch {
    return null;
  }
}

/** Per thread group of this process (by thread name), nanoseconds on a core and waiting for one (Linux's schedstat; null elsewhere). */
export type ThreadTimes = Map<string, { run: number; wait: number }>;

export function threadTimes(): ThreadTimes | null {
  try {
    const out: ThreadTimes = new Map();
    for (const tid of readdirSync('/proc/self/task')) {
      let name: string;
      let stat: string;
      try {
        name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
        stat = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8');
      } catch {
        continue; // ended meanwhile
      }
      // V8's and libuv's helper threads are all named after the program ('node'); the history worker names itself.
      const key = Number(tid) === process.pid ? 'main' : name;
      const [run, wait] = stat.split(' ').map(Number);
      const o = out.get(key) ?? { run: 0, wait: 0 };
      o.run += run!;
      o.wait += wait!;
      out.set(key, o);
    }
    return out;
  } catch {
    return null;
  }
}

/**
 * Starts watching this process's threads; the returned function stops and gives what each thread
 * group did since, in ms on a core and ms waiting for one. A thread that names itself (the history
 * worker, which ends before runCrawl returns) is read every 20 ms as well, so what it did is kept;
 * only its own file is read then (reading every thread's would cost the client ~1 % of its window).
 */
export function watchThreads(): () => Record<string, [number, number]> {
  const first = threadTimes();
  if (first === null) return () => ({}); // not Linux
  // By thread id; a thread is classified at the first reading that sees it ('' = a helper, not read again).
  const named = new Map<string, { name: string; run: number; wait: number }>();
  const poll = setInterval(() => {
    for (const tid of readdirSync('/proc/self/task')) {
      const known = named.get(tid);
      if (known === undefined && Number(tid) === process.pid) continue;
      try {
        if (known === undefined) {
          const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
          if (name === 'node') {
            named.set(tid, { name: '', run: 0, wait: 0 });
            continue;
          }
          named.set(tid, { name, run: 0, wait: 0 });
        }
        const o = named.get(tid)!;
        if (o.name === '') continue;
        const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        o.run = run!;
        o.wait = wait!;
      } catch {
        // ended: what it did is its last reading
      }
    }
  }, 20);
  return () => {
    clearInterval(poll);
    const last = threadTimes() ?? new Map();
    // Named threads gone by now count with their last reading.
    const alive = new Set(readdirSync('/proc/self/task'));
    for (const [tid, o] of named) {
      if (o.name === '' || alive.has(tid)) continue;
      const sum = last.get(o.name) ?? { run: 0, wait: 0 };
      last.set(o.name, { run: sum.run + o.run, wait: sum.wait + o.wait });
    }
    const out: Record<string, [number, number]> = {};
    for (const [k, v] of last) {
      const u = first.get(k) ?? { run: 0, wait: 0 };
      out[k] = [Math.round((v.run - u.run) / 1e6), Math.round((v.wait - u.wait) / 1e6)];
    }
    return out;
  };
}
