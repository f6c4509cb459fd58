// A slot's policy as Redis keeps it for a shared crawl (issue 18): every state field survives the
// trip, the infinities and NaNs of a fresh slot included, rampup's ring of start times compactly.

import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../../shared/settings';
import { decodePolicy, encodePolicy, smallestGapMs } from '../../../electron/core/cluster/policy-codec';
import { SlotPolicy } from '../../../electron/core/engine/throttle/policy';
import { HeaderPace } from '../../../electron/core/engine/throttle/ratelimit';

const s = parseSettings({ DOWNLOAD_DELAY: 2, RANDOMIZE_DOWNLOAD_DELAY: true, AUTOTHROTTLE_ENABLED: false });

describe('the shared crawl policy codec', () => {
  it('a slot with backoff, a block, pins, Crawl-delay and rampup starts comes back equal', () => {
    const p = new SlotPolicy('a.test', undefined, s);
    p.delay = 1.25;
    p.pinConcurrency = 3;
    p.crawlDelay = 4;
    p.backoff.level = 2;
    p.backoff.base = 0.5;
    p.backoff.lastStepAt = 1_700_000_000_123.5;
    p.backoff.blockedUntil = 1_700_000_002_000;
    p.backoff.blockReason = 'Retry-After: 2';
    for (const t of [10, 10, 11, 12.5]) p.rampup.recent.push(t);
    // A ring grown past its first size, and header pacing made on demand.
    p.headerPace = new HeaderPace();
    p.headerPace.limit = 200;
    p.headerPace.windowMs = 10_000;
    p.headerPace.starts.reserve(100);
    for (let i = 0; i < 90; i++) p.headerPace.starts.push(1000 + i);
    p.quotaUsed = 7;
    p.gapFactor = 1.3;
    const json = encodePolicy(p);
    // The 256-start ring of a mostly fresh slot is a few runs, not 256 values.
    expect(json.length).toBeLessThan(2000);
    const back = decodePolicy('a.test', undefined, s, json, 1234);
    expect(back.lastStart).toBe(1234);
    for (const k of ['delay', 'paused', 'pinDelay', 'pinConcurrency', 'crawlDelay', 'quotaUsed', 'quotaWindowStart', 'gapFactor'] as const) {
      expect(back[k], k).toEqual(p[k]);
    }
    expect({ ...back.backoff }).toEqual({ ...p.backoff });
    expect(back.rampup.recent).toEqual(p.rampup.recent);
    expect(back.rampup.recent.count).toBe(4);
    expect(back.headerPace).toBeInstanceOf(HeaderPace);
    expect(back.headerPace).toEqual(p.headerPace);
    expect(back.headerPace!.active).toBe(true);
    expect(back.headerPace!.gapSeconds()).toBe(p.headerPace.gapSeconds());
    expect(Number.isNaN(back.rampup.startedAt)).toBe(true);
    expect(back.backoff.quietSince).toBe(-Infinity);
    // The rules read the decoded state as they read the original.
    expect(back.delaySeconds(s)).toBe(p.delaySeconds(s));
    expect(back.concurrency(s)).toBe(p.concurrency(s));
  });

  it("'' is a fresh slot; the smallest gap never draws below a Crawl-delay", () => {
    const fresh = decodePolicy('b.test', undefined, s, '', -Infinity);
    expect(encodePolicy(fresh)).toBe(encodePolicy(new SlotPolicy('b.test', undefined, s)));
    // DOWNLOAD_DELAY 2 randomized: 0.5 x 2 s at the least.
    expect(smallestGapMs(fresh, s)).toBe(1000);
    fresh.crawlDelay = 1.5;
    expect(smallestGapMs(fresh, s)).toBe(1500);
  });
});
