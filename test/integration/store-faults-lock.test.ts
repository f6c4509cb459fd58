// Another program holding the database's write lock (a child process in BEGIN IMMEDIATE for 7 s)
// in the middle of `slotscope crawl --quiet`: the crawl pauses, says so on stderr, resumes, loses nothing.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { arrivals, CLI, defer, ensureBuilt, freshDir, ROOT, site, sleep, waitFor } from './helpers';

// Loopback addresses of this file: 127.0.91.10–127.0.91.19.

beforeAll(ensureBuilt, 120_000);

function rows<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const conn = new Sqlite(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(sql).all(...params) as T[];
  } finally {
    conn.close();
  }
}

/** A child process that takes the write lock of `db` (BEGIN IMMEDIATE), holds it `ms`, then commits and exits. */
function holdLock(db: string, ms: number) {
  const script = `
    const Sqlite = require('better-sqlite3');
    const db = new Sqlite(${JSON.stringify(db)}, { timeout: 10000 });
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
    db.exec('COMMIT');
    db.close();
    process.stdout.write('released\\n');
  `;
  const proc = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  defer(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  return { proc, out: () => out, err: () => err };
}

describe('another program holding the write lock mid-crawl', () => {
  it('slotscope crawl --quiet pauses with a line on stderr, resumes when the lock is released, and records every response', async () => {
    const s = await site({
      seed: 93,
      hosts: {
        'lock-a.test': { address: '127.0.91.10', pages: 250, latency_ms: 3 },
        'lock-b.test': { address: '127.0.91.11', pages: 250, latency_ms: 3 },
      },
    });
    const dir = freshDir('slotscope-lock-');
    const db = join(dir, 'history.sqlite');
    const config = join(dir, 'crawl.json');
    writeFileSync(config, JSON.stringify({
      name: 'locked db',
      seeds: [`${s.origin('lock-a.test')}/`, `${s.origin('lock-b.test')}/`],
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0.03, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false },
      resolve: s.resolve,
    }));
    const proc = spawn(process.execPath, [CLI, 'crawl', '--config', config, '--db', db, '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
    defer(() => {
      if (proc.exitCode === null) proc.kill('SIGKILL');
    });

    await waitFor(() => arrivals(s).length >= 60, '60 arrivals', 20_000);
    const lock = holdLock(db, 7000);
    await waitFor(() => lock.out().includes('locked') || lock.proc.exitCode !== null, 'the lock', 10_000);
    if (!lock.out().includes('locked')) throw new Error(`the lock holder failed: ${lock.err()}`);
    const lockedAt = Date.now();
    const arrivalsAtLock = arrivals(s).length;
    // The writer waits 5 s for the lock (busy_timeout), then the crawl must pause and say so.
    const saidPaused = await waitFor(() => /locked/i.test(stderr) && /paus/i.test(stderr), 'a pause line on stderr', 9_000).then(() => Date.now() - lockedAt, () => -1);
    let pausedArrivals = -1;
    if (saidPaused >= 0) {
      await sleep(200);
      const n = arrivals(s).length;
      await waitFor(() => lock.out().includes('released'), 'the lock to be released', 10_000);
      pausedArrivals = arrivals(s).length - n;
    }
    await waitFor(() => lock.out().includes('released'), 'the lock to be released', 15_000);
    const code = await Promise.race([exited, sleep(40_000).then(() => 'timeout' as const)]);
    const stored = rows<{ url: string }>(db, 'SELECT url FROM responses WHERE crawl_id = 1');
    const notDone = rows<{ n: number }>(db, 'SELECT count(*) AS n FROM frontier WHERE crawl_id = 1 AND state != 2')[0].n;
    const frontier = rows<{ n: number }>(db, 'SELECT count(*) AS n FROM frontier WHERE crawl_id = 1')[0].n;
    const status = rows<{ status: string }>(db, 'SELECT status FROM crawls WHERE id = 1')[0].status;
    const served = arrivals(s);
    const pages = new Set(served.filter((e) => e.path !== '/robots.txt').map((e) => `${e.host}${e.path}`));
    console.log(`locked db: ${arrivalsAtLock} arrivals at the lock; pause line after ${saidPaused} ms, ${pausedArrivals} arrivals while paused; exit ${code}; ` +
      `${stored.length} rows for ${served.length} arrivals; frontier ${frontier} rows for ${pages.size} pages, ${notDone} not done; status ${status}\nstderr: ${stderr}`);

    expect(saidPaused).toBeGreaterThanOrEqual(0);
    expect(pausedArrivals).toBe(0);
    expect(stderr).toContain(db);
    expect(stderr).toMatch(/resum/i);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(code).toBe(0);
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toMatchObject({ crawl_id: 1 });
    expect(stored.length).toBe(served.length);
    expect(frontier).toBe(pages.size);
    expect(notDone).toBe(0);
    expect(status).toBe('finished');
  }, 90_000);
});
