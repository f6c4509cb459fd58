// Export of 1,000,000 responses: a database built through the store's schema (direct inserts in one
// transaction), then each format exported by a child process whose RSS is sampled every 50 ms.
// Knobs: BENCH_EXPORT_ROWS (1,000,000), BENCH_EXPORT_FORMATS (jsonl,csv,har,scrapy-debug).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../electron/core/store/database';
import { exportToFile, type ExportFormat } from '../../electron/core/store/export/index';
import { detail, figure, fmt } from './lib/report';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const FORMATS = (process.env.BENCH_EXPORT_FORMATS ?? 'jsonl,csv,har,scrapy-debug').split(',') as ExportFormat[];
const SLOTS = 200;

/** Child mode: `export.mjs child <db> <format> <out>` runs one export and prints its result as JSON. */
async function child(db: string, format: ExportFormat, out: string): Promise<void> {
  const started = performance.now();
  const r = await exportToFile(db, { crawlId: 1, format }, out);
  process.stdout.write(`${JSON.stringify({ ...r, ms: performance.now() - started })}\n`);
}

/** One crawl of ROWS responses over SLOTS slots, inserted in one transaction (the schema of every migration). */
function build(file: string): number {
  const started = performance.now();
  const db = openDatabase(file);
  const t0 = 1_795_000_000_000;
  db.transaction(() => {
    db.prepare(`INSERT INTO crawls (id, name, config_json, settings_json, status, created_at, started_at, finished_at)
      VALUES (1, 'export bench', '{}', '{}', 'finished', ?, ?, ?)`).run(t0, t0, t0 + ROWS * 3.6);
    const slot = db.prepare(`INSERT INTO slots (id, crawl_id, key) VALUES (?, 1, ?)`);
    for (let s = 1; s <= SLOTS; s++) slot.run(s, `host-${s}.example.com`);
    const insert = db.prepare(
      `INSERT INTO responses (crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time, bytes,
         in_flight, delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message, depth, content_type)
       VALUES (1, ?, ?, ?, ?, ?, 'GET', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (let i = 0; i < ROWS; i++) {
      const s = (i % SLOTS) + 1;
      const t = t0 + i * 3.6 + 0.123;
      const failed = i % 997 === 0;
      const latency = 0.05 + ((i * 7919) % 1000) / 4000;
      const status = failed ? null : i % 53 === 0 ? 503 : i % 31 === 0 ? 404 : 200;
      insert.run(
        s, t, t - latency * 1000 - 20, (i % 17) * 12.5, `https://host-${s}.example.com/catalog/item/${i}?ref=bench&page=${i % 50}`,
        status, failed ? null : latency, failed ? null : 0.0123, failed ? 0 : 10_000 + (i % 5000), 1 + (i % 4),
        0.5 + (i % 10) / 100, 0.5 + ((i + 1) % 10) / 100, 'autothrottle', status === 503 ? 1 : 0, i % 3 === 0 ? 0 : 1,
        failed ? 'timeout' : null, failed ? 'no response within 30 s' : null, i % 6, failed ? null : 'text/html; charset=utf-8',
      );
    }
  })();
  db.close();
  return performance.now() - started;
}

/** Runs one export in a child and samples its RSS from /proc every 50 ms (and reads its peak, VmHWM). */
async function measure(script: string, db: string, format: ExportFormat, out: string) {
  const c = spawn(process.execPath, [script, 'child', db, format, out], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  let sampled = 0;
  let hwm = 0;
  const read = () => {
    try {
      const status = readFileSync(`/proc/${c.pid}/status`, 'utf8');
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      hwm = Math.max(hwm, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024);
      sampled = Math.max(sampled, rss);
    } catch {
      /* the child has exited */
    }
  };
  const timer = setInterval(read, 50);
  const started = performance.now();
  const code = await new Promise<number | null>((resolve) => c.once('close', resolve));
  const wallMs = performance.now() - started;
  clearInterval(timer);
  if (code !== 0) throw new Error(`export child (${format}) exited with ${code}`);
  const r = JSON.parse(stdout.trim()) as { rows: number; bytes: number; ms: number };
  return { ...r, wallMs, sampled, hwm };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-export-bench-'));
  try {
    const db = join(dir, 'history.sqlite');
    const buildMs = build(db);
    detail(`built ${fmt(ROWS)} responses over ${SLOTS} slots in ${fmt(buildMs / 1000, 1)} s (direct inserts, one transaction); database ${fmt(statSync(db).size / 1e6, 0)} MB`);
    const script = process.argv[1];
    for (const format of FORMATS) {
      const out = join(dir, `out.${format}`);
      const m = await measure(script, db, format, out);
      const seconds = m.ms / 1000;
      const mbRss = m.hwm / 1e6;
      const rate = `${fmt(m.rows)} ${format === 'scrapy-debug' ? 'lines' : 'records'}, ${fmt(m.bytes / 1e6, 0)} MB, ${fmt(m.rows / seconds)} rows/s`;
      if (format === 'jsonl') {
        figure(`export ${fmt(ROWS)} responses to JSONL, seconds`, `${fmt(seconds, 2)} s (${rate})`, seconds, 15, { atMost: true, unit: ' s' });
        figure('export to JSONL, peak RSS', `${fmt(mbRss, 1)} MB (VmHWM; largest 50 ms sample ${fmt(m.sampled / 1e6, 1)} MB)`, mbRss, 150, { atMost: true, unit: ' MB' });
      } else {
        console.log(`export to ${format} (for information): ${fmt(seconds, 2)} s, peak RSS ${fmt(mbRss, 1)} MB (largest 50 ms sample ${fmt(m.sampled / 1e6, 1)} MB); ${rate}`);
      }
      rmSync(out, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') await child(process.argv[3], process.argv[4] as ExportFormat, process.argv[5]);
else await main();
