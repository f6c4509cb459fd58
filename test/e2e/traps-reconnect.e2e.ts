// Issue 16, traps: a restarted host must not strand an open tab. While the host is gone the page
// says so, its controls are off and ELAPSED stops; `slotscope serve` restarted on the same data
// folder takes the tab back (same address, same token); a host with another token is named with
// the exact address to open. Runs the real CLI (dist/cli.js serve) twice.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Page } from 'playwright-core';
import { WebSocket } from 'ws';
import { startTestSite } from '../../electron/core/testsite';
import { connect } from '../../renderer/src/transport/ws-client';
import { assertNoPageErrors, openPage, ROOT, runTests, sleep, test, textOf, waitFor, waitForText, type TestContext } from './harness';

const HOST = '127.0.94.31';
const SITE = { 'restart.test': { address: '127.0.94.32', pages: 400, latency_ms: 5 } };

interface Serve {
  readonly child: ChildProcess;
  readonly url: string;
  /** Sends SIGTERM and waits for the exit (running crawls are paused and saved). */
  stop(): Promise<void>;
}

/** `slotscope serve --db FILE --host HOST [--port N]`, resolved once it printed its ready line. */
async function serve(t: TestContext, db: string, port?: number): Promise<Serve> {
  const args = [join(ROOT, 'dist', 'cli.js'), 'serve', '--db', db, '--host', HOST, ...(port === undefined ? [] : ['--port', String(port)])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => void (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not print its ready line in 20 s; stderr: ${stderr}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const j = JSON.parse(line) as { ready?: boolean; url?: string };
        if (j.ready && j.url) {
          clearTimeout(timer);
          resolve(j.url);
        }
      } catch {
        /* not the ready line */
      }
    });
  });
  return {
    child,
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Creates and starts a crawl of the test site through the host's WebSocket, as another client would. */
async function startCrawl(url: string, config: unknown): Promise<number> {
  const u = new URL(url);
  const client = connect(`ws://${u.host}/ws?token=${u.searchParams.get('token')}`, { WebSocketImpl: WebSocket as never });
  try {
    const { crawl } = await client.invoke('crawls.create', { config });
    await client.invoke('crawls.start', { id: crawl.id });
    return crawl.id;
  } finally {
    client.close();
  }
}

const commands = ['Pause', 'Stop', 'Duplicate', 'New crawl'];
async function enabledCommands(page: Page): Promise<string[]> {
  const on: string[] = [];
  for (const name of commands) {
    const b = page.getByRole('button', { name, exact: true });
    if ((await b.count()) > 0 && !(await b.first().isDisabled())) on.push(name);
  }
  return on;
}

test('a host restarted on the same data folder takes the open tab back; while it is gone the page says so and its controls are off', async (t) => {
  const dir = t.tmpDir();
  const db = join(dir, 'history.sqlite');
  const site = await startTestSite({ hosts: SITE });
  t.defer(() => site.close());
  const first = await serve(t, db);
  const port = Number(new URL(first.url).port);
  await startCrawl(first.url, {
    name: 'e2e restart me', seeds: [`${site.origin('restart.test')}/`], resolve: site.resolve,
    settings: { DOWNLOAD_DELAY: 0.2, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
  });
  const p = await openPage(t, first.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(async () => (await enabledCommands(page)).includes('Pause'), 'Pause enabled while connected', 5000);

  await first.stop();
  const notice = page.getByTestId('connection-lost');
  await notice.waitFor({ timeout: 10_000 });
  assert.match((await textOf(notice)) ?? '', /not connected|disconnected|lost/i);
  await waitFor(async () => (await enabledCommands(page)).length === 0, 'every command off while disconnected', 5000, () => enabledCommands(page));
  const elapsed = await textOf(page.getByTestId('stat-elapsed'));
  await sleep(2600);
  assert.equal(await textOf(page.getByTestId('stat-elapsed')), elapsed, 'ELAPSED does not count while the host is gone');

  // The same command again: same data folder, so the same token (kept owner-only) and the same port.
  const second = await serve(t, db);
  assert.equal(new URL(second.url).port, String(port), 'the restarted host listens where the tab looks for it');
  assert.equal(new URL(second.url).searchParams.get('token'), new URL(first.url).searchParams.get('token'), 'the token survives the restart');
  const files = ['browser-host.json'].map((f) => join(dir, f));
  for (const f of files) assert.equal(statSync(f).mode & 0o777, 0o600, `${f} is readable by its owner only`);
  await waitFor(async () => (await page.getByTestId('connection').getAttribute('data-state')) === 'open', 'the tab to reconnect by itself', 20_000);
  await notice.waitFor({ state: 'detached', timeout: 5000 });
  // The host paused the crawl when it stopped; the tab sees that and can resume it.
  await waitForText(page.getByTestId('crawl-status'), 'paused', 10_000);
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running', 10_000);
  await second.stop();
  // Only the host's absence may show up as failed requests in the page.
  p.errors.splice(0, p.errors.length, ...p.errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket|HTTP 401/.test(e)));
  assertNoPageErrors(p);
}, { timeoutMs: 120_000 });

test('a host restarted with another token: the tab says exactly which address to open', async (t) => {
  const dirA = t.tmpDir();
  const dirB = t.tmpDir();
  const first = await serve(t, join(dirA, 'history.sqlite'));
  const port = Number(new URL(first.url).port);
  const p = await openPage(t, first.url);
  const { page } = p;
  await waitFor(async () => (await page.getByTestId('connection').getAttribute('data-state')) === 'open', 'connected', 10_000);
  await first.stop();
  // Another data folder on the same address: another token.
  const other = await serve(t, join(dirB, 'history.sqlite'), port);
  assert.notEqual(new URL(other.url).searchParams.get('token'), new URL(first.url).searchParams.get('token'));
  const notice = page.getByTestId('connection-lost');
  await waitFor(async () => ((await textOf(notice)) ?? '').includes(`http://${HOST}:${port}/?token=`), 'the address to open, named', 20_000,
    () => textOf(notice));
  assert.match((await textOf(notice)) ?? '', /token/i);
  assert.deepEqual(await enabledCommands(page), [], 'controls stay off while the host refuses the page');
  await other.stop();
}, { timeoutMs: 120_000 });

await runTests('traps-reconnect.e2e.ts');
