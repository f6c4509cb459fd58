// Issue 15, "Bad input refused whole, with a named error", as a user meets it on the command line:
// exit 2 with a message (never a stack), --help on every command, standard input with `-`, and a
// `serve` that cannot bind exits naming the address and leaves the database to the next process.

// Loopback addresses of this file: 127.0.93.10–29.

import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startOnFixedPort } from '../../electron/browser-mode';
import { openHistoryReader } from '../../electron/core/store/queries';
import { parseScenario } from '../../electron/core/testsite/scenario';
import { CLI, defer, ensureBuilt, freshDir, linkHub, ROOT, waitFor } from './helpers';

beforeAll(ensureBuilt, 180_000);

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs the CLI; `stdin` is written to its standard input (closed either way). */
function cli(args: string[], o: { stdin?: string; timeoutMs?: number } = {}): Promise<Ran> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, DISPLAY: '', WAYLAND_DISPLAY: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.stdin ?? '');
    const timeoutMs = o.timeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`slotscope ${args.join(' ').slice(0, 200)} did not exit within ${timeoutMs} ms\nstdout: ${stdout.slice(0, 2000)}\nstderr: ${stderr.slice(0, 2000)}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

const DEBUG_LINE = '2026-11-22 10:00:00 [scrapy.extensions.throttle] INFO: slot: a.test | conc: 1 | delay: 1500 ms (-500) | latency:  120 ms | size:  2000 bytes';

describe('a JSON document nested 200,000 levels deep', () => {
  it.each([
    ['in a field', `{"seeds": ["http://a.test/"], "follow": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`],
    ['in an unknown field', `{"seeds": ["http://a.test/"], "x": ${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}}`],
    ['as the whole document', `${'['.repeat(200_000)}${']'.repeat(200_000)}`],
  ])('%s: exit 2 with a message, not a RangeError', async (_what, text) => {
    const dir = freshDir();
    const config = join(dir, 'deep.json');
    writeFileSync(config, text);
    const r = await cli(['crawl', '--config', config, '--db', join(dir, 'never.sqlite')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(/RangeError|Maximum call stack|\n\s+at /);
    expect(r.stderr).toMatch(/nested/);
    expect(r.stderr.length).toBeLessThan(2000);
  });
});

describe('flags', () => {
  it.each([
    ['crawl', ['crawl', '--config', 'c.json', '--db', 'd.sqlite', '--quiet=yes']],
    ['demo', ['demo', '--quiet=no']],
    ['serve', ['serve', '--demo=false']],
  ])('%s: a switch given a value is refused', async (_cmd, args) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    const flag = args.at(-1)!.split('=')[0];
    expect(r.stderr).toContain(`${flag} takes no value`);
  });

  it.each([['0x50'], [''], [' '], ['1e3'], ['80.0']])('serve --port %j is refused', async (port) => {
    const r = await cli(['serve', '--port', port, '--db', join(freshDir(), 'never.sqlite')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--port: ${JSON.stringify(port)} is not allowed`);
  });

  it.each([['0x1'], [''], ['1.0']])('crawl --resume %j is refused', async (id) => {
    const r = await cli(['crawl', '--db', join(freshDir(), 'never.sqlite'), '--resume', id]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--resume: ${JSON.stringify(id)} is not allowed`);
  });

  it.each([
    ['crawl', 'slotscope crawl --config'],
    ['testsite', 'slotscope testsite --config'],
    ['replay', 'slotscope replay --vectors'],
    ['demo', 'slotscope demo'],
    ['serve', 'slotscope serve'],
    ['start', 'slotscope start'],
    ['export', 'slotscope export --db'],
    ['import', 'slotscope import --scrapy-log'],
  ])('%s --help exits 0 with that command\'s help', async (cmd, usage) => {
    for (const help of ['--help', '-h']) {
      const r = await cli([cmd, help], { timeoutMs: 10_000 });
      expect(r.code, `${cmd} ${help}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(usage);
      expect(r.stderr).toBe('');
    }
    // Also after other flags, and before a missing value.
    const late = await cli([cmd, '--db', 'x.sqlite', '--help'], { timeoutMs: 10_000 });
    expect(late.code).toBe(0);
    expect(late.stdout).toContain(usage);
  });
});

describe('seed files with many bad lines', () => {
  it('no valid seed in 100,000 bad lines: exit 2 with a short message (counts, the first ten lines)', async () => {
    const dir = freshDir();
    const seeds = join(dir, 'seeds.txt');
    writeFileSync(seeds, Array.from({ length: 100_000 }, (_, i) => `bad seed ${i + 1}`).join('\n'));
    const config = join(dir, 'c.json');
    writeFileSync(config, '{"settings": {"DOWNLOAD_DELAY": 0}}');
    const r = await cli(['crawl', '--config', config, '--seeds', seeds, '--db', join(dir, 'never.sqlite')]);
    expect(r.code).toBe(2);
    expect(r.stderr.length, r.stderr.slice(0, 3000)).toBeLessThan(3000);
    expect(r.stderr).toMatch(/100,000 bad lines/);
    expect(r.stderr).toContain('seeds file line 10:');
    expect(r.stderr).not.toContain('seeds file line 11:');
  });

  it('a valid seed among 100,000 bad lines: the crawl runs, and the skipped lines are summed up', async () => {
    const hub = await linkHub('127.0.93.10', { '/': '<html>ok</html>' });
    const dir = freshDir();
    const seeds = join(dir, 'seeds.txt');
    const bad = Array.from({ length: 100_000 }, (_, i) => `bad seed ${i + 1}`);
    writeFileSync(seeds, [`http://127.0.93.10:${hub.port}/`, ...bad].join('\n'));
    const config = join(dir, 'c.json');
    writeFileSync(config, '{"settings": {"DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": false}}');
    const r = await cli(['crawl', '--config', config, '--seeds', seeds, '--db', join(dir, 'h.sqlite'), '--quiet']);
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stderr.length).toBeLessThan(3000);
    expect(r.stderr).toMatch(/and 99,990 more/);
    expect(JSON.parse(r.stdout.trim()).responses).toBe(1);
  });
});

describe('standard input', () => {
  it('crawl --config - reads the config from standard input', async () => {
    const hub = await linkHub('127.0.93.11', { '/': '<html>stdin</html>' });
    const dir = freshDir();
    const db = join(dir, 'h.sqlite');
    const config = { name: 'from stdin', seeds: [`http://127.0.93.11:${hub.port}/`], settings: { DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false } };
    const r = await cli(['crawl', '--config', '-', '--db', db, '--quiet'], { stdin: JSON.stringify(config) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim()).responses).toBe(1);
    expect(hub.served).toEqual(['/']);
    const bad = await cli(['crawl', '--config', '-', '--db', db], { stdin: '{"seeds": ' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/crawl config \(standard input\) is not valid JSON/);
  });

  it('import --scrapy-log - reads the log from standard input', async () => {
    const dir = freshDir();
    const db = join(dir, 'h.sqlite');
    const r = await cli(['import', '--scrapy-log', '-', '--db', db, '--tz', 'UTC', '--quiet'], { stdin: `noise\n${DEBUG_LINE}\n${DEBUG_LINE}\n` });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim());
    expect(out).toMatchObject({ debug_lines: 2, lines: 3, slots: 1 });
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(reader.getCrawl(out.crawl_id)).toMatchObject({ status: 'finished' });
  });
});

async function occupy(host: string): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, host, r));
  defer(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as { port: number }).port, server };
}

/** Starts `slotscope serve …` and resolves with its ready line; stopped when the test ends. */
async function serveReady(args: string[]): Promise<{ url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DISPLAY: '', WAYLAND_DISPLAY: '' } });
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  defer(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await waitFor(() => stdout.includes('\n') || child.exitCode !== null, `serve ready (stderr: ${stderr})`, 20_000);
  expect(stdout, stderr).toContain('"ready":true');
  return JSON.parse(stdout.split('\n')[0]);
}

describe('serve that cannot bind', () => {
  it('a busy port: exits naming the address and the port, and the next process can open the database', async () => {
    const { port } = await occupy('127.0.93.20');
    const dir = freshDir();
    const db = join(dir, 'h.sqlite');
    const r = await cli(['serve', '--host', '127.0.93.20', '--port', String(port), '--db', db], { timeoutMs: 15_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`127.0.93.20:${port}`);
    expect(r.stderr).toMatch(/in use/);
    expect(r.stderr).toMatch(/--port/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // The lock is released: another Slotscope opens the same database.
    const ready = await serveReady(['--host', '127.0.93.20', '--port', '0', '--db', db]);
    expect(ready.url).toMatch(/^http:\/\/127\.0\.93\.20:\d+\//);
  });

  it.each([['192.0.2.1'], ['no-such-host.invalid'], ['127.0.93.300']])('--host %s: exit 2 naming the host, nothing left running', async (host) => {
    const dir = freshDir();
    const db = join(dir, 'h.sqlite');
    const r = await cli(['serve', '--host', host, '--port', '0', '--db', db], { timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--host: ${JSON.stringify(host)}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const ready = await serveReady(['--host', '127.0.93.21', '--port', '0', '--db', db]);
    expect(ready.url).toContain('127.0.93.21');
  });
});

describe('a fixed port the app uses (the demo site\'s 47321)', () => {
  it('taken by another program: the site falls back to a free port and says so in one line', async () => {
    const { port } = await occupy('127.0.93.25');
    const logs: string[] = [];
    const scenario = parseScenario({ hosts: { 'demo.test': { address: '127.0.93.25', pages: 2 } } });
    const site = await startOnFixedPort(scenario, port, (l) => logs.push(l));
    defer(() => site.close());
    expect(site.ports['demo.test']).not.toBe(port);
    expect(logs).toHaveLength(1);
    expect(logs[0]).not.toContain('\n');
    expect(logs[0]).toContain(`port ${port} is in use`);
    const res = await request(`http://127.0.93.25:${site.ports['demo.test']}/`, { headers: { host: 'demo.test' } });
    await res.body.text();
    expect(res.statusCode).toBe(200);
  });

  it('free: the site takes it', async () => {
    const { port, server } = await occupy('127.0.93.26');
    await new Promise<void>((r) => server.close(() => r()));
    const logs: string[] = [];
    const site = await startOnFixedPort(parseScenario({ hosts: { 'demo.test': { address: '127.0.93.26', pages: 2 } } }), port, (l) => logs.push(l));
    defer(() => site.close());
    expect(site.ports['demo.test']).toBe(port);
    expect(logs).toEqual([]);
  });
});
