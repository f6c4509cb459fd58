// The bridge never stands in the crawl's way: with Slotscope down when the spider starts, or killed
// (SIGKILL) in the middle of the crawl, the spider fetches every page anyway, logs one warning, and
// reports at close how many records it could not send.

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openHistoryReader } from '../../electron/core/store/queries';
import { CLI, deadPort, defer, ensureBuilt, externalSite, freshDir, ROOT, waitFor } from './helpers';
import { PYTHON, runSpider, SKIP_REASON } from './scrapy-helpers';

// Loopback addresses of this file: 127.0.97.21-29.

beforeAll(async () => {
  if (PYTHON) await ensureBuilt();
}, 180_000);

/** Lines of the bridge's own logger at WARNING or above. */
const bridgeWarnings = (log: string) => log.split('\n').filter((l) => /\[slotscope_scrapy\] (WARNING|ERROR|CRITICAL)/.test(l));

/** `slotscope serve` on `db` in a process of its own (killed when the test ends); resolves with it and the URL it printed. */
async function serve(db: string): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--db', db], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  defer(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  let out = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.resume();
  await waitFor(() => out.includes('\n') || proc.exitCode !== null, 'slotscope serve to print its URL', 20_000);
  if (!out.includes('\n')) throw new Error(`slotscope serve exited with ${proc.exitCode}`);
  return { proc, url: (JSON.parse(out.slice(0, out.indexOf('\n'))) as { url: string }).url };
}

const crawled = (log: string) => (log.match(/Crawled \(200\)/g) ?? []).length;

describe.skipIf(!PYTHON)(`Scrapy bridge: Slotscope unreachable${SKIP_REASON}`, () => {
  it('Slotscope down at the start: the spider crawls every page, warns once and counts what it could not send', async () => {
    const site = await externalSite({ seed: 7, hosts: { 'down.test': { address: '127.0.97.21', pages: 30, latency_ms: { base: 5, jitter: 1 } } } });
    const origin = `http://127.0.97.21:${new URL(site.origin('down.test')).port}`;
    const port = await deadPort('127.0.0.1');
    const spider = runSpider({
      name: 'down', startUrls: [`${origin}/`], slotscopeUrl: `http://127.0.0.1:${port}/?token=nobody-listens`,
      settings: { DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false },
    });
    const { code, stats, log } = await spider.done;
    expect(code, log.slice(-2000)).toBe(0);
    expect(stats.finish_reason).toBe('finished');
    // 30 pages, and `/` once more (Scrapy's start request is not de-duplicated).
    expect(stats.response_received_count).toBe(31);
    expect((await site.finish()).log.filter((e) => e.status === 200)).toHaveLength(31);
    const warnings = bridgeWarnings(log);
    expect(warnings, warnings.join('\n')).toHaveLength(1);
    expect(warnings[0]).toContain(`Slotscope at http://127.0.0.1:${port} is unreachable`);
    expect(warnings[0]).toContain('the crawl goes on');
    expect(stats['slotscope/records_sent']).toBe(0);
    expect(stats['slotscope/records_unsent']).toBe(31);
    expect(log).toContain('Slotscope: 0 records sent to');
    expect(log).toContain('31 could not be sent');
    // The bridge held the spider's close for no more than its short wait when Slotscope is unreachable.
    const at = (what: string) => Date.parse(log.split('\n').find((l) => l.includes(what))!.slice(0, 19).replace(' ', 'T'));
    expect(at('Spider closed (finished)') - at('Closing spider (finished)')).toBeLessThanOrEqual(2000);
  });

  it('Slotscope killed mid-crawl: the spider finishes its crawl, warns once, and what reached Slotscope is in its history', async () => {
    const site = await externalSite({ seed: 8, hosts: { 'killed.test': { address: '127.0.97.22', pages: 40, latency_ms: { base: 5, jitter: 1 } } } });
    const origin = `http://127.0.97.22:${new URL(site.origin('killed.test')).port}`;
    const db = join(freshDir('slotscope-killed-'), 'history.sqlite');
    const { proc, url } = await serve(db);
    const spider = runSpider({
      name: 'killed', startUrls: [`${origin}/`], slotscopeUrl: url,
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, LOG_LEVEL: 'DEBUG' },
    });
    // Let it stream for a while, then kill Slotscope outright.
    await waitFor(() => crawled(spider.log()) >= 10, '10 pages crawled', 20_000);
    proc.kill('SIGKILL');
    const { code, stats, log } = await spider.done;
    expect(code, log.slice(-2000)).toBe(0);
    expect(stats.finish_reason).toBe('finished');
    expect(stats.response_received_count).toBe(41);
    const warnings = bridgeWarnings(log);
    expect(warnings, warnings.join('\n')).toHaveLength(1);
    expect(warnings[0]).toContain('is unreachable');
    const sent = stats['slotscope/records_sent'] as number;
    const unsent = stats['slotscope/records_unsent'] as number;
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(unsent).toBeGreaterThan(0);
    expect(sent + unsent).toBe(41);
    // What Slotscope acknowledged before it died is in the history (all but its last unflushed batch).
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const crawls = reader.listCrawls();
    expect(crawls).toHaveLength(1);
    const rows = reader.responses(crawls[0].id);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThanOrEqual(sent);
  });
  it('Slotscope killed and started again on the same data folder: the spider goes on into a new crawl there', async () => {
    const site = await externalSite({ seed: 9, hosts: { 'restart.test': { address: '127.0.97.23', pages: 60, latency_ms: { base: 5, jitter: 1 } } } });
    const origin = `http://127.0.97.23:${new URL(site.origin('restart.test')).port}`;
    const db = join(freshDir('slotscope-restarted-'), 'history.sqlite');
    const first = await serve(db);
    const spider = runSpider({
      name: 'restarted', startUrls: [`${origin}/`], slotscopeUrl: first.url,
      settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, LOG_LEVEL: 'DEBUG' },
    });
    await waitFor(() => crawled(spider.log()) >= 10, '10 pages crawled', 20_000);
    first.proc.kill('SIGKILL');
    await waitFor(() => crawled(spider.log()) >= 20, '10 more pages crawled', 20_000);
    const second = await serve(db);
    // The same address (the data folder keeps the port and the token), so the spider finds it again.
    expect(second.url).toBe(first.url);
    const { code, stats, log } = await spider.done;
    expect(code, log.slice(-2000)).toBe(0);
    expect(stats.response_received_count).toBe(61);
    expect(bridgeWarnings(log)).toHaveLength(1);
    second.proc.kill('SIGTERM');
    await new Promise((r) => second.proc.once('close', r));
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const crawls = reader.listCrawls().sort((a, b) => a.id - b.id);
    expect(crawls.map((c) => [c.name, c.status])).toEqual([['restarted', 'interrupted'], ['restarted', 'finished']]);
    const before = reader.responses(crawls[0].id).length;
    const after = reader.responses(crawls[1].id).length;
    expect(before).toBeGreaterThan(0);
    expect(after).toBeGreaterThan(0);
    // Everything the spider fetched is in one crawl or the other, but what the killed Slotscope
    // acknowledged without committing (its last 250 ms at most) and what waited while it was down.
    expect(before + after).toBeLessThanOrEqual(61);
    expect(before + after + (stats['slotscope/records_unsent'] as number)).toBeGreaterThanOrEqual(61 - 5);
  });
});
