// A real redis-server (Debian's) for the shared-crawl tests: on a free port, in a temp folder, with
// the append-only file on; and the slotscope processes of a shared crawl (recorder and workers).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { CLI, defer, freshDir, ROOT, waitFor } from './helpers';

export const hasRedis = spawnSync('redis-server', ['--version']).status === 0;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  readonly port: number;
  readonly dir: string;
  /** redis://[:password@]127.0.0.1:port/0 */
  readonly url: string;
  /** SIGTERM (it writes its files) and start again on the same port and folder. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
  /** A command through redis-cli. */
  cli(...args: string[]): string;
}

export interface RedisStartOptions {
  readonly password?: string;
  /** Extra redis-server arguments. */
  readonly args?: readonly string[];
  /** Listen on this port (default: a free one). */
  readonly port?: number;
}

export async function startRedis(o: RedisStartOptions = {}): Promise<RedisServer> {
  const dir = freshDir('slotscope-redis-');
  const port = o.port ?? (await freePort());
  let proc: ChildProcess | null = null;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--daemonize', 'no',
    ...(o.password ? ['--requirepass', o.password] : []), ...(o.args ?? [])];
  const start = async () => {
    const p = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    proc = p;
    let out = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    await waitFor(() => /Ready to accept connections/.test(out) || p.exitCode !== null, 'redis-server to be ready', 15_000);
    if (p.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
  };
  const stop = async () => {
    const p = proc;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('close', r));
    p.kill('SIGTERM');
    await gone;
  };
  await start();
  defer(stop);
  const auth = o.password ? `:${encodeURIComponent(o.password)}@` : '';
  return {
    port, dir, url: `redis://${auth}127.0.0.1:${port}/0`,
    restart: async (downMs = 0) => {
      await stop();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    stop,
    cli: (...a: string[]) => spawnSync('redis-cli', ['-p', String(port), ...(o.password ? ['-a', o.password, '--no-auth-warning'] : []), ...a], { encoding: 'utf8' }).stdout.trim(),
  };
}

/** A slotscope process of a shared crawl, its output kept. */
export interface Proc {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

export function slotscope(args: readonly string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const p: Proc = { child, stdout: '', stderr: '', exited: new Promise((r) => child.once('close', (code) => r(code))) };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (p.stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (p.stderr += d));
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return p;
}

/** The summary line a recorder printed. */
export function summaryOf(p: Proc): { crawl_id: number; responses: number; workers: Record<string, number>; requeued: number; by_status: Record<string, number> } {
  const line = p.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`no summary line; stdout: ${p.stdout}\nstderr: ${p.stderr}`);
  }
}

export function configFile(config: unknown): string {
  const dir = freshDir('slotscope-shared-');
  const file = join(dir, 'crawl.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/**
 * The exit code of `p`, or, when it has not exited within `ms`, an error showing what every process
 * said and what Redis holds of the crawl (so a hang names its cause).
 */
export async function exitOf(p: Proc, ms: number, all: readonly Proc[], redis?: RedisServer): Promise<number | null> {
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
  const r = await Promise.race([p.exited, timer]);
  if (r !== 'timeout') return r;
  const state = redis
    ? ['HGETALL ss:c:{1}:meta', 'HGETALL ss:c:{1}:leases', 'ZRANGE ss:c:{1}:ready 0 -1 WITHSCORES', 'XLEN ss:c:{1}:rec', 'HGETALL ss:c:{1}:dead']
      .map((c) => `${c}: ${redis.cli(...c.split(' ')).replace(/"settings"[\s\S]*?\n/, '').slice(0, 1500)}`).join('\n')
    : '';
  throw new Error(`still running after ${ms} ms\n${all.map((x, i) => `--- process ${i}: ${x.child.spawnargs.slice(2).join(' ')}\n${x.stderr.slice(-2500)}`).join('\n')}\n--- redis\n${state}`);
}
