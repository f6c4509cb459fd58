// Browser mode: the core and the browser host in one process, for `slotscope serve` (a crawl on a
// server watched from a laptop) and for `npm start` where no Electron binary exists.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRESETS } from '../shared/settings';
import { createCore, type Core } from './core/create-core';
import { shownUrl } from './core/cluster/redis';
import { demoScenario, startTestSite, type Scenario, type TestSite } from './core/testsite/index';
import { loadHostIdentity, saveHostIdentity } from './server/host-identity';
import { ListenError, startServer, type RunningServer } from './server/ws-server';

export interface BrowserModeOptions {
  readonly db: string;
  readonly host?: string;
  readonly port?: number;
  /** Start the built-in test site and, when the database has no crawls yet, create a demo crawl of it. */
  readonly demo?: boolean;
  /** Open the URL in an installed browser (chromium, xdg-open, open). */
  readonly open?: boolean;
  /** Crawls started from the console are shared crawls in this Redis (issue 18). */
  readonly redis?: string;
  readonly log: (line: string) => void;
}

/** Fixed port of the demo site, so a demo crawl created in an earlier run still reaches it. */
export const DEMO_PORT = 47321;

/** The built renderer: dist/renderer beside this bundle, or under the repository root. */
export function rendererDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'renderer'), join(here, '..', 'dist', 'renderer'), join(here, '..', '..', 'dist', 'renderer')]) {
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return join(here, 'renderer');
}

/**
 * Starts a scenario on a fixed port, or, when that port is taken (a second Slotscope on another
 * data folder runs its demo too) or not permitted, on a free one, saying so in one line.
 */
export async function startOnFixedPort(scenario: Scenario, port: number, log: (line: string) => void, what = 'the demo site'): Promise<TestSite> {
  try {
    return await startTestSite({ ...scenario, port }, { loopbackFallback: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw e;
    const site = await startTestSite({ ...scenario, port: 0 }, { loopbackFallback: true });
    const used = [...new Set(Object.values(site.ports))].join(', ');
    log(`${what}: port ${port} is ${code === 'EADDRINUSE' ? 'in use (another Slotscope?)' : 'not permitted'}, so it listens on port ${used} for this run; ` +
      `a demo crawl created in an earlier run still points at port ${port}: duplicate it after stopping the other program, or create a new one`);
    return site;
  }
}

/** Starts the built-in test site on DEMO_PORT (or a free port when that one is taken) and, when the database has no crawls yet, creates a demo crawl of it (browser mode and the Electron host). */
export async function startDemo(core: Core, log: (line: string) => void): Promise<TestSite> {
  const site = await startOnFixedPort(demoScenario(), DEMO_PORT, log);
  const list = await core.dispatch('crawls.list', {});
  if (list.ok && (list.result as unknown[]).length === 0) {
    const preset = PRESETS.find((p) => p.id === 'many-sites')!;
    const created = await core.dispatch('crawls.create', {
      config: {
        name: 'Demo: built-in test site',
        seeds: Object.keys(site.hosts).map((h) => `${site.origin(h)}/`),
        follow: { scope: 'host', max_pages: 200 },
        settings: { ...preset.settings, AUTOTHROTTLE_START_DELAY: 0.5, AUTOTHROTTLE_DEBUG: true },
        resolve: site.resolve,
      },
    });
    if (created.ok) log('created the demo crawl of the built-in test site: press Start');
  }
  return site;
}

/** Tries the browsers a desktop may have; prints the URL either way. */
function openBrowser(url: string, log: (line: string) => void): void {
  const candidates = process.platform === 'darwin' ? [['open', url]]
    : process.platform === 'win32' ? [['cmd', '/c', 'start', '', url]]
      : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? [['xdg-open', url], ['chromium', `--app=${url}`]] : [];
  const tryNext = (i: number): void => {
    if (i >= candidates.length) return;
    const [cmd, ...args] = candidates[i];
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    child.on('error', () => tryNext(i + 1));
    child.unref();
  };
  tryNext(0);
  if (candidates.length === 0) log('no desktop browser to open here: open the URL above in a browser');
}

/**
 * The browser host with the token and port kept in the database's folder (host-identity.ts): a
 * restart on the same data folder serves the same address, so open tabs reconnect by themselves.
 * Without --port the last run's port is taken again when it is free, else any free port.
 */
async function startIdentified(o: BrowserModeOptions, staticDir: string, core: Core): Promise<RunningServer> {
  const dataDir = dirname(o.db);
  const identity = loadHostIdentity(dataDir);
  const start = (port: number | undefined) => startServer({ dispatcher: core, host: o.host, port, staticDir, log: o.log, token: identity.token });
  let server: RunningServer;
  if (!o.port && identity.port !== null) {
    try {
      server = await start(identity.port);
    } catch (e) {
      if (!(e instanceof ListenError) || !e.portFault) throw e;
      o.log(`port ${identity.port} of the last run is taken; tabs opened then must open the new address below`);
      server = await start(0);
    }
  } else {
    server = await start(o.port);
  }
  if (server.port !== identity.port) saveHostIdentity(dataDir, { token: identity.token, port: server.port });
  return server;
}

/** Runs until SIGINT/SIGTERM; then pauses running crawls, flushes the history and stops. */
export async function runBrowserMode(o: BrowserModeOptions): Promise<void> {
  mkdirSync(dirname(o.db), { recursive: true });
  const core = await createCore({ db: o.db, redis: o.redis, log: o.log });
  let site: TestSite | null = null;
  let server: RunningServer;
  try {
    site = o.demo ? await startDemo(core, o.log) : null;
    const staticDir = rendererDir();
    if (!existsSync(join(staticDir, 'index.html'))) o.log('the renderer is not built: run `npm run build`');
    server = await startIdentified(o, staticDir, core);
  } catch (e) {
    // Nothing may outlive a failed start: the database lock is released and the process can exit.
    await site?.close().catch(() => undefined);
    await core.close().catch(() => undefined);
    throw e;
  }
  o.log(`Slotscope is running: ${server.url}`);
  o.log(`history: ${o.db}`);
  if (o.redis) o.log(`crawls started here are shared crawls in Redis at ${shownUrl(o.redis)}; workers join with: slotscope worker --redis URL`);
  process.stdout.write(`${JSON.stringify({ ready: true, url: server.url, db: o.db })}\n`);
  if (o.open) openBrowser(server.url, o.log);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  o.log('stopping: running crawls are paused and their history saved');
  await server.close();
  await core.close();
  await site?.close();
}
