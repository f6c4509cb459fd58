// Scrapy's AUTOTHROTTLE_DEBUG line and log prefix, byte for byte.
import { describe, expect, it } from 'vitest';
import { formatDebugLine, scrapyLogPrefix } from '../../../shared/debug-line';

describe('debug line', () => {
  it('matches Scrapy test_debug', () => {
    expect(formatDebugLine({ slot: 'foo', concurrency: 2, delay: 1.5, oldDelay: 2, latency: 1, size: 3 }))
      .toBe('slot: foo | conc: 2 | delay: 1500 ms (-500) | latency: 1000 ms | size:     3 bytes');
  });
  it('truncates toward zero, never rounds, and prints +0 for diffs in (-1 ms, 0]', () => {
    expect(formatDebugLine({ slot: 's', concurrency: 1, delay: 2.4689999, oldDelay: 3.0857799, latency: 0.0999, size: 0 }))
      .toBe('slot: s | conc: 1 | delay: 2468 ms (-616) | latency:   99 ms | size:     0 bytes');
    expect(formatDebugLine({ slot: 's', concurrency: 1, delay: 1.0, oldDelay: 1.0009, latency: 0, size: 0 })).toContain('(+0)');
  });
  it('widths are minimums, never truncating', () => {
    expect(formatDebugLine({ slot: 'x', concurrency: 123, delay: 150, oldDelay: 0, latency: 200, size: 1234567 }))
      .toBe('slot: x | conc:123 | delay:150000 ms (+150000) | latency:200000 ms | size:1234567 bytes');
  });
  it('prefixes like Scrapy LOG_FORMAT in local time', () => {
    const t = new Date(2026, 10, 22, 9, 5, 7).getTime();
    expect(scrapyLogPrefix(t)).toBe('2026-11-22 09:05:07 [scrapy.extensions.throttle] INFO: ');
  });
});
