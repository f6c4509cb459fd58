// What the Scrapy bridge tests share: a python3 that has Scrapy (Debian's python3-scrapy), a real
// spider (test/fixtures/scrapy/site_spider.py) with the slotscope-scrapy extension on its path, and a
// Slotscope host (the real core behind the real browser-host server) it streams into.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCore, type Core } from '../../electron/core/create-core';
import { startServer, type RunningServer } from '../../electron/server/ws-server';
import type { Method, Params, Result } from '../../shared/contract';
import { defer, freshDir, ROOT, waitFor } from './helpers';

/** The extension's package folder (on PYTHONPATH instead of pip-installed). */
export const BRIDGE_DIR = join(ROOT, 'integrations', 'scrapy');
export const SPIDER = join(ROOT, 'test', 'fixtures', 'scrapy', 'site_spider.py');

/** A python3 that can import scrapy: $SLOTSCOPE_PYTHON, python3 on the PATH, then Debian's /usr/bin/python3. */
export function findScrapyPython(): string | null {
  const candidates = [process.env.SLOTSCOPE_PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => !!c);
  for (const py of candidates) {
    const r = spawnSync(py, ['-c', 'import scrapy, sys; sys.stdout.write(scrapy.__version__)'], { encoding: 'utf8', timeout: 20_000 });
    if (r.status === 0) return py;
  }
  return null;
}

export const PYTHON = findScrapyPython();
/** Why the Scrapy tests are skipped, or '' when they run. */
export const SKIP_REASON = PYTHON ? '' : ' [skipped: no python3 with Scrapy (apt-get install python3-scrapy, or set SLOTSCOPE_PYTHON)]';

export interface SpiderRun {
  readonly child: ChildProcess;
  /** Resolves when the spider's process exits, with its exit code, Scrapy's final stats and its log. */
  readonly done: Promise<{ code: number | null; stats: Record<string, unknown>; log: string }>;
  /** The spider's log so far. */
  log(): string;
}

export interface SpiderOptions {
  readonly name?: string;
  readonly startUrls: readonly string[];
  /** Scrapy settings; the bridge is enabled when slotscopeUrl is given. */
  readonly settings?: Record<string, unknown>;
  readonly slotscopeUrl?: string | null;
  /** Host name -> loopback address (the test site's `resolve`), so Scrapy's slots are the host names. */
  readonly resolve?: Readonly<Record<string, string>>;
  /** Milliseconds after which the spider is killed and `done` rejects (default 60 s). */
  readonly limitMs?: number;
}

/** Runs site_spider.py with `python3`; killed when the test ends. */
export function runSpider(o: SpiderOptions): SpiderRun {
  if (!PYTHON) throw new Error('no python3 with Scrapy');
  const dir = freshDir('slotscope-spider-');
  const logFile = join(dir, 'scrapy.log');
  const statsFile = join(dir, 'stats.json');
  const settings: Record<string, unknown> = { LOG_FILE: logFile, ...o.settings };
  if (o.slotscopeUrl) {
    settings.EXTENSIONS = { 'slotscope_scrapy.SlotscopeBridge': 500, ...((o.settings?.EXTENSIONS as object | undefined) ?? {}) };
    settings.SLOTSCOPE_URL = o.slotscopeUrl;
  }
  const config = join(dir, 'spider.json');
  writeFileSync(config, JSON.stringify({ name: o.name ?? 'testsite', start_urls: o.startUrls, settings, stats_file: statsFile, resolve: o.resolve ?? {} }));
  const env = { ...process.env, PYTHONPATH: [BRIDGE_DIR, process.env.PYTHONPATH].filter(Boolean).join(':'), PYTHONDONTWRITEBYTECODE: '1' };
  const child = spawn(PYTHON, [SPIDER, config], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  defer(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const readLog = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const limitMs = o.limitMs ?? 60_000;
  const done = new Promise<{ code: number | null; stats: Record<string, unknown>; log: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the spider did not finish within ${limitMs} ms; its log ends:\n${readLog().slice(-3000)}\n${stderr.slice(-2000)}`));
    }, limitMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      const stats = existsSync(statsFile) ? (JSON.parse(readFileSync(statsFile, 'utf8')) as Record<string, unknown>) : {};
      resolve({ code, stats, log: readLog() + stderr });
    });
  });
  done.catch(() => undefined);
  return { child, done, log: readLog };
}

/** The AUTOTHROTTLE_DEBUG messages of a Scrapy log (after Scrapy's prefix), in order. */
export function throttleLines(log: string): string[] {
  return log.split('\n').filter((l) => l.includes('[scrapy.extensions.throttle] INFO: slot: ')).map((l) => l.slice(l.indexOf('INFO: ') + 6));
}

export interface Host {
  readonly core: Core;
  readonly server: RunningServer;
  readonly db: string;
  /** Calls the core as the console does; throws with the error's words when it answers an error. */
  call<M extends Method>(method: M, params: Params<M>): Promise<Result<M>>;
}

/** The real core behind the real browser host on 127.0.0.1; closed when the test ends. */
export async function startHost(): Promise<Host> {
  const db = join(freshDir('slotscope-scrapy-host-'), 'history.sqlite');
  const core = await createCore({ db });
  const server = await startServer({ dispatcher: core, log: () => undefined });
  defer(async () => {
    await server.close();
    await core.close();
  });
  return {
    core, server, db,
    async call(method, params) {
      const r = await core.dispatch(method, params);
      if (!r.ok) throw Object.assign(new Error(`${method}: ${r.error.code}: ${r.error.message}`), { appError: r.error });
      return r.result as never;
    },
  };
}

/** The id of the first Scrapy crawl the host lists, once there is one. */
export async function scrapyCrawlId(host: Host, timeoutMs = 20_000): Promise<number> {
  let id: number | undefined;
  await waitFor(() => {
    void host.call('crawls.list', {}).then((list) => {
      id = list.find((c) => c.source === 'Scrapy')?.id;
    });
    return id !== undefined;
  }, 'the Scrapy crawl to appear', timeoutMs);
  return id!;
}
