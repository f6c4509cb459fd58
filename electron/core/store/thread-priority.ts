// CPU scheduling policy of one thread (Linux): the history worker runs as SCHED_IDLE so its bursts
// never take a core from the crawl's event loop or from the servers it is crawling on this machine.
//
// Why SCHED_IDLE and not a nice value: on a two-core machine a crawl's event loop, its servers'
// replies and the history worker all want a core at once. The kernel puts a woken thread on an idle
// core when there is one, and a core running only SCHED_IDLE threads counts as idle, so the crawl
// loop and the processes it talks to are never queued behind a batch commit. A niced thread (even
// nice 19) still makes its core busy, and measured no better than nice 0. Node has no call for
// sched_setscheduler, so util-linux's `chrt` (in every Debian/Ubuntu/Fedora base system) sets it;
// where there is no /proc/thread-self, no chrt, or no right to leave SCHED_IDLE again, nothing changes.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';

export type ThreadPolicy = 'idle' | 'normal';

/** The calling thread's kernel thread id (Linux), or null where there is none to read. */
export function currentThreadId(): number | null {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

/**
 * Names the calling thread (Linux, at most 15 bytes), so `top -H`, `ps -L` and per-thread CPU
 * readings tell it from V8's and libuv's threads, which are all called after the program. Nothing
 * happens where it cannot be named.
 */
export function nameThisThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or no /proc: the thread keeps its name
  }
}

/**
 * The scheduling policy the kernel reports for a thread of this process (field 41 of its stat
 * line): 'idle' for SCHED_IDLE, 'normal' for SCHED_OTHER, the number for any other, null when the
 * thread is gone or there is no /proc.
 */
export function threadPolicy(tid: number): ThreadPolicy | number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name, which is in parentheses and may hold spaces: field 3 is [0].
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const policy = Number(fields[41 - 3]);
  return policy === 5 ? 'idle' : policy === 0 ? 'normal' : policy;
}

/** CAP_SYS_NICE, the capability that lets a thread leave SCHED_IDLE whatever its limits. */
const CAP_SYS_NICE = 23n;

/**
 * Whether a thread of this process that goes SCHED_IDLE may come back to normal priority. The
 * kernel counts SCHED_IDLE as nice 20: leaving it needs CAP_SYS_NICE (root has it) or a soft
 * RLIMIT_NICE of at least 20 (20 − nice 0). Most desktop users have neither (RLIMIT_NICE 0), and a
 * worker that could never be raised again could starve, so there the worker is left alone.
 * `status` and `limits` are the texts of /proc/self/status and /proc/self/limits.
 */
export function mayLeaveIdle(status: string, limits: string): boolean {
  const cap = /^CapEff:\s*([0-9a-f]+)\s*$/im.exec(status);
  if (cap !== null && ((BigInt(`0x${cap[1]}`) >> CAP_SYS_NICE) & 1n) === 1n) return true;
  const nice = /^Max nice priority\s+(\S+)/im.exec(limits);
  if (nice === null) return false;
  return nice[1] === 'unlimited' || Number(nice[1]) >= 20;
}

/** mayLeaveIdle for this process, read from /proc (false where there is none). */
export function processMayLeaveIdle(): boolean {
  try {
    return mayLeaveIdle(readFileSync('/proc/self/status', 'utf8'), readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Sets a thread of this process to SCHED_IDLE ('idle') or back to SCHED_OTHER ('normal') with
 * `chrt`. Resolves true once set, false where it cannot be (no chrt, not Linux, thread gone):
 * callers carry on at whatever priority the thread has.
 *
 * The chrt runs are asked of one small shell started at the first call (ChrtRunner), not spawned
 * from here: spawning forks this whole process on the calling thread, 1.3-9 ms of a 95 MB process's
 * event loop per call, and a raise comes exactly when the machine is busy and a crawl's timing
 * matters. Where that shell cannot run, each call spawns chrt itself.
 */
export function setThreadPolicy(tid: number, policy: ThreadPolicy): Promise<boolean> {
  if (runner === undefined) runner = ChrtRunner.start();
  if (runner !== null && runner.alive) return runner.set(tid, policy);
  return spawnChrt(tid, policy);
}

/** One chrt run spawned from the calling thread. */
function spawnChrt(tid: number, policy: ThreadPolicy): Promise<boolean> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('chrt', [`--${CHRT_POLICY[policy]}`, '--pid', '0', String(tid)], { stdio: 'ignore' });
    } catch {
      resolve(false);
      return;
    }
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** chrt's name of each policy (`--idle`, `--other`). */
const CHRT_POLICY: Readonly<Record<ThreadPolicy, string>> = { idle: 'idle', normal: 'other' };

/** undefined: not started yet; null: it could not start (each call spawns chrt). */
let runner: ChrtRunner | null | undefined;

/**
 * A shell that runs `chrt` for each line it reads (`idle|other TID`) and answers each with a line
 * (1 set, 0 not), in order. It does not keep this process alive, and it ends when this process
 * does (its input closes). If it dies, the calls it had not answered are spawned again directly,
 * and later calls spawn chrt themselves.
 */
class ChrtRunner {
  alive = true;
  private readonly answers: { readonly tid: number; readonly policy: ThreadPolicy; readonly resolve: (ok: boolean) => void }[] = [];
  private partial = '';

  private constructor(private readonly child: ChildProcessByStdio<Writable, Readable, null>) {
    child.stdout.setEncoding('latin1');
    child.stdout.on('data', (chunk: string) => this.read(chunk));
    child.once('error', () => this.died());
    child.once('exit', () => this.died());
    child.stdin.on('error', () => this.died());
    child.unref();
    // Its pipes do not hold this process's event loop open either (Pipe handles, not in the types).
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
  }

  static start(): ChrtRunner | null {
    if (process.platform !== 'linux') return null;
    try {
      const child = spawn('/bin/sh', ['-c', 'while read p t; do if chrt --"$p" --pid 0 "$t" 2>/dev/null; then echo 1; else echo 0; fi; done'], {
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      return new ChrtRunner(child);
    } catch {
      return null;
    }
  }

  set(tid: number, policy: ThreadPolicy): Promise<boolean> {
    return new Promise((resolve) => {
      this.answers.push({ tid, policy, resolve });
      this.child.stdin.write(`${CHRT_POLICY[policy]} ${tid}\n`);
    });
  }

  private read(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.answers.shift()?.resolve(line === '1');
  }

  private died(): void {
    if (!this.alive) return;
    this.alive = false;
    for (const a of this.answers.splice(0)) void spawnChrt(a.tid, a.policy).then(a.resolve);
  }
}
