// Issue 6's history figures: (a) sustained recording through the real history writer and worker at
// 100,000 samples/s with the posting thread's event-loop lag; (b) on a 10,000,000-sample database,
// one slot's hour downsampled to ≤ 2,000 points and the slot table's summary of 10,000 slots.
//
// Knobs: BENCH_HISTORY_PARTS (`record,query`), BENCH_HISTORY_RATE (samples/s offered, 110000),
// BENCH_HISTORY_SECONDS (15), BENCH_HISTORY_SAMPLES (10000000; the database is cached under
// .tmp/bench-history/, keyed by schema version and generator version, so reruns skip generating).

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SeriesAggregator } from '../../electron/core/store/aggregates';
import { openDatabase } from '../../electron/core/store/database';
import { openHistoryWriter } from '../../electron/core/store/history-writer';
import { LATEST_SCHEMA_VERSION } from '../../electron/core/store/migrate';
import { openHistoryReader } from '../../electron/core/store/queries';
import type { ResponseRecord } from '../../shared/types';
import { detail, figure, fmt, median, percentile, sleep } from './lib/report';
import { mulberry32 as rng } from '../../electron/core/testsite/random';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const parts = (process.env.BENCH_HISTORY_PARTS ?? 'record,query').split(',');


/** Log-normal latency around `median` seconds with 1 % spikes. */
function latency(r: () => number, med: number): number {
  if (r() < 0.01) return med * (10 + 20 * r());
  const n = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  return med * Math.exp(0.5 * n);
}

function status(r: () => number): number {
  const u = r();
  return u < 0.93 ? 200 : u < 0.96 ? 404 : u < 0.98 ? 429 : 503;
}

// ------------------------------------------------------------------------- (a) sustained recording

/** CPU seconds (user + system) of each thread of this process, by thread id (Linux /proc). */
function threadCpu(): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) / 100);
    }
  } catch {
    /* not Linux: no per-thread figures */
  }
  return out;
}

async function record(): Promise<void> {
  // Offered a tenth above the target: a writer that keeps up commits at the offered rate.
  const RATE = Number(process.env.BENCH_HISTORY_RATE ?? 110_000);
  const WARMUP_MS = 3000;
  const SECONDS = Number(process.env.BENCH_HISTORY_SECONDS ?? 15);
  const SLOTS = 1000;
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-bench-history-'));
  try {
    const writer = await openHistoryWriter(join(dir, 'record.sqlite'));
    const crawlId = await writer.createCrawl('bench', {}, {});
    const r = rng(1);
    // The engine already holds its URL and slot strings: a pool stands in for them.
    const slots = Array.from({ length: SLOTS }, (_, i) => `s${i}.test`);
    const urls = Array.from({ length: 10_000 }, (_, i) => `https://s${i % SLOTS}.test/page/${i}?q=${i}`);
    const rec: { -readonly [K in keyof ResponseRecord]: ResponseRecord[K] } = {
      t: 0, startedAt: 0, waitMs: 1.5, slot: '', url: '', method: 'GET', status: 200, latency: 0, downloadTime: 0.002, bytes: 0,
      inFlight: 1, delayBefore: 0.25, delayAfter: 0.25, delayCause: 'autothrottle', backoffLevel: 0, reused: true, errorKind: null,
      errorMessage: null, depth: 2, contentType: 'text/html; charset=utf-8',
    };
    const lag = monitorEventLoopDelay({ resolution: 1 });
    let posted = 0;
    let maxBacklog = 0;
    /** Samples committed (posted minus in the worker's queue, give or take one unsent batch) at the warm-up's end. */
    let committedAtWarmup = -1;
    let warmupAt = 0;
    let committedAtEnd = 0;
    let endAt = 0;
    const cpuBefore = threadCpu();
    const start = performance.now();
    const end = start + SECONDS * 1000;
    lag.enable();
    await new Promise<void>((done) => {
      const tick = () => {
        const now = performance.now();
        // Post what the offered rate asks for by now (at most 5 ms worth per turn: responses arrive spread out).
        const due = Math.min(Math.floor(((Math.min(now, end) - start) / 1000) * RATE), posted + RATE / 200);
        const wall = Date.now();
        for (; posted < due; posted++) {
          const i = posted;
          rec.t = wall + (i % 97) / 100;
          rec.startedAt = rec.t - 40;
          rec.slot = slots[i % SLOTS];
          rec.url = urls[i % urls.length];
          rec.latency = latency(r, 0.03 + (i % 7) / 100);
          rec.status = status(r);
          rec.bytes = 1000 + (i % 4000);
          rec.inFlight = 1 + (i % 8);
          rec.delayAfter = 0.2 + (i % 13) / 10;
          writer.recordResponse(crawlId, rec);
        }
        const backlog = writer.backlog;
        if (backlog > maxBacklog) maxBacklog = backlog;
        if (committedAtWarmup < 0 && now - start >= WARMUP_MS) {
          committedAtWarmup = posted - backlog;
          warmupAt = now;
        }
        if (now >= end) {
          committedAtEnd = posted - backlog;
          endAt = now;
          done();
        }
        else setTimeout(tick, 1);
      };
      tick();
    });
    lag.disable();
    const postedAt = performance.now();
    await writer.flush();
    const committedAt = performance.now();
    const cpuAfter = threadCpu();
    await writer.close();
    let mainCpu = 0;
    let otherCpu = 0;
    for (const [tid, after] of cpuAfter) {
      const used = after - (cpuBefore.get(tid) ?? 0);
      if (tid === process.pid) mainCpu += used;
      else otherCpu += used;
    }
    const postingS = (postedAt - start) / 1000;
    // Steady state: what the worker committed per second between the warm-up's end and the last post.
    const committedRate = (committedAtEnd - committedAtWarmup) / ((endAt - warmupAt) / 1000);
    const overall = posted / ((committedAt - start) / 1000);
    const drainMs = committedAt - postedAt;
    const p99 = lag.percentile(99) / 1e6;
    figure('history recording (a): sustained', `${fmt(committedRate)} samples/s committed through the writer and its worker ` +
      `in steady state (${fmt(RATE)}/s offered for ${SECONDS} s over 1,000 slots, counted after ${WARMUP_MS / 1000} s; ` +
      `ratio to target ${fmt(committedRate / 100_000, 2)})`, committedRate, 100_000);
    detail(`${fmt(posted)} samples posted in ${fmt(postingS, 2)} s, all committed ${fmt(drainMs)} ms after the last one ` +
      `(${fmt(overall)} samples/s start to finish); largest backlog ${fmt(maxBacklog)} records (${fmt((maxBacklog / RATE) * 1000)} ms of samples)`);
    if (cpuAfter.size > 0) {
      detail(`CPU: posting thread ${fmt((mainCpu / posted) * 1e6, 2)} µs per sample; writer worker side (the worker and the process's ` +
        `helper threads) ${fmt((otherCpu / posted) * 1e6, 2)} µs per sample, i.e. ${fmt(posted / otherCpu)} samples per CPU-second ` +
        `(the rate one free core sustains; the machine's load decides the wall-clock figure above)`);
    }
    figure('history recording (a): posting thread event-loop lag p99', `${fmt(p99, 2)} ms (max ${fmt(lag.max / 1e6, 1)} ms, ` +
      `mean ${fmt(lag.mean / 1e6, 2)} ms; ratio to target ${fmt(p99 / 10, 2)})`, p99, 10, { atMost: true, unit: ' ms' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ (b) queries on 10M samples

/** Bumped when the generated data changes, so a cached database from an older generator is not reused. */
const GENERATOR = 2;
const HEAVY = 10;
const LIGHT = 9990;
const HOURS = 10;

/** The 10M-sample database: cached under .tmp/bench-history/ by schema and generator version. */
function database(samples: number): { file: string; crawlId: number; t0: number } {
  const dir = join(ROOT, '.tmp', 'bench-history');
  mkdirSync(dir, { recursive: true });
  const name = `history-${samples}-schema${LATEST_SCHEMA_VERSION}-gen${GENERATOR}`;
  const file = join(dir, `${name}.sqlite`);
  const t0 = Date.UTC(2026, 10, 22, 0, 0, 0);
  if (existsSync(`${file}.done`)) return { file, crawlId: 1, t0 };
  // Anything else here is from an older schema or generator, or an interrupted run.
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { force: true });
  const started = performance.now();
  const db = openDatabase(file);
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  db.prepare(`INSERT INTO crawls (id, name, config_json, settings_json, status, created_at, started_at, finished_at)
    VALUES (1, 'bench 10M', '{}', '{}', 'finished', ?, ?, ?)`).run(t0, t0, t0 + HOURS * 3_600_000);
  const slotIds: number[] = [];
  const insertSlot = db.prepare(`INSERT INTO slots (crawl_id, key) VALUES (1, ?)`);
  db.transaction(() => {
    for (let i = 0; i < HEAVY + LIGHT; i++) slotIds.push(Number(insertSlot.run(i < HEAVY ? `heavy${i}.test` : `light${i}.test`).lastInsertRowid));
  })();
  // Bulk load without the two secondary indexes, then build them (the same definitions).
  const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'responses' AND sql IS NOT NULL`).all() as { name: string; sql: string }[];
  for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
  const insert = db.prepare(
    `INSERT INTO responses (id, crawl_id, slot_id, t, started_at, wait_ms, url, method, status, latency, download_time, bytes, in_flight,
       delay_before, delay_after, delay_cause, backoff_level, reused, error_kind, error_message, depth, content_type)
     VALUES (?, 1, ?, ?, ?, 2, ?, 'GET', ?, ?, 0.002, ?, ?, ?, ?, 'autothrottle', 0, 1, NULL, NULL, 1, 'text/html')`,
  );
  const agg = new SeriesAggregator(db);
  // slot_stats as the worker keeps it.
  const n = slotIds.length;
  const st = {
    requests: new Float64Array(n), s2xx: new Float64Array(n), s4xx: new Float64Array(n), s5xx: new Float64Array(n),
    s429: new Float64Array(n), latSum: new Float64Array(n), lastLat: new Float64Array(n), lastT: new Float64Array(n),
    lastDelay: new Float64Array(n), bytes: new Float64Array(n),
  };
  const statusCount = new Map<number, number>();
  const r = rng(42);
  const heavyPerSecond = (samples / 2) / HEAVY / (HOURS * 3600);
  const lightPerSlot = Math.round(samples / 2 / LIGHT);
  const lightWindow = lightPerSlot; // one response a second while a light slot is crawled
  const lightStart = Array.from({ length: LIGHT }, (_, j) => Math.floor((j / LIGHT) * (HOURS * 3600 - lightWindow)));
  const byStart = Array.from({ length: LIGHT }, (_, j) => j).sort((a, b) => lightStart[a] - lightStart[b]);
  let nextLight = 0;
  const active: number[] = [];
  let id = 0;
  const batch: [number, number][] = []; // [t, slot index]
  const delay = new Float64Array(n).fill(1);
  let tx = 0;
  db.exec('BEGIN');
  for (let sec = 0; sec < HOURS * 3600 && id < samples; sec++) {
    batch.length = 0;
    for (let h = 0; h < HEAVY; h++) {
      const k = Math.floor(heavyPerSecond) + (r() < heavyPerSecond % 1 ? 1 : 0);
      for (let q = 0; q < k; q++) batch.push([t0 + sec * 1000 + r() * 1000, h]);
    }
    while (nextLight < LIGHT && lightStart[byStart[nextLight]] <= sec) active.push(byStart[nextLight++]);
    for (let a = active.length - 1; a >= 0; a--) {
      const j = active[a];
      if (sec >= lightStart[j] + lightWindow) active.splice(a, 1);
      else batch.push([t0 + sec * 1000 + r() * 1000, HEAVY + j]);
    }
    batch.sort((x, y) => x[0] - y[0]);
    for (const [t, s] of batch) {
      if (id >= samples) break;
      id++;
      const lat = latency(r, s < HEAVY ? 0.05 + s / 100 : 0.2);
      const code = status(r);
      const before = delay[s];
      delay[s] = Math.max(lat / 2, (before + lat / 2) / 2);
      const bytes = 500 + Math.floor(r() * 20_000);
      const inFlight = 1 + Math.floor(r() * 8);
      insert.run(id, slotIds[s], t, t - lat * 1000 - 2, `https://s${s}.test/p/${id}`, code, lat, bytes, inFlight, before, delay[s]);
      agg.add(1, slotIds[s], t, code, lat, false, delay[s], bytes, inFlight);
      agg.coverUpTo(id);
      st.requests[s]++;
      if (code === 200) st.s2xx[s]++;
      else if (code < 500) st.s4xx[s]++;
      else st.s5xx[s]++;
      if (code === 429) st.s429[s]++;
      st.latSum[s] += lat;
      st.lastLat[s] = lat;
      st.lastT[s] = t;
      st.lastDelay[s] = delay[s];
      st.bytes[s] += bytes;
      statusCount.set(code, (statusCount.get(code) ?? 0) + 1);
      if (++tx === 200_000) {
        agg.write();
        db.exec('COMMIT');
        db.exec('BEGIN');
        tx = 0;
        if (id % 1_000_000 < 200_000) process.stdout.write(`    generating: ${fmt(id)} samples, ${fmt((performance.now() - started) / 1000)} s\n`);
      }
    }
  }
  agg.write();
  const putStats = db.prepare(`INSERT INTO slot_stats (crawl_id, slot_id, requests, responses, s2xx, s3xx, s4xx, s5xx, s429, failures,
    latency_sum, latency_n, last_latency, last_latency_t, last_delay, last_t, bytes) VALUES (1, ?, ?, ?, ?, 0, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`);
  for (let s = 0; s < n; s++) {
    if (st.requests[s] === 0) continue;
    putStats.run(slotIds[s], st.requests[s], st.requests[s], st.s2xx[s], st.s4xx[s], st.s5xx[s], st.s429[s], st.latSum[s], st.requests[s],
      st.lastLat[s], st.lastT[s], st.lastDelay[s], st.lastT[s], st.bytes[s]);
  }
  const putStatus = db.prepare(`INSERT INTO status_counts (crawl_id, status, n) VALUES (1, ?, ?)`);
  for (const [code, k] of statusCount) putStatus.run(code, k);
  db.exec('COMMIT');
  for (const ix of indexes) db.exec(ix.sql);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  db.close();
  writeFileSync(`${file}.done`, `${id} samples\n`);
  detail(`generated ${fmt(id)} samples in ${fmt((performance.now() - started) / 1000)} s (${fmt(statSync(file).size / 1e9, 2)} GB), cached as ${file}`);
  return { file, crawlId: 1, t0 };
}

/** Runs `fn` once cold and `warm` more times; times in ms. */
function timeIt<T>(fn: () => T, warm = 20): { cold: number; median: number; max: number; result: T } {
  let t = performance.now();
  const result = fn();
  const cold = performance.now() - t;
  const times: number[] = [];
  for (let i = 0; i < warm; i++) {
    t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return { cold, median: median(times), max: Math.max(...times), result };
}

async function query(): Promise<void> {
  const samples = Number(process.env.BENCH_HISTORY_SAMPLES ?? 10_000_000);
  const { file, crawlId, t0 } = database(samples);
  const reader = openHistoryReader(file);
  try {
    const from = t0 + 3 * 3_600_000;
    const to = from + 3_600_000;
    const hour = timeIt(() => reader.history(crawlId, { slot: 'heavy0.test', from, to, maxPoints: 2000 }));
    const points = hour.result;
    const inHour = points.reduce((k, p) => k + p.requests, 0);
    figure('history query (b): one slot’s hour, downsampled', `${fmt(hour.median, 1)} ms median (cold ${fmt(hour.cold, 1)} ms, max ${fmt(hour.max, 1)} ms) ` +
      `for ${fmt(points.length)} points of ${fmt(points[0]?.span ?? 0)} ms from ${fmt(inHour)} responses, ${fmt(samples)}-sample database; ` +
      `ratio to target ${fmt(hour.median / 50, 2)}`, hour.median, 50, { atMost: true, unit: ' ms' });
    const table = timeIt(() => reader.slotSummaries(crawlId), 10);
    figure('history query (b): slot table summary', `${fmt(table.median, 1)} ms median (cold ${fmt(table.cold, 1)} ms, max ${fmt(table.max, 1)} ms) ` +
      `for ${fmt(table.result.length)} slots; ratio to target ${fmt(table.median / 100, 2)}`, table.median, 100, { atMost: true, unit: ' ms' });
    // For the charts: the same hour as a latency scatter, and whole-crawl views.
    const scatter = timeIt(() => reader.scatter(crawlId, { slot: 'heavy0.test', from, to, maxPoints: 2000 }), 10);
    detail(`scatter of that hour (${fmt(inHour)} responses → ${fmt(scatter.result.length)} points): ${fmt(scatter.median, 1)} ms median, cold ${fmt(scatter.cold, 1)} ms`);
    const all = timeIt(() => reader.history(crawlId, { maxPoints: 2000 }), 5);
    detail(`whole crawl, all ${HOURS} h (${fmt(all.result.length)} points of ${fmt(all.result[0]?.span ?? 0)} ms): ${fmt(all.median, 1)} ms median, cold ${fmt(all.cold, 1)} ms`);
    const slotAll = timeIt(() => reader.history(crawlId, { slot: 'heavy0.test', maxPoints: 2000 }), 5);
    detail(`one slot, all ${HOURS} h (${fmt(slotAll.result.length)} points): ${fmt(slotAll.median, 1)} ms median, cold ${fmt(slotAll.cold, 1)} ms`);
    const light = timeIt(() => reader.history(crawlId, { slot: 'light5000.test' }), 10);
    detail(`a light slot's whole history (${fmt(light.result.length)} points): ${fmt(light.median, 1)} ms median`);
  } finally {
    reader.close();
  }
}

if (parts.includes('record')) await record();
await sleep(100);
if (parts.includes('query')) await query();
