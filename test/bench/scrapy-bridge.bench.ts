// Figure: what the slotscope-scrapy extension costs a Scrapy crawl. Pages/s of a real Scrapy spider
// (Debian's python3-scrapy) against a fast local host (the canned 1 KB keep-alive server, in its own
// process) with the bridge streaming into a running `slotscope serve`, against the same spider
// without it; trials interleaved in one run (rounds of one trial per side back to back, the order
// alternating), the median of the rounds' ratios. Target ≥ 0.9.
//
// Knobs: BENCH_SCRAPY_PAGES (pages per trial, 1,500), BENCH_ROUNDS (trials per side, 11).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchFile, startChild } from './lib/children';
import { detail, figure, fmt, median } from './lib/report';

const PAGES = Number(process.env.BENCH_SCRAPY_PAGES ?? 1500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const ROOT = process.cwd();
const ADDRESS = '127.0.97.200';

const SPIDER = `# The bridge bench's spider (written by scrapy-bridge.bench.ts): argv <base url> <pages> <SLOTSCOPE_URL or ->.
# Fetches <pages> pages with Scrapy's default concurrency (16) and no delay; prints one JSON line.
import json, resource, sys, time
import scrapy
from scrapy.crawler import CrawlerProcess

base, pages, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times = []

class Bench(scrapy.Spider):
    name = 'bridge-bench'

    def start_requests(self):
        for i in range(pages):
            yield scrapy.Request('%s/page/%d' % (base, i), dont_filter=True)

    def parse(self, response):
        times.append(time.monotonic())

settings = {
    'CONCURRENT_REQUESTS': 16, 'CONCURRENT_REQUESTS_PER_DOMAIN': 16, 'DOWNLOAD_DELAY': 0,
    'AUTOTHROTTLE_ENABLED': False, 'ROBOTSTXT_OBEY': False, 'COOKIES_ENABLED': False, 'RETRY_ENABLED': False,
    'TELNETCONSOLE_ENABLED': False, 'LOG_LEVEL': 'WARNING',
}
if url != '-':
    settings['EXTENSIONS'] = {'slotscope_scrapy.SlotscopeBridge': 500}
    settings['SLOTSCOPE_URL'] = url
process = CrawlerProcess(settings=settings)
crawler = process.create_crawler(Bench)
t0 = time.monotonic()
process.crawl(crawler)
process.start()
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
stats = crawler.stats.get_stats()
print(json.dumps({
    'pages': len(times), 'seconds': times[-1] - times[0] if len(times) > 1 else 0, 'wall': wall,
    'cpu': ru.ru_utime + ru.ru_stime,
    'sent': stats.get('slotscope/records_sent'), 'unsent': stats.get('slotscope/records_unsent'),
}))
`;

interface Trial {
  readonly pages: number;
  /** First to last response. */
  readonly seconds: number;
  /** The process from start to end (Python, Scrapy's start and close included). */
  readonly wall: number;
  /** CPU seconds of the spider process (all threads). */
  readonly cpu: number;
  readonly sent: number | null;
  readonly unsent: number | null;
}

function scrapyPython(): string | null {
  for (const py of [process.env.SLOTSCOPE_PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p)) {
    if (spawnSync(py, ['-c', 'import scrapy'], { encoding: 'utf8' }).status === 0) return py;
  }
  return null;
}

/** CPU seconds (user + system, all threads) a process has used, from /proc; null where there is none. */
function procCpu(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const py = scrapyPython();
  if (!py) {
    console.log('scrapy-bridge: skipped, no python3 with Scrapy (apt-get install python3-scrapy)');
    return;
  }
  const version = spawnSync(py, ['-c', 'import scrapy; print(scrapy.__version__)'], { encoding: 'utf8' }).stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-bridge-bench-'));
  const spider = benchFile('./scrapy-bridge-spider.py');
  writeFileSync(spider, SPIDER);
  const server = await startChild(benchFile('./lib/canned-server.child.mjs'), ['--address', ADDRESS]);
  const base = `http://${ADDRESS}:${server.ready.port as number}`;
  const serve = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'serve', '--db', join(dir, 'history.sqlite'), '--port', '0'], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
  });
  serve.stderr.resume();
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      serve.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { url: string }).url);
      });
      serve.once('exit', (code) => reject(new Error(`slotscope serve exited (${code})`)));
    });
    const env = { ...process.env, PYTHONPATH: [join(ROOT, 'integrations', 'scrapy'), process.env.PYTHONPATH].filter(Boolean).join(':'), PYTHONDONTWRITEBYTECODE: '1' };
    const run = (bridge: boolean): Trial => {
      const r = spawnSync(py, [spider, base, String(PAGES), bridge ? url : '-'], { env, encoding: 'utf8', timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
      if (r.status !== 0) throw new Error(`the spider failed (${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-8).join('\n')}`);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as Trial;
    };
    run(false); // warm-up: Python's imports into the page cache
    const without: Trial[] = [];
    const withBridge: Trial[] = [];
    const hostCpu: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [false, true] : [true, false];
      for (const bridge of order) {
        const before = procCpu(serve.pid!);
        const t = run(bridge);
        const after = procCpu(serve.pid!);
        if (t.pages !== PAGES) throw new Error(`a trial fetched ${t.pages} of ${PAGES} pages`);
        (bridge ? withBridge : without).push(t);
        if (bridge && before !== null && after !== null) hostCpu.push(after - before);
      }
    }
    const rate = (t: Trial) => (t.pages - 1) / t.seconds;
    // Each round's two trials ran back to back: their ratio cancels the load of this shared machine
    // drifting between rounds; the figure is the median of those ratios.
    const pairs = withBridge.map((t, i) => rate(t) / rate(without[i]));
    const ratio = median(pairs);
    const a = median(withBridge.map(rate));
    const b = median(without.map(rate));
    figure('scrapy-bridge pages/s with the bridge ÷ without', `median of ${ROUNDS} back-to-back pairs ${fmt(ratio, 3)} ` +
      `(medians ${fmt(a, 0)} / ${fmt(b, 0)} pages/s = ${fmt(a / b, 3)})`, ratio, 0.9);
    detail(`Scrapy ${version} (${py}), ${fmt(PAGES)} pages per trial from a 1 KB keep-alive server in its own process, CONCURRENT_REQUESTS 16, no delay, ` +
      `${ROUNDS} rounds of one trial per side back to back (order alternating); Slotscope (\`slotscope serve\`) in its own process on the same machine`);
    detail(`without: ${without.map((t) => fmt(rate(t), 0)).join(', ')} pages/s; with: ${withBridge.map((t) => fmt(rate(t), 0)).join(', ')} pages/s; ` +
      `pair ratios ${pairs.map((x) => fmt(x, 2)).join(', ')}`);
    const cpuPerPage = (ts: Trial[]) => median(ts.map((t) => (t.cpu / t.pages) * 1e6));
    detail(`spider CPU per page: ${fmt(cpuPerPage(without), 0)} µs without, ${fmt(cpuPerPage(withBridge), 0)} µs with the bridge ` +
      `(a spider bound by its core would run at ${fmt(cpuPerPage(without) / cpuPerPage(withBridge), 3)} of its speed: steadier than the rates here); ` +
      `whole process ${fmt(median(without.map((t) => t.wall)), 2)} s without, ${fmt(median(withBridge.map((t) => t.wall)), 2)} s with (close waits for the last batch)`);
    detail(`records sent per trial: ${withBridge.map((t) => `${t.sent}/${t.pages}${t.unsent ? ` (${t.unsent} unsent)` : ''}`).join(', ')}` +
      (hostCpu.length > 0 ? `; Slotscope's CPU per trial ${hostCpu.map((c) => fmt(c, 2)).join(', ')} s (${fmt((median(hostCpu) / median(withBridge.map((t) => t.wall))) * 100, 0)}% of a core)` : ''));
  } finally {
    serve.kill('SIGTERM');
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
