// Figures of the shared crawl (issue 18): politeness kept across processes (gaps on the wire and in
// the test site's log, in flight at the site, every page once), scale from one process to four, and
// the cost of going through Redis against the plain one-process crawl; each a ratio of one run.
//
// Knobs: BENCH_SHARED_PARTS (`politeness,scale,overhead`), BENCH_SHARED_PAGES (24 pages per host of
// the politeness part), BENCH_SHARED_HOSTS (240 hosts of the scale part), BENCH_SHARED_SCALE_PAGES (30),
// BENCH_SHARED_FAST_HOSTS (100 hosts of the overhead part), BENCH_SHARED_FAST_PAGES (60),
// BENCH_ROUNDS (overhead trials per side, 3), BENCH_SHARED_SCALE_ROUNDS (scale trials per side, 1), BENCH_SHARED_CLI_FLAGS (node
// flags of every CLI process, e.g. `--cpu-prof --cpu-prof-dir=DIR`), BENCH_SHARED_MONITOR=1 (a
// diagnostic: Redis MONITOR during the politeness crawl and the scale part's 4-process crawl, which it
// slows: the scripts on the slot of each short gap, and where a lease's time goes),
// BENCH_SHARED_CLI (the dist/cli.js every process runs, e.g. another checkout's, to try a patch).

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { LogEntry, ScenarioInput } from '../../electron/core/testsite';
import * as Scripts from '../../electron/core/cluster/scripts';
import { benchFile, startChild, type Child } from './lib/children';
import { startCapture, type WireRequest } from './lib/pcap';
import { detail, figure, fmt, median, percentile, sleep } from './lib/report';
import {
  CLI, cli, commandStats, configFile, freePort, hasRedis, infoNumber, startRedis, succeeded, summaryOf, type CliProc, type RedisServer,
} from './lib/shared-crawl';

const PARTS = (process.env.BENCH_SHARED_PARTS ?? 'politeness,scale,overhead').split(',').map((x) => x.trim());
const POLITE_PAGES = Number(process.env.BENCH_SHARED_PAGES ?? 24);
const SCALE_HOSTS = Math.min(480, Number(process.env.BENCH_SHARED_HOSTS ?? 240));
const SCALE_PAGES = Number(process.env.BENCH_SHARED_SCALE_PAGES ?? 30);
const FAST_HOSTS = Math.min(480, Number(process.env.BENCH_SHARED_FAST_HOSTS ?? 100));
const FAST_PAGES = Number(process.env.BENCH_SHARED_FAST_PAGES ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SCALE_ROUNDS = Number(process.env.BENCH_SHARED_SCALE_ROUNDS ?? 1);

const tmp = mkdtempSync(join(tmpdir(), 'slotscope-bench-shared-'));
const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
const canCapture = spawnSync('tcpdump', ['--version']).status === 0 && process.getuid?.() === 0;

/** This benchmark's loopback addresses: 127.0.105.0/24, then 127.0.106.0/24. */
function address(i: number): string {
  return `127.0.${105 + Math.floor(i / 240)}.${10 + (i % 240)}`;
}
const REDIS_ADDRESS = '127.0.105.1';

// ------------------------------------------------------------------------------------- the site

interface Site {
  readonly child: Child;
  readonly logFile: string;
  readonly ports: Record<string, number>;
  readonly resolve: Record<string, string>;
  /** Epoch ms of the log's time 0. */
  readonly t0Epoch: number;
  origin(host: string): string;
  /** Closes the site and reads its log. */
  finish(): Promise<LogEntry[]>;
  cpu(): Promise<number>;
}

async function startSite(tag: string, scenario: ScenarioInput, realtime = false): Promise<Site> {
  const scenarioFile = join(tmp, `${tag}-scenario.json`);
  const logFile = join(tmp, `${tag}-log.jsonl`);
  writeFileSync(scenarioFile, JSON.stringify(scenario));
  const child = await startChild(benchFile('./lib/testsite.child.mjs'), [scenarioFile, logFile]);
  if (realtime) siteRealtime ??= chrt(child.proc.pid!);
  const ports = child.ready.ports as Record<string, number>;
  return {
    child, logFile, ports, resolve: child.ready.resolve as Record<string, string>, t0Epoch: child.ready.t0Epoch as number,
    origin: (h) => `http://${h}:${ports[h]}`,
    finish: async () => {
      await child.call({ type: 'close' });
      await child.stop();
      const text = readFileSync(logFile, 'utf8').trim();
      return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as LogEntry);
    },
    cpu: async () => {
      const u = await child.call<{ cpu: NodeJS.CpuUsage }>({ type: 'usage' });
      return (u.cpu.user + u.cpu.system) / 1e6;
    },
  };
}

/** The site is the instrument of the politeness part: real-time priority where the kernel allows it (see timing.bench). */
let siteRealtime: string | undefined;
function chrt(pid: number): string {
  const r = spawnSync('chrt', ['--fifo', '--all-tasks', '--pid', '10', String(pid)], { encoding: 'utf8' });
  return r.status === 0 ? 'the test site ran at SCHED_FIFO 10 (chrt)' : `the test site ran at normal priority (chrt refused: ${(r.stderr || '').trim()})`;
}

const pages = (log: readonly LogEntry[]) => log.filter((e) => e.path !== '/robots.txt');

/** Pages per second at the site: pages over the span from the first arrival to the last. */
function siteRate(log: readonly LogEntry[]): { pages: number; span: number; rate: number; steady: number } {
  const ts = pages(log).map((e) => e.t).sort((a, b) => a - b);
  const span = (ts[ts.length - 1]! - ts[0]!) / 1000;
  // The middle 80 % of the pages: no start-up, no tail.
  const a = ts[Math.floor(ts.length * 0.1)]!;
  const b = ts[Math.floor(ts.length * 0.9)]!;
  return { pages: ts.length, span, rate: (ts.length - 1) / span, steady: (Math.floor(ts.length * 0.9) - Math.floor(ts.length * 0.1)) / ((b - a) / 1000) };
}

function gapsOf(ts: number[]): number[] {
  ts.sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = 1; i < ts.length; i++) out.push(ts[i]! - ts[i - 1]!);
  return out;
}

function groupWire(rows: readonly WireRequest[]): Map<string, WireRequest[]> {
  const m = new Map<string, WireRequest[]>();
  for (const r of rows) {
    let xs = m.get(r.host);
    if (!xs) m.set(r.host, (xs = []));
    xs.push(r);
  }
  for (const xs of m.values()) xs.sort((a, b) => a.t - b.t);
  return m;
}

function byHost<T extends { host: string; t: number }>(rows: readonly T[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const r of rows) {
    let ts = m.get(r.host);
    if (!ts) m.set(r.host, (ts = []));
    ts.push(r.t);
  }
  return m;
}

// --------------------------------------------------------------------------- one shared crawl

const SETTINGS_BASE = { AUTOTHROTTLE_ENABLED: false, RANDOMIZE_DOWNLOAD_DELAY: false } as const;

interface SharedRun {
  readonly recorder: CliProc;
  readonly workers: CliProc[];
  readonly db: string;
  readonly summary: ReturnType<typeof summaryOf>;
  /** Redis command stats over the run (calls per command). */
  readonly commands: Map<string, { calls: number; usec: number }>;
  readonly redisCpu: number;
  readonly totalCommands: number;
  /** Bytes Redis read from its clients, and its append-only file's size, at the end. */
  readonly netIn: number;
  readonly aof: number;
  /** Samples of the records stream every 50 ms: backlog (XLEN) and the age of its oldest entry (ms). */
  readonly stream: { t: number; len: number; age: number; queued: number; leases: number }[];
  /** Redis TIME of the last XADD to the stream, and the recorder's exit (epoch ms). */
  readonly lastXadd: number;
  readonly wall: number;
}

async function sharedCrawl(tag: string, redis: RedisServer, config: unknown, nWorkers: number, recArgs: readonly string[] = []): Promise<SharedRun> {
  const file = configFile(tmp, tag, config);
  const db = join(tmp, `${tag}.sqlite`);
  const r = redis.client;
  await r.config('RESETSTAT');
  const cpu0 = (await infoNumber(r, 'cpu', 'used_cpu_user')) + (await infoNumber(r, 'cpu', 'used_cpu_sys'));
  const t0 = Date.now();
  const recorder = cli('recorder', ['crawl', '--config', file, '--db', db, '--redis', redis.url, '--name', 'rec', '--quiet', ...recArgs]);
  const workers = Array.from({ length: nWorkers }, (_, i) => cli(`w${i + 1}`, ['worker', '--redis', redis.url, '--name', `w${i + 1}`, '--quiet']));
  // The stream's backlog while it runs.
  const stream: SharedRun['stream'] = [];
  let prefix: string | null = null;
  let lastXadd = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      try {
        if (prefix === null) {
          const id = await r.get('ss:open');
          if (id !== null) prefix = `ss:c:{${id}}:`;
        }
        if (prefix !== null) {
          const res = await r.multi().time().xlen(`${prefix}rec`).xrange(`${prefix}rec`, '-', '+', 'COUNT', 1).hget(`${prefix}meta`, 'queued').hlen(`${prefix}leases`).exec();
          const [sec, usec] = res![0]![1] as [string, string];
          const now = Number(sec) * 1000 + Number(usec) / 1000;
          const len = res![1]![1] as number;
          const first = res![2]![1] as [string, string[]][];
          const age = first.length > 0 ? now - Number(first[0]![0].split('-')[0]) : 0;
          stream.push({ t: now, len, age, queued: Number(res![3]![1] ?? 0), leases: res![4]![1] as number });
          const info = (await r.call('XINFO', 'STREAM', `${prefix}rec`)) as unknown[];
          const last = String(info[info.indexOf('last-generated-id') + 1]);
          lastXadd = Number(last.split('-')[0]);
        }
      } catch {
        // the stream is not made yet, or it is gone
      }
      await sleep(50);
    }
  })();
  await succeeded(recorder);
  for (const w of workers) await succeeded(w);
  done = true;
  await sampler;
  const commands = await commandStats(r);
  const cpu1 = (await infoNumber(r, 'cpu', 'used_cpu_user')) + (await infoNumber(r, 'cpu', 'used_cpu_sys'));
  const totalCommands = await infoNumber(r, 'stats', 'total_commands_processed');
  const netIn = await infoNumber(r, 'stats', 'total_net_input_bytes');
  const aof = await infoNumber(r, 'persistence', 'aof_current_size');
  return {
    recorder, workers, db, summary: summaryOf(recorder), commands, redisCpu: cpu1 - cpu0, totalCommands, netIn, aof, stream, lastXadd,
    wall: (recorder.exitedAt - t0) / 1000,
  };
}

function describeCommands(run: SharedRun, responses: number): void {
  const rows = [...run.commands.entries()].sort((a, b) => b[1].calls - a[1].calls);
  const evals = (run.commands.get('evalsha')?.calls ?? 0) + (run.commands.get('eval')?.calls ?? 0);
  detail(`Redis commands per response: ${fmt(run.totalCommands / responses, 1)} (INFO stats total_commands_processed, the scripts' inner calls included), ` +
    `${fmt(evals / responses, 2)} script calls (EVALSHA), Redis CPU ${fmt((run.redisCpu / responses) * 1e6, 0)} µs per response (${fmt(run.redisCpu, 2)} s in all); ` +
    `Redis read ${fmt(run.netIn / responses / 1024, 1)} KB per response from its clients and its append-only file grew ${fmt(run.aof / responses / 1024, 1)} KB per response`);
  detail(`  by command (calls per response, µs per call): ${rows.slice(0, 16).map(([k, v]) => `${k} ${fmt(v.calls / responses, 2)} (${fmt(v.usec / v.calls, 1)})`).join(', ')}`);
}

function describeStream(run: SharedRun, rate: number): void {
  const s = run.stream;
  if (s.length === 0) {
    detail('recorder lag: no stream samples');
    return;
  }
  const ages = s.map((x) => x.age);
  const lens = s.map((x) => x.len);
  const endLag = run.recorder.exitedAt - run.lastXadd;
  detail(`recorder lag (age of the oldest record not yet committed, ${fmt(s.length)} samples every 50 ms): p50 ${fmt(percentile(ages, 50), 0)} ms, ` +
    `p99 ${fmt(percentile(ages, 99), 0)} ms, max ${fmt(Math.max(...ages), 0)} ms; backlog (XLEN) p50 ${fmt(percentile(lens, 50))}, max ${fmt(Math.max(...lens))} ` +
    `(${fmt(Math.max(...lens) / rate, 2)} s of responses); the recorder exited ${fmt(endLag, 0)} ms after the last record was streamed (its rows committed, the summary written)`);
}

/** Leases (requests reserved and not yet committed, all processes) and requests queued, while the crawl ran. */
function describeLeases(run: SharedRun, of: number): void {
  const s = run.stream.filter((x) => x.leases > 0 || x.queued > 0);
  if (s.length === 0) return;
  const leases = s.map((x) => x.leases);
  const starved = s.filter((x) => x.leases < of * 0.9 && x.queued > of).length;
  detail(`leases held (reserved, not yet committed; ${of} possible): mean ${fmt(leases.reduce((a, b) => a + b, 0) / leases.length, 1)}, p50 ${fmt(percentile(leases, 50))}; ` +
    `queued p50 ${fmt(percentile(s.map((x) => x.queued), 50))}; ${fmt((100 * starved) / s.length, 0)} % of samples under 90 % of the leases with more than ${of} requests queued`);
}

function cpuLine(run: SharedRun, siteCpu: number): string {
  return `CPU s: recorder ${fmt(run.recorder.cpu, 1)}${run.workers.length ? `, workers ${run.workers.map((w) => fmt(w.cpu, 1)).join(' / ')}` : ''}, ` +
    `redis ${fmt(run.redisCpu, 1)}, site ${fmt(siteCpu, 1)}, over ${fmt(run.wall, 1)} s wall (2 cores: ${fmt((run.recorder.cpu + run.workers.reduce((a, w) => a + w.cpu, 0) + run.redisCpu + siteCpu) / run.wall / 2 * 100, 0)} % of the machine)`;
}

// --------------------------------------------------------------------------------- politeness

async function politeness(): Promise<void> {
  console.log(`\n-- politeness: 4 processes (recorder + 3 workers), 20 hosts x ${POLITE_PAGES} pages, CONCURRENT_REQUESTS_PER_DOMAIN 2, DOWNLOAD_DELAY 0.3 s without randomization (load ${load()})`);
  const delayMs = 300;
  const hosts = Array.from({ length: 20 }, (_, i) => `p${i}.test`);
  const port = await freePort(address(0));
  // Latency 100 to 800 ms: a host often has a response out when its next start is due, so both
  // the gap and the concurrency of 2 are what hold requests back.
  const site = await startSite('polite', {
    port, seed: 18,
    hosts: Object.fromEntries(hosts.map((h, i) => [h, { address: address(i), pages: POLITE_PAGES, latency_ms: { base: 450, jitter: 350 } }])),
  }, true);
  const cap = canCapture ? await startCapture(port, join(tmp, 'polite.pcap'), '127.0.105.0/24') : { error: 'tcpdump needs root and the tcpdump binary' };
  const redis = await startRedis(REDIS_ADDRESS);
  const monitor = MONITOR ? startMonitor(redis, join(tmp, 'polite-monitor.txt')) : null;
  let run: SharedRun;
  try {
    run = await sharedCrawl('polite', redis, {
      name: 'polite', seeds: hosts.map((h) => `${site.origin(h)}/`), follow: { scope: 'host' }, resolve: site.resolve,
      settings: { ...SETTINGS_BASE, CONCURRENT_REQUESTS: 16, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: delayMs / 1000 },
    }, 3);
  } finally {
    await monitor?.stop();
    await redis.stop();
  }
  const wire: WireRequest[] | null = 'error' in cap ? null : await cap.stop();
  const log = await site.finish();
  detail(siteRealtime ?? '');
  // Gaps: every request of a host (robots.txt included: it goes through the slot too).
  const wireGaps = wire ? [...byHost(wire).values()].flatMap(gapsOf) : [];
  const logGaps = [...byHost(log).values()].flatMap(gapsOf);
  const limit = delayMs - 2;
  const describe = (g: number[]) => `${fmt(g.length)} gaps, min ${fmt(Math.min(...g), 2)} ms, p50 ${fmt(percentile(g, 50), 1)} ms, ${fmt(g.filter((x) => x < limit).length)} under ${limit} ms`;
  if (wire) {
    figure('shared politeness: smallest gap between starts of a host, on the wire (tcpdump)', describe(wireGaps), Math.min(...wireGaps), limit, { unit: ' ms' });
    detail(`${fmt(wire.length)} requests on the wire (${'error' in cap ? '' : cap.summary()})`);
    figure('shared politeness: smallest gap, the site\'s log', describe(logGaps), Math.min(...logGaps), limit, { unit: ' ms' });
  } else {
    detail(`no wire capture: ${'error' in cap ? cap.error : ''}`);
    figure('shared politeness: smallest gap between starts of a host, the site\'s log', describe(logGaps), Math.min(...logGaps), limit, { unit: ' ms' });
  }
  const maxIn = Math.max(...log.map((e) => e.in_flight));
  const inHist = [1, 2, 3, 4].map((n) => `${n}: ${fmt(log.filter((e) => e.in_flight === n).length)}`).join(', ');
  figure('shared politeness: most requests of one host in flight at the site', `${maxIn} (arrivals by in flight, theirs included: ${inHist})`, maxIn, 2, { atMost: true });
  // Every page once: at the site and in SQLite.
  let missing = 0;
  let repeated = 0;
  for (const h of hosts) {
    const counts = new Map<string, number>();
    for (const e of pages(log)) if (e.host === h) counts.set(e.path, (counts.get(e.path) ?? 0) + 1);
    missing += POLITE_PAGES - counts.size;
    for (const n of counts.values()) repeated += n - 1;
  }
  const sql = new Database(run.db, { readonly: true });
  const rows = sql.prepare('SELECT url, started_at FROM responses WHERE crawl_id = ?').all(run.summary.crawl_id) as { url: string; started_at: number }[];
  sql.close();
  // A page's start as Redis reserved it (its row's started_at, Redis's clock: the machine's) against its arrival on the wire.
  if (wire) {
    const reserved = new Map(rows.map((r) => { const u = new URL(r.url); return [`${u.hostname} ${u.pathname}`, r.started_at]; }));
    const late: number[] = [];
    for (const w of wire) {
      const at = reserved.get(`${w.host} ${w.path}`);
      if (at !== undefined) late.push(w.t - at);
    }
    detail(`reservation in Redis to the request on the wire: p50 ${fmt(percentile(late, 50), 2)} ms, p99 ${fmt(percentile(late, 99), 2)} ms, max ${fmt(Math.max(...late), 2)} ms (${fmt(late.length)} pages)`);
    for (const [h, reqs] of groupWire(wire)) {
      for (let i = 1; i < reqs.length; i++) {
        const a = reqs[i - 1]!;
        const b = reqs[i]!;
        if (b.t - a.t >= limit) continue;
        const ra = reserved.get(`${h} ${a.path}`);
        const rb = reserved.get(`${h} ${b.path}`);
        detail(`short gap at ${h}: ${a.path} then ${b.path}, ${fmt(b.t - a.t, 2)} ms apart on the wire; reserved ${ra === undefined || rb === undefined ? '?' : fmt(rb - ra, 2)} ms apart; ` +
          `on the wire ${ra === undefined ? '?' : fmt(a.t - ra, 2)} ms and ${rb === undefined ? '?' : fmt(b.t - rb, 2)} ms after their reservations`);
        if (monitor && ra !== undefined) monitor.explain(h, ra - 5, b.t + 2, a.t, b.t);
      }
    }
  }
  const dupRows = rows.length - new Set(rows.map((r) => r.url)).size;
  const expected = hosts.length * POLITE_PAGES;
  const bad = missing + repeated + Math.abs(rows.length - expected) + dupRows;
  figure('shared politeness: pages not fetched exactly once (site log and SQLite)',
    `${bad} (site: ${fmt(pages(log).length)} page requests for ${fmt(expected)} pages, ${missing} missing, ${repeated} repeated; SQLite: ${fmt(rows.length)} rows, ${dupRows} repeated URLs)`,
    bad, 0, { atMost: true });
  detail(`responses by process: ${Object.entries(run.summary.workers ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')}; requeued ${run.summary.requeued}; ${fmt(run.wall, 1)} s`);
}

// ------------------------------------------------------------- MONITOR (a diagnostic of short gaps)

const MONITOR = process.env.BENCH_SHARED_MONITOR === '1';

/** The scripts by the SHA-1 ioredis runs them by. */
const SCRIPT_BY_SHA = new Map(Object.entries({
  RESERVE: Scripts.RESERVE, STARTED: Scripts.STARTED, SENT: Scripts.SENT, LOCK: Scripts.LOCK, COMMIT: Scripts.COMMIT, ADD: Scripts.ADD,
  RECORD: Scripts.RECORD, SWEEP: Scripts.SWEEP, FINISH: Scripts.FINISH, HEARTBEAT: Scripts.HEARTBEAT,
}).map(([k, lua]) => [createHash('sha1').update(lua).digest('hex'), k]));

/**
 * `redis-cli monitor` into a file while the politeness crawl runs, and the client names from
 * CLIENT LIST; `explain` prints the scripts that touched one slot in a time window (Redis's clock).
 */
function startMonitor(redis: RedisServer, file: string) {
  const u = new URL(redis.url);
  const out = createWriteStream(file);
  const proc = spawn('redis-cli', ['-h', u.hostname, '-p', u.port, 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  proc.stdout!.pipe(out);
  const names = new Map<string, string>();
  const timer = setInterval(() => {
    void (redis.client.client('LIST') as Promise<string>).then((list) => {
      for (const line of list.split('\n')) {
        const addr = / addr=(\S+)/.exec(line)?.[1];
        const name = / name=(\S*)/.exec(line)?.[1];
        if (addr && name) names.set(addr, name.replace(/^slotscope_/, ''));
      }
    }).catch(() => undefined);
  }, 200);
  let lines: { t: number; who: string; script: string; args: string[] }[] | null = null;
  const read = () => {
    if (lines) return lines;
    lines = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (!m) continue;
      const args = [...m[3]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((x) => x[1]!);
      if (args[0]?.toLowerCase() !== 'evalsha') continue;
      lines.push({ t: Number(m[1]) * 1000, who: names.get(m[2]!) ?? m[2]!, script: SCRIPT_BY_SHA.get(args[1]!) ?? args[1]!.slice(0, 8), args: args.slice(4) });
    }
    return lines;
  };
  return {
    stop: async () => {
      clearInterval(timer);
      const gone = new Promise((r) => proc.once('close', r));
      proc.kill('SIGTERM');
      await gone;
      await new Promise((r) => out.end(r));
    },
    /** Where a lease's time goes: each page's reservation, committed start, arrival at the site, lock and commit. */
    phases: (log: readonly LogEntry[], t0Epoch: number, latencyMs: number) => {
      const arrival = new Map(log.map((e) => [`${e.host} ${e.path}`, t0Epoch + e.t]));
      const lastReserve = new Map<string, number>();
      const started = new Map<string, { t: number; reserved: number }>();
      const locks = new Map<string, number>();
      const rows: { a: number; b: number; d: number; e: number; total: number }[] = [];
      let nLock = 0;
      let nCommit = 0;
      let nReserve = 0;
      for (const l of read()) {
        if (l.script === 'RESERVE') {
          nReserve++;
          lastReserve.set(l.who, l.t);
        } else if (l.script === 'STARTED') started.set(l.args[1]!, { t: l.t, reserved: lastReserve.get(l.who) ?? NaN });
        else if (l.script === 'LOCK') {
          nLock++;
          locks.set(l.args[1]!, l.t);
        } else if (l.script === 'COMMIT') {
          nCommit++;
          const st = started.get(l.args[2]!);
          const lockT = locks.get(l.args[1]!);
          let url: string | undefined;
          try {
            url = (JSON.parse(l.args[7]!.replace(/\\"/g, '"').replace(/\\\\/g, '\\')) as { resp?: { url: string } }).resp?.url;
          } catch {
            url = undefined;
          }
          if (!st || lockT === undefined || !url) continue;
          const u = new URL(url);
          const at = arrival.get(`${u.hostname} ${u.pathname}`);
          if (at === undefined) continue;
          rows.push({ a: st.t - st.reserved, b: at - st.t, d: lockT - (at + latencyMs), e: l.t - lockT, total: l.t - st.reserved });
        }
      }
      const q = (xs: number[]) => `p50 ${fmt(percentile(xs, 50), 1)}, p90 ${fmt(percentile(xs, 90), 1)}, p99 ${fmt(percentile(xs, 99), 1)} ms`;
      detail(`Redis MONITOR: ${fmt(nReserve)} RESERVE, ${fmt(nLock)} LOCK for ${fmt(nCommit)} COMMIT; where a page's lease goes (${fmt(rows.length)} pages, its worker's latest RESERVE before its STARTED taken as its reservation):`);
      detail(`  RESERVE to STARTED (the start committed): ${q(rows.map((r) => r.a))}`);
      detail(`  STARTED to its arrival at the site: ${q(rows.map((r) => r.b))}`);
      detail(`  at the site: ${latencyMs} ms (its latency)`);
      detail(`  response to the LOCK that committed it: ${q(rows.map((r) => r.d))}`);
      detail(`  LOCK to COMMIT: ${q(rows.map((r) => r.e))}`);
      detail(`  whole lease: ${q(rows.map((r) => r.total))}`);
    },
    explain: (slot: string, from: number, to: number, wireA: number, wireB: number) => {
      detail(`  Redis MONITOR, scripts on slot ${slot} (ms after the first one's reservation; wire: first at ${fmt(wireA - from - 5, 2)}, second at ${fmt(wireB - from - 5, 2)}):`);
      for (const l of read()) {
        if (l.t < from || l.t > to || l.script === 'RESERVE' || l.args[0] !== slot) continue;
        const what = l.script === 'COMMIT' ? `lease ${l.args[2] || '-'} ready ${fmt(Number(l.args[4]) - from - 5, 2)}` :
          l.script === 'STARTED' ? `token ${l.args[1]} ready ${fmt(Number(l.args[3]) - from - 5, 2)}` :
          l.script === 'SENT' ? `gap ${l.args[1]}` : l.script === 'LOCK' ? `token ${l.args[1]}` : '';
        detail(`    ${fmt(l.t - from - 5, 2)} ${l.who} ${l.script} ${what}`);
      }
    },
  };
}

// --------------------------------------------------------------------------------------- scale

function scaleScenario(): ScenarioInput {
  return {
    port: 0, seed: 18,
    hosts: Object.fromEntries(Array.from({ length: SCALE_HOSTS }, (_, i) => [`s${i}.test`, { address: address(i), pages: SCALE_PAGES, latency_ms: 100 }])),
  };
}

interface Trial {
  readonly rate: ReturnType<typeof siteRate>;
  readonly run: SharedRun;
  readonly siteCpu: number;
}

async function scaleTrial(tag: string, nWorkers: number): Promise<Trial> {
  const site = await startSite(tag, scaleScenario());
  const redis = await startRedis(REDIS_ADDRESS);
  const monitor = MONITOR && nWorkers > 0 ? startMonitor(redis, join(tmp, `${tag}-monitor.txt`)) : null;
  let run: SharedRun;
  let siteCpu: number;
  try {
    const hosts = Object.keys(site.ports);
    run = await sharedCrawl(tag, redis, {
      name: tag, seeds: hosts.map((h) => `${site.origin(h)}/`), follow: { scope: 'host' }, resolve: site.resolve,
      settings: { ...SETTINGS_BASE, CONCURRENT_REQUESTS: 16, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0 },
    }, nWorkers);
    siteCpu = await site.cpu();
  } finally {
    await monitor?.stop();
    await redis.stop();
  }
  const log = await site.finish();
  monitor?.phases(log, site.t0Epoch, 100);
  return { rate: siteRate(log), run, siteCpu };
}

async function scale(): Promise<void> {
  console.log(`\n-- scale: ${SCALE_HOSTS} hosts x ${SCALE_PAGES} pages, 100 ms latency, each process at CONCURRENT_REQUESTS 16 (per host 2, DOWNLOAD_DELAY 0): ` +
    `4 processes against 1 (load ${load()})`);
  const ones: Trial[] = [];
  const fours: Trial[] = [];
  for (let round = 0; round < SCALE_ROUNDS; round++) {
    const order = round % 2 === 0 ? [1, 4] : [4, 1];
    for (const n of order) {
      const t = await scaleTrial(`scale${n}-${round}`, n - 1);
      (n === 1 ? ones : fours).push(t);
      const r = t.rate;
      detail(`${n} process${n > 1 ? 'es' : ''}: ${fmt(r.pages)} pages in ${fmt(r.span, 2)} s at the site: ${fmt(r.rate, 0)} pages/s (middle 80 %: ${fmt(r.steady, 0)}/s); ` +
        `${cpuLine(t.run, t.siteCpu)}; load ${load()}`);
      if (n > 1) detail(`  responses by process: ${Object.entries(t.run.summary.workers ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')}; requeued ${t.run.summary.requeued}`);
    }
  }
  const ratio = median(fours.map((f) => f.rate.rate)) / median(ones.map((o) => o.rate.rate));
  const steady = median(fours.map((f) => f.rate.steady)) / median(ones.map((o) => o.rate.steady));
  figure('shared scale: pages/s of 4 processes over 1 (site log, first to last page)',
    `${fmt(ratio, 2)}x (${fmt(median(fours.map((f) => f.rate.rate)), 0)} vs ${fmt(median(ones.map((o) => o.rate.rate)), 0)} pages/s; middle 80 %: ${fmt(steady, 2)}x; ceiling 64 vs 16 in flight at 100 ms: 640 vs 160/s, i.e. on average ${fmt(median(fours.map((f) => f.rate.rate)) * 0.1, 1)} of 64 and ${fmt(median(ones.map((o) => o.rate.rate)) * 0.1, 1)} of 16 in flight at the site; load ${load()})`,
    ratio, 3.2);
  const f = fours[fours.length - 1]!;
  const responses = f.run.summary.responses;
  describeCommands(f.run, responses);
  describeStream(f.run, f.rate.rate);
  describeLeases(f.run, 64);
  const o = ones[ones.length - 1]!;
  detail('one process:');
  describeCommands(o.run, o.run.summary.responses);
  describeStream(o.run, o.rate.rate);
  describeLeases(o.run, 16);
}

// ------------------------------------------------------------------------------------ overhead

async function overheadTrial(tag: string, side: 'plain' | 'redis'): Promise<{ rate: ReturnType<typeof siteRate>; wall: number; cpu: number; redisCpu: number; run?: SharedRun }> {
  const site = await startSite(tag, {
    port: 0, seed: 18,
    hosts: Object.fromEntries(Array.from({ length: FAST_HOSTS }, (_, i) => [`f${i}.test`, { address: address(i), pages: FAST_PAGES, latency_ms: 0 }])),
  });
  const hosts = Object.keys(site.ports);
  const config = {
    name: tag, seeds: hosts.map((h) => `${site.origin(h)}/`), follow: { scope: 'host' }, resolve: site.resolve,
    settings: { ...SETTINGS_BASE, CONCURRENT_REQUESTS: 16, CONCURRENT_REQUESTS_PER_DOMAIN: 2, DOWNLOAD_DELAY: 0 },
  };
  if (side === 'plain') {
    const file = configFile(tmp, tag, config);
    const t0 = Date.now();
    const p = cli('plain', ['crawl', '--config', file, '--db', join(tmp, `${tag}.sqlite`), '--quiet']);
    await succeeded(p);
    const log = await site.finish();
    return { rate: siteRate(log), wall: (p.exitedAt - t0) / 1000, cpu: p.cpu, redisCpu: 0 };
  }
  const redis = await startRedis(REDIS_ADDRESS);
  let run: SharedRun;
  try {
    run = await sharedCrawl(tag, redis, config, 0);
  } finally {
    await redis.stop();
  }
  const log = await site.finish();
  return { rate: siteRate(log), wall: run.wall, cpu: run.recorder.cpu, redisCpu: run.redisCpu, run };
}

async function overhead(): Promise<void> {
  console.log(`\n-- overhead: one process with --redis against the plain crawl, ${FAST_HOSTS} hosts x ${FAST_PAGES} pages at 0 latency, ` +
    `CONCURRENT_REQUESTS 16 (per host 2, DOWNLOAD_DELAY 0), ${ROUNDS} rounds, order alternating (load ${load()})`);
  const ratios: number[] = [];
  let last: SharedRun | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const order: ('plain' | 'redis')[] = round % 2 === 0 ? ['plain', 'redis'] : ['redis', 'plain'];
    const got: Record<string, Awaited<ReturnType<typeof overheadTrial>>> = {};
    for (const side of order) got[side] = await overheadTrial(`fast-${side}-${round}`, side);
    const p = got.plain!;
    const r = got.redis!;
    last = r.run ?? last;
    ratios.push(r.rate.rate / p.rate.rate);
    detail(`round ${round + 1}: plain ${fmt(p.rate.rate, 0)} pages/s (${fmt(p.rate.pages)} pages, ${fmt(p.wall, 2)} s wall, ${fmt(p.cpu / (p.rate.pages / 1000), 2)} CPU ms per page), ` +
      `--redis ${fmt(r.rate.rate, 0)} pages/s (${fmt(r.rate.pages)} pages, ${fmt(r.wall, 2)} s wall, ${fmt(r.cpu / (r.rate.pages / 1000), 2)} CPU ms per page + Redis ${fmt(r.redisCpu / (r.rate.pages / 1000), 2)}): ` +
      `${fmt(r.rate.rate / p.rate.rate, 2)}x; load ${load()}`);
  }
  figure('shared overhead: pages/s of one process with --redis over the plain crawl (median of rounds)',
    `${fmt(median(ratios), 2)}x (rounds ${ratios.map((x) => fmt(x, 2)).join(', ')}; load ${load()})`, median(ratios), 0.5);
  if (last) {
    describeCommands(last, last.summary.responses);
    describeStream(last, last.summary.responses / last.wall);
  }
}

// ----------------------------------------------------------------------------------------- main

if (!hasRedis) {
  console.log('shared: redis-server is not installed (apt-get install redis-server); skipped');
} else {
  console.log(`shared: load ${load()}; CLI ${CLI}; ${canCapture ? 'gaps on the wire (tcpdump)' : 'no tcpdump (needs root): gaps from the site\'s log'}`);
  if (PARTS.includes('politeness')) await politeness();
  if (PARTS.includes('scale')) await scale();
  if (PARTS.includes('overhead')) await overhead();
  console.log(`\nshared: load ${load()}`);
}
