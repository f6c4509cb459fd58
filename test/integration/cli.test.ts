// The built CLI (dist/cli.js) as a user runs it: crawl prints one JSON summary line, bad input
// exits 2 naming the problem, testsite serves and logs until SIGTERM, replay runs the vectors.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { openHistoryReader } from '../../electron/core/store/queries';
import { arrivals, CLI, defer, ensureBuilt, freshDir, ROOT, site, waitFor } from './helpers';

// Loopback addresses of this file: 127.0.17.x.

beforeAll(ensureBuilt, 120_000);

interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI asynchronously (the test site in this process must keep answering). */
function cli(args: string[], timeoutMs = 30_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`slotscope ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const VECTORS = process.env.SLOTSCOPE_VECTORS ?? join(ROOT, 'test', 'fixtures', 'conformance', 'autothrottle-vectors.json');

describe('slotscope crawl', () => {
  it('prints one JSON summary line that matches the site log and the database', async () => {
    const s = await site({
      hosts: {
        'one.test': { address: '127.0.17.1', pages: 12, statuses: { '404': 0.25 } },
        'two.test': { address: '127.0.17.2', pages: 6 },
      },
      seed: 5,
    });
    const dir = freshDir();
    const config = join(dir, 'crawl.json');
    const seeds = join(dir, 'seeds.txt');
    const db = join(dir, 'out', 'history.sqlite');
    writeFileSync(config, JSON.stringify({ name: 'cli crawl', seeds: [`${s.origin('one.test')}/`], settings: { DOWNLOAD_DELAY: 0 }, resolve: s.resolve }));
    writeFileSync(seeds, `${s.origin('two.test')}/\nnot a url\n`);
    const r = await cli(['crawl', '--config', config, '--db', db, '--seeds', seeds]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines, r.stdout).toHaveLength(1);
    const summary = JSON.parse(lines[0]);
    expect(Object.keys(summary).sort()).toEqual(['by_status', 'crawl_id', 'failures', 'requests', 'responses', 'seconds', 'slots']);
    expect(r.stderr).toMatch(/line 2\b.*not a url/);

    // Against the site's own log.
    const log = arrivals(s);
    expect(summary.requests).toBe(log.length);
    expect(summary.responses).toBe(log.length);
    expect(summary.failures).toBe(0);
    const byStatus: Record<string, number> = {};
    for (const e of log) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
    expect(summary.by_status).toEqual(byStatus);
    expect(summary.by_status['404']).toBeGreaterThan(0);
    expect(summary.slots).toBe(2);
    expect(summary.seconds).toBeGreaterThan(0);
    expect(summary.seconds).toBeLessThan(30);

    // Against the database it wrote.
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const stored = reader.crawlSummary(summary.crawl_id);
    expect({ ...stored, seconds: 0 }).toEqual({ ...summary, seconds: 0 });
    expect(reader.getCrawl(summary.crawl_id)).toMatchObject({ name: 'cli crawl', status: 'finished' });
  });

  it('refuses an invalid config with exit 2, naming the setting, the value and the allowed range', async () => {
    const dir = freshDir();
    const config = join(dir, 'bad.json');
    writeFileSync(
      config,
      JSON.stringify({ seeds: ['http://127.0.17.9:1/'], follow: { scope: 'planet' }, settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 0, DOWNLOAD_DELAY: '-1.5' } }),
    );
    const db = join(dir, 'never.sqlite');
    const r = await cli(['crawl', '--config', config, '--db', db]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const line = (name: string) => r.stderr.split('\n').find((l) => l.includes(name)) ?? '';
    expect(line('CONCURRENT_REQUESTS_PER_DOMAIN')).toMatch(/CONCURRENT_REQUESTS_PER_DOMAIN.*\b0\b.*>= 1/);
    expect(line('DOWNLOAD_DELAY')).toMatch(/DOWNLOAD_DELAY.*-1\.5.*>= 0/);
    expect(line('follow.scope')).toMatch(/follow\.scope.*planet.*host.*domain.*any.*none/);
  });
});

describe('slotscope testsite', () => {
  it('prints ready with its hosts, serves and logs requests, and exits 0 on SIGTERM', async () => {
    const dir = freshDir();
    const scenario = join(dir, 'site.json');
    const logFile = join(dir, 'requests.jsonl');
    writeFileSync(scenario, JSON.stringify({ hosts: { 'cli-site.test': { address: '127.0.17.20', pages: 5, latency_ms: 5 } } }));
    const child = spawn(process.execPath, [CLI, 'testsite', '--config', scenario, '--log', logFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    defer(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => stdout.includes('\n'), `the ready line (stderr: ${stderr})`, 10_000);
    const ready = JSON.parse(stdout.split('\n')[0]);
    expect(ready.ready).toBe(true);
    expect(Object.keys(ready.hosts)).toEqual(['cli-site.test']);
    const base: string = ready.hosts['cli-site.test'];
    expect(new URL(base).hostname).toBe('127.0.17.20');

    const paths = ['/', '/page/1', '/robots.txt', '/page/99'];
    const statuses: number[] = [];
    for (const p of paths) {
      const res = await request(`${base}${p}`);
      await res.body.arrayBuffer();
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 404, 404]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    const entries = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(entries).toHaveLength(paths.length);
    for (const [i, e] of entries.entries()) {
      expect(Object.keys(e).sort()).toEqual(['host', 'in_flight', 'path', 'status', 't']);
      expect(e).toMatchObject({ host: 'cli-site.test', path: paths[i], in_flight: 1, status: statuses[i] });
      expect(typeof e.t).toBe('number');
      if (i > 0) expect(e.t).toBeGreaterThan(entries[i - 1].t);
    }
  });
});

describe('slotscope replay', () => {
  it('passes every recorded AutoThrottle case', async () => {
    const cases = JSON.parse(readFileSync(VECTORS, 'utf8')).cases as unknown[];
    expect(cases.length).toBeGreaterThan(0);
    const r = await cli(['replay', '--vectors', VECTORS]);
    expect(r.stdout).not.toMatch(/^FAIL/m);
    expect(r.stdout.trimEnd().split('\n').pop()).toBe(`${cases.length} passed, 0 failed`);
    expect(r.code).toBe(0);
  });

  it('fails a case whose expected delay was altered, naming it, with exit 1', async () => {
    const file = JSON.parse(readFileSync(VECTORS, 'utf8')) as { cases: { name: string; expected_delays: (number | null)[] }[] };
    const victim = file.cases.find((c) => c.expected_delays.some((d) => typeof d === 'number'))!;
    const i = victim.expected_delays.findIndex((d) => typeof d === 'number');
    victim.expected_delays[i] = (victim.expected_delays[i] as number) + 0.25;
    const altered = join(freshDir(), 'altered-vectors.json');
    writeFileSync(altered, JSON.stringify(file));
    const r = await cli(['replay', '--vectors', altered]);
    expect(r.code).toBe(1);
    const fails = r.stdout.split('\n').filter((l) => l.startsWith('FAIL'));
    expect(fails).toHaveLength(1);
    expect(fails[0]).toMatch(new RegExp(`^FAIL ${victim.name}\\b`));
    expect(r.stdout.trimEnd().split('\n').pop()).toBe(`${file.cases.length - 1} passed, 1 failed`);
  });
});
