// Issue 15, "Bad input refused whole": a number written as text is decimal digits or it is refused
// with the setting, the value and what is allowed. "" is not 0 and "0x10" is not 16.
import { describe, expect, it } from 'vitest';
import { applySettings, parseDecimal, parseSettings } from '../../../shared/settings';

function refused(patch: Record<string, unknown>): string {
  const r = applySettings(patch);
  expect(r.ok, JSON.stringify(patch)).toBe(false);
  if (r.ok) throw new Error('accepted');
  expect(r.errors).toHaveLength(1);
  return r.errors[0].message;
}

describe('numeric strings in settings', () => {
  it.each([
    ['CONCURRENT_REQUESTS', ''],
    ['CONCURRENT_REQUESTS', ' '],
    ['CONCURRENT_REQUESTS', '0x10'],
    ['CONCURRENT_REQUESTS', '0b11'],
    ['CONCURRENT_REQUESTS', '0o17'],
    ['CONCURRENT_REQUESTS', '1_000'],
    ['CONCURRENT_REQUESTS', '1e1'],
    ['CONCURRENT_REQUESTS', '16.0'],
    ['DOWNLOAD_DELAY', '0x1'],
    ['DOWNLOAD_DELAY', 'Infinity'],
    ['DOWNLOAD_DELAY', '1.5s'],
    ['DOWNLOAD_DELAY', '.'],
    ['DOWNLOAD_DELAY', '1e'],
    ['DOWNLOAD_DELAY', '\u0661'],
    ['AUTOTHROTTLE_TARGET_CONCURRENCY', '0X2'],
    ['RAMPUP_BACKOFF_TARGET', '0x2'],
  ])('%s: %j is refused, naming the setting, the value and what is allowed', (name, value) => {
    const m = refused({ [name]: value });
    expect(m.startsWith(`${name}: ${JSON.stringify(value)} is not allowed (`)).toBe(true);
    expect(m).toMatch(/decimal/);
  });

  it('refuses hexadecimal items in lists and pairs', () => {
    expect(refused({ BACKOFF_HTTP_CODES: '429,0x1F7' })).toMatch(/^BACKOFF_HTTP_CODES: "429,0x1F7" is not allowed \(.*item "0x1F7"/);
    expect(refused({ BACKOFF_HTTP_CODES: ['0x1AD'] })).toMatch(/item "0x1AD"/);
    expect(refused({ RANDOMIZE_DOWNLOAD_DELAY: ['0x0', '0.5'] })).toMatch(/^RANDOMIZE_DOWNLOAD_DELAY: /);
    expect(refused({ THROTTLING_SCOPES: { api: { concurrency: '0x4' } } })).toMatch(/^THROTTLING_SCOPES: .*"concurrency": "0x4"/);
    expect(refused({ THROTTLING_SCOPES: { api: { delay: '' } } })).toMatch(/^THROTTLING_SCOPES: .*"delay": ""/);
  });

  it('accepts decimal text: digits, sign, decimal point and exponent (the last two for non-integers only)', () => {
    const s = parseSettings({
      CONCURRENT_REQUESTS: '32', CONCURRENT_REQUESTS_PER_DOMAIN: ' 4 ', DOWNLOAD_DELAY: '2.5', DOWNLOAD_DELAY_PER_SLOT: '.5',
      AUTOTHROTTLE_MAX_DELAY: '1e1', AUTOTHROTTLE_START_DELAY: '+3.', RETRY_PRIORITY_ADJUST: '-2', BACKOFF_HTTP_CODES: '429, 503',
      RANDOMIZE_DOWNLOAD_DELAY: ['-0.5', '0.25e0'],
    });
    expect([s.CONCURRENT_REQUESTS, s.CONCURRENT_REQUESTS_PER_DOMAIN, s.DOWNLOAD_DELAY, s.DOWNLOAD_DELAY_PER_SLOT]).toEqual([32, 4, 2.5, 0.5]);
    expect([s.AUTOTHROTTLE_MAX_DELAY, s.AUTOTHROTTLE_START_DELAY, s.RETRY_PRIORITY_ADJUST]).toEqual([10, 3, -2]);
    expect(s.BACKOFF_HTTP_CODES).toEqual([429, 503]);
    expect(s.RANDOMIZE_DOWNLOAD_DELAY).toEqual([-0.5, 0.25]);
  });

  it('parseDecimal is the one rule', () => {
    expect(parseDecimal('10', true)).toBe(10);
    expect(parseDecimal('-7', true)).toBe(-7);
    expect(parseDecimal('1.5', true)).toBeNull();
    expect(parseDecimal('1e3', true)).toBeNull();
    expect(parseDecimal('1e3', false)).toBe(1000);
    expect(parseDecimal('1e400', false)).toBeNull();
    for (const bad of ['', ' ', '0x10', '0b1', '0o1', 'NaN', '-', '+', '1,5', '١']) {
      expect(parseDecimal(bad, false), bad).toBeNull();
      expect(parseDecimal(bad, true), bad).toBeNull();
    }
  });
});
