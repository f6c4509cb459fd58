// The pieces of a shared crawl (issue 18) as a benchmark runs them: a real redis-server of its own,
// the slotscope CLI processes (recorder, workers, the plain crawl), and their CPU read from /proc.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** The CLI the processes run: this checkout's build, or BENCH_SHARED_CLI (e.g. another checkout's dist/cli.js with a patch to try). */
export const CLI = process.env.BENCH_SHARED_CLI ?? join(process.cwd(), 'dist', 'cli.js');
export const hasRedis = spawnSync('redis-server', ['--version']).status === 0;

/** A free TCP port on `address`. */
export function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, address, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  readonly url: string;
  readonly pid: number;
  /** A client of the benchmark's own (INFO, XLEN); not counted apart in INFO: its commands are few. */
  readonly client: Redis;
  stop(): Promise<void>;
}

/** Debian's redis-server on `address`, append-only file on (everysec) as in the integration tests. */
export async function startRedis(address: string): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-bench-redis-'));
  const port = await freePort(address);
  const proc = spawn('redis-server', ['--port', String(port), '--bind', address, '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec',
    '--save', '', '--daemonize', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const t0 = Date.now();
  while (!/Ready to accept connections/.test(out)) {
    if (proc.exitCode !== null || Date.now() - t0 > 15_000) throw new Error(`redis-server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const url = `redis://${address}:${port}/0`;
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  return {
    url, pid: proc.pid!, client,
    stop: async () => {
      client.disconnect();
      if (proc.exitCode !== null) return;
      const gone = new Promise((r) => proc.once('close', r));
      proc.kill('SIGTERM');
      await gone;
    },
  };
}

/** One `node dist/cli.js …` process, its output kept, its CPU sampled from /proc while it runs. */
export interface CliProc {
  readonly child: ChildProcess;
  readonly name: string;
  readonly spawnedAt: number;
  stdout: string;
  stderr: string;
  /** Epoch ms of its exit. */
  exitedAt: number;
  /** CPU seconds (user + system) at the last sample before it exited. */
  cpu: number;
  readonly exited: Promise<number | null>;
}

const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds of a live process (user + system), or null once it is gone. */
export function procCpu(pid: number): number | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return null;
  }
}

/** Node flags for the CLI processes (e.g. `--cpu-prof --cpu-prof-dir=DIR`), from BENCH_SHARED_CLI_FLAGS. */
const CLI_FLAGS = (process.env.BENCH_SHARED_CLI_FLAGS ?? '').split(' ').filter((x) => x !== '');

export function cli(name: string, args: readonly string[]): CliProc {
  const child = spawn(process.execPath, [...CLI_FLAGS, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const p: CliProc = {
    child, name, spawnedAt: Date.now(), stdout: '', stderr: '', exitedAt: 0, cpu: 0,
    exited: new Promise((r) => child.once('close', (code) => {
      p.exitedAt = Date.now();
      clearInterval(timer);
      r(code);
    })),
  };
  const timer = setInterval(() => {
    const c = procCpu(child.pid!);
    if (c !== null) p.cpu = c;
  }, 50);
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (p.stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (p.stderr += d));
  return p;
}

/** Waits for a CLI process and throws with its output when it failed. */
export async function succeeded(p: CliProc): Promise<void> {
  const code = await p.exited;
  if (code !== 0) throw new Error(`${p.name} exited with ${code}\nstdout: ${p.stdout.slice(-2000)}\nstderr: ${p.stderr.slice(-4000)}`);
}

export interface Summary {
  readonly crawl_id: number;
  readonly responses: number;
  readonly seconds: number;
  readonly workers?: Record<string, number>;
  readonly requeued?: number;
}

export function summaryOf(p: CliProc): Summary {
  const line = p.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Summary;
  } catch {
    throw new Error(`${p.name}: no summary line; stdout: ${p.stdout}\nstderr: ${p.stderr.slice(-4000)}`);
  }
}

/** A crawl config file in `dir`. */
export function configFile(dir: string, tag: string, config: unknown): string {
  const file = join(dir, `${tag}-crawl.json`);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** `INFO commandstats` as command → calls and µs. */
export async function commandStats(r: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const line of (await r.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (m) out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

/** A field of INFO (any section) as a number. */
export async function infoNumber(r: Redis, section: string, field: string): Promise<number> {
  const m = new RegExp(`^${field}:(\\S+)`, 'm').exec(await r.info(section));
  return m ? Number(m[1]) : NaN;
}
