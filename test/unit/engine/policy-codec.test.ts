// A slot's policy as Redis keeps it for a shared crawl (issue 18): every state field survives the
// trip, the infinities and NaNs of a fresh slot included, rampup's ring of start times compactly.

import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../../shared/settings';
import { decodePolicy, encodePolicy, smallestGapMs } from '../../../electron/core/cluster/policy-codec';
import { SlotPolicy } from '../../../electron/core/engine/throttle/policy';

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
    p.rampup.recent[0] = 10;
    p.rampup.recent[1] = 10;
    p.rampup.recent[5] = 12.5;
    p.rampup.next = 6;
    p.quotaUsed = 7;
    p.gapFactor = 1.3;
    const json = encodePolicy(p);
    // The 256-start ring of a mostly fresh slot is a few runs, not 256 values.
    expect(json.length).toBeLessThan(900);
    const back = decodePolicy('a.test', undefined, s, json, 1234);
    expect(back.lastStart).toBe(1234);
    for (const k of ['delay', 'paused', 'pinDelay', 'pinConcurrency', 'crawlDelay', 'quotaUsed', 'quotaWindowStart', 'gapFactor'] as const) {
      expect(back[k], k).toEqual(p[k]);
    }
    expect({ ...back.backoff }).toEqual({ ...p.backoff });
    expect(Array.from(back.rampup.recent)).toEqual(Array.from(p.rampup.recent));
    expect(back.rampup.next).toBe(6);
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
