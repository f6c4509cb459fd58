// Issue 15, "Bad input refused whole": keys named like Object's own properties (__proto__,
// toString, valueOf, hasOwnProperty, constructor) in the crawl config's resolve map, in a
// request's throttling_scopes costs and in a scope's quota bookkeeping are plain keys: never
// silently dropped, never found where they were not set.
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../electron/core/clock';
import { crawlConfigInput, parseCrawlConfig } from '../../../electron/core/engine/crawl-config';
import type { CrawlRequest } from '../../../electron/core/engine/request';
import { costOf, Scheduler } from '../../../electron/core/engine/scheduler';
import { addScopes, type ScopeSet } from '../../../electron/core/engine/scopes';
import { parseSettings } from '../../../shared/settings';
import { throttleStep } from '../../../electron/core/engine/throttle/step';

const HOSTILE = ['__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'constructor'] as const;

function req(slotKey: string, i: number, scopeKeys: string[] = [], costs: Record<string, number> | null = null): CrawlRequest {
  return { url: `http://${slotKey}/${i}`, origin: `http://${slotKey}`, path: `/${i}`, host: slotKey, method: 'GET', depth: 0,
    priority: 0, meta: {}, redirects: 0, retries: 0, robots: false, enqueuedAt: 0, slotKey, lane: -1,
    scopeKeys, costs, quotaWindows: null };
}

describe('the crawl config\'s resolve map', () => {
  const text = `{"seeds": ["http://a.test/"], "resolve": {${HOSTILE.map((k, i) => `"${k}": "127.0.48.${i + 1}"`).join(', ')}}}`;

  it('keeps every hostile host name as a plain key (lower-cased, as host names are), and survives being stored and read back', () => {
    const r = parseCrawlConfig(JSON.parse(text));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const resolve = r.config.resolve;
    expect(Object.keys(resolve)).toEqual(HOSTILE.map((k) => k.toLowerCase()));
    HOSTILE.forEach((k, i) => expect(resolve[k.toLowerCase()], k).toBe(`127.0.48.${i + 1}`));
    const again = parseCrawlConfig(JSON.parse(JSON.stringify(crawlConfigInput(r.config))));
    expect(again.ok).toBe(true);
    if (again.ok) expect({ ...again.config.resolve }).toEqual({ ...resolve });
  });

  it('finds nothing for a host it does not name', () => {
    const r = parseCrawlConfig({ seeds: ['http://a.test/'], resolve: { 'a.test': '127.0.48.9' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    for (const k of HOSTILE) expect(r.config.resolve[k], k).toBeUndefined();
    const none = parseCrawlConfig({ seeds: ['http://a.test/'] });
    if (none.ok) for (const k of HOSTILE) expect(none.config.resolve[k], k).toBeUndefined();
  });

  it('names a bad address under a hostile host name', () => {
    const r = parseCrawlConfig(JSON.parse('{"seeds": ["http://a.test/"], "resolve": {"__proto__": "nope"}}'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => e.message)).toEqual(['resolve["__proto__"]: "nope" is not allowed (an IPv4 or IPv6 address)']);
  });
});

describe('throttling_scopes costs and quota windows', () => {
  it('addScopes keeps a hostile scope name and its cost', () => {
    const set: ScopeSet = { keys: [], costs: null };
    addScopes(set, JSON.parse(`{${HOSTILE.map((k, i) => `"${k}": ${i + 2}`).join(', ')}}`));
    expect(set.keys).toEqual([...HOSTILE]);
    HOSTILE.forEach((k, i) => expect(set.costs?.[k], k).toBe(i + 2));
  });

  it('a scope with no cost given costs 1, whatever its name', () => {
    const set: ScopeSet = { keys: [], costs: null };
    addScopes(set, { other: 3 });
    const r = req('a.test', 0, ['other', ...HOSTILE], set.costs);
    expect(costOf(r, 'other')).toBe(3);
    for (const k of HOSTILE) expect(costOf(r, k), k).toBe(1);
    // Costs built by hand (a plug-in's plain object) are read by own key too.
    const plain = req('a.test', 1, [...HOSTILE], { other: 2 });
    for (const k of HOSTILE) expect(costOf(plain, k), k).toBe(1);
  });

  it.each(HOSTILE)('a scope named %s with a quota records the window its cost came from, so its actual cost settles', async (key) => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const settings = parseSettings(JSON.parse(`{"THROTTLING_SCOPES": {"${key}": {"quota": 2, "window": 10}}, "RANDOMIZE_DOWNLOAD_DELAY": false}`));
    const started: CrawlRequest[] = [];
    const sched = new Scheduler({ settings, clock, start: (r) => started.push(r) });
    for (let i = 0; i < 3; i++) sched.enqueue(req('a.test', i, [key]));
    await clock.runTo(clock.now() + 1);
    // Two fit the quota of 2 per window; the third waits for the next window.
    expect(started).toHaveLength(2);
    const windows = started[0].quotaWindows;
    expect(windows && Object.hasOwn(windows, key)).toBe(true);
    expect(Object.keys(windows ?? {})).toEqual([key]);
    const scope = sched.existingSlot(key)!;
    expect(scope.quotaLeft(settings, clock.now())).toBe(0);
    // The first request turned out to cost nothing (its plug-in says 0): the throttle step gives its unit back.
    const d = throttleStep(scope, {
      t: clock.now(), startedAt: clock.now(), status: 200, errorKind: null, latency: 0.01, inFlight: 1, cost: 0,
      quota: { windowStart: started[0].quotaWindows![key], expected: 1 },
    }, settings);
    expect(d.quotaSettled).toBe(true);
    expect(scope.quotaLeft(settings, clock.now())).toBe(1);
    sched.close();
  });
});
