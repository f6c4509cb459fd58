// `slotscope crawl --resume` on a damaged, empty or read-only history (issue 15): refused with one
// line that names the file, the fault and what to do, exit 1, no stack trace, and the file left exactly as it was.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCrawl } from '../../electron/core/crawl-runner';
import { CLI, crawlConfig, defer, ensureBuilt, freshDir, ROOT, site } from './helpers';

// Loopback addresses of this file: 127.0.91.20–127.0.91.29.

beforeAll(ensureBuilt, 120_000);

async function cliRun(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  defer(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((r) => proc.on('close', (c) => r(c)));
  return { code, stdout, stderr };
}

function snapshot(file: string): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) out[f] = existsSync(f) ? readFileSync(f).toString('base64') : null;
  return out;
}

/** A paused crawl of a few hundred pages in `db` (Ctrl-C's way: the signal aborts it). */
async function pausedCrawl(db: string, address: string): Promise<void> {
  const s = await site({ seed: 94, hosts: { 'damaged.test': { address, pages: 2000, latency_ms: 1, page_bytes: 3000 } } });
  const ac = new AbortController();
  const { stats } = await runCrawl({
    config: crawlConfig({ name: 'to damage', seeds: [`${s.origin('damaged.test')}/`], settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 4, AUTOTHROTTLE_ENABLED: false }, resolve: s.resolve }),
    db,
    signal: ac.signal,
    progressEvery: 0,
    onStart: (c) => {
      const t = setInterval(() => {
        if (c.stats().responses >= 600) {
          clearInterval(t);
          ac.abort();
        }
      }, 5);
    },
  });
  expect(stats.status).toBe('paused');
}

describe('crawl --resume on a history it must not touch', () => {
  it('a file truncated mid-page (its last page cut short, a crawl killed mid-way): refused as damaged, with what to do, and not modified', async () => {
    const db = join(freshDir(), 'history.sqlite');
    await pausedCrawl(db, '127.0.91.20');
    // As if the process had been killed mid-crawl: the crawl is still 'running' in the file.
    const conn = new Sqlite(db);
    conn.exec(`UPDATE crawls SET status = 'running'`);
    conn.pragma('wal_checkpoint(TRUNCATE)');
    conn.close();
    const size = statSync(db).size;
    truncateSync(db, size - 3000);
    const before = snapshot(db);
    const r = await cliRun(['crawl', '--db', db, '--resume', '1', '--quiet']);
    const after = snapshot(db);
    const changed = Object.keys(before).filter((f) => before[f] !== after[f]);
    console.log(`truncated resume: exit ${r.code}; files changed: ${JSON.stringify(changed)}; stderr: ${r.stderr}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(db);
    expect(r.stderr).toMatch(/is corrupt: the file is damaged/);
    expect(r.stderr).toMatch(/\.recover/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(changed).toEqual([]);
  }, 60_000);

  it('a 0-byte file: refused, not made into a new history', async () => {
    const db = join(freshDir(), 'empty.sqlite');
    writeFileSync(db, '');
    const config = join(freshDir(), 'c.json');
    writeFileSync(config, JSON.stringify({ name: 'x', seeds: ['http://127.0.91.21:9/'] }));
    const r = await cliRun(['crawl', '--config', config, '--db', db, '--quiet']);
    console.log(`0-byte crawl: exit ${r.code}; size after ${statSync(db).size}; stderr: ${r.stderr}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is empty \\(0 bytes\\)`));
    expect(statSync(db).size).toBe(0);
  }, 60_000);

  it('a read-only filesystem: named as read-only, not as corrupt', async ({ skip }) => {
    const dir = freshDir('slotscope-ro-');
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir], { encoding: 'utf8' });
    if (m.status !== 0) return skip(`mount -t tmpfs refused (${m.stderr.trim()}): this test needs root`);
    defer(() => spawnSync('umount', ['-l', dir]));
    const db = join(dir, 'history.sqlite');
    await pausedCrawl(db, '127.0.91.22');
    const ro = spawnSync('mount', ['-o', 'remount,ro', dir], { encoding: 'utf8' });
    if (ro.status !== 0) throw new Error(`remount,ro failed: ${ro.stderr}`);
    const before = snapshot(db);
    const r = await cliRun(['crawl', '--db', db, '--resume', '1', '--quiet']);
    console.log(`read-only resume: exit ${r.code}; stderr: ${r.stderr}`);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(db);
    expect(r.stderr).toMatch(/read-only/);
    expect(r.stderr).not.toMatch(/corrupt|damaged|not a Slotscope/i);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(db)).toEqual(before);
  }, 60_000);
});
