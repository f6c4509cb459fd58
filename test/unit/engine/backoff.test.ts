// Backoff policy (SPEC 5.2) as pure functions: the step formula, one step per burst, stepwise
// recovery, and every header form that blocks a slot.
import { describe, expect, it } from 'vitest';
import { BackoffState, backoffDelay, backoffParams, blockFromHeaders, isFeedback, parseRetryAfter, recover, stepUp } from '../../../electron/core/engine/throttle/backoff';
import { DEFAULT_SETTINGS, parseSettings } from '../../../shared/settings';

const NOW = Date.UTC(2026, 10, 22, 10, 0, 0);
const p = backoffParams(DEFAULT_SETTINGS);

describe('backoff policy', () => {
  it('steps 1 s, 2 s, 4 s from a zero base, capped at BACKOFF_MAX_DELAY, and from base x factor otherwise', () => {
    const b = new BackoffState();
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      stepUp(b, NOW + i * 1000, NOW + i * 1000 + 1, 0);
      delays.push(backoffDelay(b, p));
    }
    expect(delays).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
    const c = new BackoffState();
    stepUp(c, NOW, NOW, 3);
    expect(backoffDelay(c, p)).toBe(6);
  });

  it('counts a burst once: feedback for requests sent before the latest step does not step again', () => {
    const b = new BackoffState();
    expect(stepUp(b, NOW - 50, NOW, 0)).toBe(true);
    for (let i = 0; i < 40; i++) expect(stepUp(b, NOW - 40 + i, NOW + 10 + i, 0)).toBe(false);
    expect(b.level).toBe(1);
    expect(stepUp(b, NOW + 100, NOW + 200, 0)).toBe(true);
    expect(b.level).toBe(2);
  });

  it('recovers one level per quiet BACKOFF_WINDOW with a good response', () => {
    const b = new BackoffState();
    stepUp(b, NOW, NOW, 0);
    stepUp(b, NOW + 1, NOW + 1, 0);
    expect(recover(b, NOW + 30_000, p)).toBe(false);
    expect(recover(b, NOW + 60_001, p)).toBe(true);
    expect(b.level).toBe(1);
    expect(recover(b, NOW + 90_000, p)).toBe(false);
    expect(recover(b, NOW + 120_002, p)).toBe(true);
    expect(b.level).toBe(0);
    expect(backoffDelay(b, p)).toBe(0);
  });

  it('knows feedback statuses and failure kinds, with per-scope overrides', () => {
    expect([429, 503, 520].map((s) => isFeedback(p, s, null))).toEqual([true, true, true]);
    expect([200, 404, 500].map((s) => isFeedback(p, s, null))).toEqual([false, false, false]);
    expect(['timeout', 'connect-refused', 'connect-reset', 'tls', 'dns', 'maxsize'].map((k) => isFeedback(p, null, k)))
      .toEqual([true, true, true, true, false, false]);
    const s = parseSettings({ THROTTLING_SCOPES: { api: { backoff: { http_codes: [418], window: 5 } } } });
    const scoped = backoffParams(s, s.THROTTLING_SCOPES.api.backoff);
    expect([isFeedback(scoped, 418, null), isFeedback(scoped, 429, null), scoped.window]).toEqual([true, false, 5]);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('120', NOW)).toBe(NOW + 120_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', NOW)).toBe(NOW + 30_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', NOW)).toBe(NOW);
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
  });

  it('blocks on Retry-After, RateLimit and X-RateLimit headers, capped at BACKOFF_MAX_DELAY', () => {
    expect(blockFromHeaders({ 'retry-after': '2' }, 429, NOW, 300, true)?.until).toBe(NOW + 2000);
    expect(blockFromHeaders({ 'retry-after': '9999' }, 429, NOW, 300, true)?.until).toBe(NOW + 300_000);
    // RateLimit-Remaining: 0 with a reset blocks even on a 200.
    expect(blockFromHeaders({ 'ratelimit-remaining': '0', 'ratelimit-reset': '5' }, 200, NOW, 300, false)?.until).toBe(NOW + 5000);
    expect(blockFromHeaders({ 'ratelimit-remaining': '3', 'ratelimit-reset': '5' }, 200, NOW, 300, false)).toBeNull();
    expect(blockFromHeaders({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 7) }, 200, NOW, 300, false)?.until).toBe(NOW + 7000);
    expect(blockFromHeaders({ ratelimit: 'limit=10, remaining=0, reset=4' }, 200, NOW, 300, false)?.until).toBe(NOW + 4000);
    // A 429 with only a reset header blocks until the reset.
    expect(blockFromHeaders({ 'ratelimit-reset': '3' }, 429, NOW, 300, true)?.until).toBe(NOW + 3000);
    expect(blockFromHeaders({}, 429, NOW, 300, true)).toBeNull();
  });
});
