// What-if replay of real crawls against the test site: with the crawl's own settings it gives back
// the recorded delays exactly; with another TARGET_CONCURRENCY it gives what SPEC 4.2's policy
// function gives; refused settings store nothing; the CLI stores the same derived crawl.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../electron/core/create-core';
import { runCrawl } from '../../electron/core/crawl-runner';
import { autothrottleNextDelay } from '../../electron/core/engine/throttle/autothrottle';
import { openHistoryReader, type HistoryReader } from '../../electron/core/store/queries';
import type { ResponseRecord } from '../../shared/types';
import { CLI, crawlConfig, defer, ensureBuilt, freshDir, ROOT, site, sleep } from './helpers';

// Loopback addresses of this file: 127.0.41.x.

beforeAll(ensureBuilt, 120_000);

/** Responses in the order the engine processed them (and the replay reads them): (t, id). */
function inOrder(reader: HistoryReader, crawlId: number): ResponseRecord[] {
  const out: ResponseRecord[] = [];
  let after: [number, number] = [-Infinity, 0];
  for (;;) {
    const page = reader.responsePage(crawlId, after, 1000);
    for (const { id: _id, ...r } of page) out.push(r);
    if (page.length < 1000) return out;
    after = [page[page.length - 1].t, page[page.length - 1].id];
  }
}

async function core(db: string): Promise<Core> {
  const c = await createCore({ db });
  defer(() => c.close());
  return c;
}

async function ok<T>(c: Core, method: string, params: unknown): Promise<T> {
  const r = await c.dispatch(method, params);
  if (!r.ok) throw new Error(`${method} refused: ${JSON.stringify(r.error)}`);
  return r.result as T;
}

describe('what-if replay', () => {
  it('with the crawl’s own settings reproduces every recorded delay, cause and backoff level exactly', async () => {
    const s = await site({
      seed: 21,
      hosts: {
        'steady.test': { address: '127.0.41.1', pages: 40, latency_ms: { base: 15, jitter: 12 }, statuses: { '404': 0.1 } },
        'limited.test': {
          address: '127.0.41.2', pages: 50, latency_ms: { base: 4, jitter: 3 },
          rate_limit: { requests: 6, per_seconds: 1, status: 429, retry_after: 1 },
        },
        'flaky.test': { address: '127.0.41.3', pages: 30, latency_ms: { base: 8, jitter: 6 }, statuses: { '503': 0.15 } },
        'polite.test': { address: '127.0.41.4', pages: 8, latency_ms: 3, robots: { crawl_delay: 0.1 } },
      },
    });
    const db = join(freshDir(), 'whatif.sqlite');
    const { summary } = await runCrawl({
      config: crawlConfig({
        name: 'what-if source',
        seeds: [`${s.origin('steady.test')}/`, `${s.origin('limited.test')}/`, `${s.origin('flaky.test')}/`, `${s.origin('polite.test')}/`],
        follow: { scope: 'host' },
        settings: {
          AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.05, AUTOTHROTTLE_MAX_DELAY: 0.4, AUTOTHROTTLE_TARGET_CONCURRENCY: 2,
          CONCURRENT_REQUESTS_PER_DOMAIN: 4, BACKOFF_MIN_DELAY: 0.05, BACKOFF_MAX_DELAY: 0.6, BACKOFF_WINDOW: 0.5,
        },
        resolve: s.resolve,
      }),
      db,
      onStart: (crawler) => {
        // Recorded inputs the replay must apply at their times: a setting change and a delay pin.
        void sleep(300).then(() => crawler.updateSettings({ AUTOTHROTTLE_MAX_DELAY: 0.3 }, 'user'));
        crawler.pinDelay('steady.test', 0.02);
        void sleep(400).then(() => crawler.pinDelay('steady.test', null));
      },
    });
    const c = await core(db);
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const original = inOrder(reader, summary.crawl_id);
    const causes = new Set(original.map((r) => r.delayCause));
    // The crawl exercised what the replay has to reproduce.
    expect(original.length).toBeGreaterThan(100);
    expect(causes).toContain('autothrottle');
    expect(causes).toContain('backoff');
    expect(causes).toContain('retry-after');
    expect(causes).toContain('pin');
    expect(causes).toContain('crawl-delay');
    expect(original.some((r) => r.backoffLevel > 1)).toBe(true);

    const result = await ok<{ crawlId: number; slots: number; responses: number }>(c, 'history.whatIf', { crawlId: summary.crawl_id, settings: {} });
    expect(result).toEqual({ crawlId: expect.any(Number), slots: 4, responses: original.length });
    const derived = inOrder(reader, result.crawlId);
    expect(derived.map(({ delayBefore, delayAfter, delayCause, backoffLevel, ...rest }) => rest))
      .toEqual(original.map(({ delayBefore, delayAfter, delayCause, backoffLevel, ...rest }) => rest));
    const mismatch = original.findIndex((r, i) => {
      const d = derived[i];
      return d.delayBefore !== r.delayBefore || d.delayAfter !== r.delayAfter || d.delayCause !== r.delayCause || d.backoffLevel !== r.backoffLevel;
    });
    expect(mismatch === -1 ? null : { at: mismatch, recorded: original[mismatch], replayed: derived[mismatch] }).toBeNull();

    // The derived crawl is listed as such, with the settings it used, and charts read its series.
    const list = await ok<{ id: number; derivedFrom?: number; status: string }[]>(c, 'crawls.list', {});
    expect(list.find((x) => x.id === result.crawlId)).toMatchObject({ derivedFrom: summary.crawl_id, status: 'finished' });
    expect(list.find((x) => x.id === summary.crawl_id)!.derivedFrom).toBeUndefined();
    expect(reader.getCrawl(result.crawlId)).toMatchObject({ derivedFrom: summary.crawl_id, derived: { settings: {} } });
    const real = await ok<{ avgDelay: number; requests: number }[]>(c, 'slots.history', { id: summary.crawl_id, slot: 'limited.test' });
    const replayed = await ok<{ avgDelay: number; requests: number }[]>(c, 'slots.history', { id: result.crawlId, slot: 'limited.test' });
    expect(replayed).toEqual(real);
    // Its change log carries the backoff steps and Retry-After blocks the replay went through.
    const changes = reader.changes(result.crawlId, { slot: 'limited.test' });
    expect(changes.some((ch) => ch.setting === 'backoff_level')).toBe(true);
    expect(changes.some((ch) => ch.setting === 'blocked_until')).toBe(true);
  });

  it('with another AUTOTHROTTLE_TARGET_CONCURRENCY gives the delays of the policy function, slot by slot', async () => {
    const s = await site({
      seed: 4,
      hosts: {
        'one.test': { address: '127.0.41.11', pages: 40, latency_ms: { base: 20, jitter: 15 }, statuses: { '500': 0.1 } },
        'two.test': { address: '127.0.41.12', pages: 30, latency_ms: { base: 6, jitter: 5 } },
      },
    });
    const db = join(freshDir(), 'target.sqlite');
    const settings = {
      AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.03, AUTOTHROTTLE_MAX_DELAY: 0.25, AUTOTHROTTLE_TARGET_CONCURRENCY: 1,
      DOWNLOAD_DELAY: 0.004, CONCURRENT_REQUESTS_PER_DOMAIN: 4, BACKOFF_HTTP_CODES: [], BACKOFF_EXCEPTIONS: [],
    };
    const { summary } = await runCrawl({
      config: crawlConfig({ name: 'target', seeds: [`${s.origin('one.test')}/`, `${s.origin('two.test')}/`], follow: { scope: 'host' }, settings, resolve: s.resolve }),
      db,
    });
    const c = await core(db);
    const reader = openHistoryReader(db);
    defer(() => reader.close());
    const original = inOrder(reader, summary.crawl_id);

    const result = await ok<{ crawlId: number; slots: number; responses: number }>(c, 'history.whatIf', {
      crawlId: summary.crawl_id, settings: { AUTOTHROTTLE_TARGET_CONCURRENCY: 4 },
    });
    const derived = inOrder(reader, result.crawlId);
    expect(derived).toHaveLength(original.length);
    // SPEC 4.1/4.2 by hand: start at max(DOWNLOAD_DELAY, START_DELAY), one step per response with a latency.
    const params = { mindelay: settings.DOWNLOAD_DELAY, maxdelay: settings.AUTOTHROTTLE_MAX_DELAY, target: 4 };
    const delay = new Map<string, number>();
    let differs = 0;
    for (let i = 0; i < original.length; i++) {
      const r = original[i];
      const before = delay.get(r.slot) ?? Math.max(settings.DOWNLOAD_DELAY, settings.AUTOTHROTTLE_START_DELAY);
      const after = r.status !== null && r.latency !== null ? autothrottleNextDelay(before, r.latency, r.status, params) : before;
      delay.set(r.slot, after);
      expect({ i, before: derived[i].delayBefore, after: derived[i].delayAfter, cause: derived[i].delayCause })
        .toEqual({ i, before: Math.max(before, params.mindelay), after: Math.max(after, params.mindelay), cause: after > params.mindelay ? 'autothrottle' : 'floor' });
      if (derived[i].delayAfter !== r.delayAfter) differs++;
    }
    expect(differs).toBeGreaterThan(original.length / 2);
    expect(reader.getCrawl(result.crawlId)!.settings).toMatchObject({ AUTOTHROTTLE_TARGET_CONCURRENCY: 4 });
    expect(reader.changes(result.crawlId, { slot: null })).toEqual([
      expect.objectContaining({ setting: 'AUTOTHROTTLE_TARGET_CONCURRENCY', source: 'config', oldValue: 1, newValue: 4 }),
    ]);

    // One slot only.
    const one = await ok<{ crawlId: number; slots: number; responses: number }>(c, 'history.whatIf', {
      crawlId: summary.crawl_id, slot: 'two.test', settings: { AUTOTHROTTLE_TARGET_CONCURRENCY: 4 },
    });
    expect(one).toEqual({ crawlId: expect.any(Number), slots: 1, responses: original.filter((r) => r.slot === 'two.test').length });
    expect(inOrder(reader, one.crawlId)).toEqual(derived.filter((r) => r.slot === 'two.test'));

    // Refused requests name what is wrong and store nothing.
    const crawlsBefore = reader.listCrawls().length;
    const refused = async (params: unknown, code: string, field: string, ...words: string[]) => {
      const r = await c.dispatch('history.whatIf', params);
      expect(r.ok, JSON.stringify(params)).toBe(false);
      if (r.ok) return;
      expect(r.error).toMatchObject({ code, field });
      for (const w of words) expect(r.error.message).toContain(w);
    };
    await refused({ crawlId: summary.crawl_id, settings: { AUTOTHROTTLE_TARGET_CONCURRENCY: 0 } }, 'invalid', 'AUTOTHROTTLE_TARGET_CONCURRENCY',
      'AUTOTHROTTLE_TARGET_CONCURRENCY: 0 is not allowed');
    await refused({ crawlId: summary.crawl_id, settings: { AUTOTHROTTLE_TARGET_CONCURENCY: 2 } }, 'invalid', 'AUTOTHROTTLE_TARGET_CONCURENCY',
      'did you mean AUTOTHROTTLE_TARGET_CONCURRENCY');
    await refused({ crawlId: summary.crawl_id, settings: { BACKOFF_MAX_DELAY: 0.5, BACKOFF_MIN_DELAY: 2 } }, 'invalid', 'BACKOFF_MAX_DELAY');
    await refused({ crawlId: summary.crawl_id, settings: [1] }, 'invalid', 'settings', 'an object of SETTING_NAME: value');
    await refused({ crawlId: 9999, settings: {} }, 'not-found', 'crawlId', 'crawl 9999 does not exist');
    await refused({ crawlId: summary.crawl_id, slot: 'nope.test', settings: {} }, 'not-found', 'slot', '"nope.test"');
    await refused({ crawlId: result.crawlId, settings: {} }, 'conflict', 'crawlId', 'is itself a what-if replay');
    expect(reader.listCrawls()).toHaveLength(crawlsBefore);
  });

  it('slotscope replay --db stores a derived crawl and prints it; bad settings exit 2 and store nothing', async () => {
    const s = await site({ seed: 2, hosts: { 'cli.test': { address: '127.0.41.21', pages: 15, latency_ms: { base: 5, jitter: 4 } } } });
    const dir = freshDir();
    const db = join(dir, 'cli.sqlite');
    const { summary } = await runCrawl({
      config: crawlConfig({ name: 'cli', seeds: [`${s.origin('cli.test')}/`], follow: { scope: 'host' },
        settings: { AUTOTHROTTLE_ENABLED: true, AUTOTHROTTLE_START_DELAY: 0.01 }, resolve: s.resolve }),
      db,
    });
    const run = (args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ AUTOTHROTTLE_TARGET_CONCURRENCY: 4, AUTOTHROTTLE_MAX_DELAY: '0.5' }));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ AUTOTHROTTLE_TARGET_CONCURRENCY: -1, DOWNLOAD_DELAY: 'soon' }));

    const r = await run(['replay', '--db', db, '--crawl', String(summary.crawl_id), '--settings', good, '--slot', 'cli.test']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout) as { crawlId: number; slots: number; responses: number };
    expect(printed).toEqual({ crawlId: summary.crawl_id + 1, slots: 1, responses: summary.requests });

    const refused = await run(['replay', '--db', db, '--crawl', String(summary.crawl_id), '--settings', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('AUTOTHROTTLE_TARGET_CONCURRENCY: -1 is not allowed');
    expect(refused.stderr).toContain('DOWNLOAD_DELAY: "soon" is not allowed');
    expect(refused.stderr).toContain('nothing was stored');
    const missing = await run(['replay', '--db', db, '--crawl', '77', '--settings', good]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('crawl 77 does not exist');
    const noCrawl = await run(['replay', '--db', db, '--settings', good]);
    expect(noCrawl.code).toBe(2);
    expect(noCrawl.stderr).toContain('--crawl ID is required');

    const reader = openHistoryReader(db);
    defer(() => reader.close());
    expect(reader.listCrawls().map((x) => x.id)).toEqual([summary.crawl_id, printed.crawlId]);
    expect(reader.getCrawl(printed.crawlId)).toMatchObject({
      status: 'finished', derivedFrom: summary.crawl_id, derived: { settings: { AUTOTHROTTLE_TARGET_CONCURRENCY: 4, AUTOTHROTTLE_MAX_DELAY: '0.5' }, slot: 'cli.test' },
    });
  });
});
