// The settings schema: defaults, parsing of Scrapy-style values, whole-or-nothing validation
// with errors that name the setting, the value and what is allowed.
import { describe, expect, it } from 'vitest';
import { applySettings, DEFAULT_SETTINGS, parseSettings, PRESETS, SETTINGS_SCHEMA, drawFactor, SettingsError } from '../../../shared/settings';

describe('settings schema', () => {
  it('has Scrapy 2.18 defaults for every setting of SPEC 2', () => {
    expect(DEFAULT_SETTINGS.CONCURRENT_REQUESTS).toBe(16);
    expect(DEFAULT_SETTINGS.CONCURRENT_REQUESTS_PER_DOMAIN).toBe(8);
    expect(DEFAULT_SETTINGS.AUTOTHROTTLE_START_DELAY).toBe(5);
    expect(DEFAULT_SETTINGS.AUTOTHROTTLE_MAX_DELAY).toBe(60);
    expect(DEFAULT_SETTINGS.AUTOTHROTTLE_TARGET_CONCURRENCY).toBe(1);
    expect(DEFAULT_SETTINGS.BACKOFF_HTTP_CODES).toEqual([429, 502, 503, 504, 520, 521, 522, 523, 524]);
    expect(DEFAULT_SETTINGS.DOWNLOAD_TIMEOUT).toBe(180);
    expect(DEFAULT_SETTINGS.DOWNLOAD_MAXSIZE).toBe(1024 ** 3);
    expect(DEFAULT_SETTINGS.RANDOMIZE_DOWNLOAD_DELAY).toBe(0.5);
    expect(DEFAULT_SETTINGS.RETRY_ENABLED).toBe(true);
    expect(DEFAULT_SETTINGS.RETRY_TIMES).toBe(2);
    expect(DEFAULT_SETTINGS.RETRY_HTTP_CODES).toEqual([500, 502, 503, 504, 522, 524, 408, 429]);
    expect(DEFAULT_SETTINGS.RETRY_PRIORITY_ADJUST).toBe(-1);
    expect(DEFAULT_SETTINGS.DOWNLOAD_WARNSIZE).toBe(32 * 1024 ** 2);
    // Issue 17: pacing by a server's RateLimit headers is on by default.
    expect(DEFAULT_SETTINGS.THROTTLING_RATELIMIT_PACE).toBe(true);
    expect(SETTINGS_SCHEMA).toHaveLength(36);
    const bad = applySettings({ THROTTLING_RATELIMIT_PACE: 'sometimes' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors[0].message).toMatch(/THROTTLING_RATELIMIT_PACE.*sometimes.*true or false/);
    for (const s of SETTINGS_SCHEMA) {
      expect(s.label.length, s.name).toBeGreaterThan(3);
      expect(s.help.length, s.name).toBeGreaterThan(10);
      // Every default passes its own validation.
      expect(applySettings({ [s.name]: s.default }).ok, s.name).toBe(true);
    }
  });

  it('accepts numeric strings and Scrapy booleans', () => {
    const s = parseSettings({ DOWNLOAD_DELAY: '2.5', AUTOTHROTTLE_ENABLED: 'True', CONCURRENT_REQUESTS: '32' });
    expect(s.DOWNLOAD_DELAY).toBe(2.5);
    expect(s.AUTOTHROTTLE_ENABLED).toBe(true);
    expect(s.CONCURRENT_REQUESTS).toBe(32);
  });

  it('refuses a bad value naming the setting, the value and the allowed range, and applies nothing', () => {
    const base = parseSettings({ DOWNLOAD_DELAY: 1 });
    const r = applySettings({ DOWNLOAD_DELAY: 3, AUTOTHROTTLE_TARGET_CONCURRENCY: 0 }, base);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].setting).toBe('AUTOTHROTTLE_TARGET_CONCURRENCY');
    expect(r.errors[0].message).toBe('AUTOTHROTTLE_TARGET_CONCURRENCY: 0 is not allowed (a number > 0)');
    expect(base.DOWNLOAD_DELAY).toBe(1);
  });

  it('reports every bad value at once, and suggests a name for a typo', () => {
    const r = applySettings({ CONCURRENT_REQUESTS_PER_DOMAIN: 0, DOWNLOAD_DELAY: -1, DOWNLOD_DELAY: 1, CONCURRENT_REQUESTS: 1.5 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const msgs = r.errors.map((e) => e.message);
    expect(msgs).toContain('CONCURRENT_REQUESTS_PER_DOMAIN: 0 is not allowed (a whole number >= 1)');
    expect(msgs).toContain('DOWNLOAD_DELAY: -1 is not allowed (a number >= 0 and <= 86400)');
    expect(msgs).toContain('DOWNLOD_DELAY: unknown setting (did you mean DOWNLOAD_DELAY?)');
    expect(msgs).toContain('CONCURRENT_REQUESTS: 1.5 is not allowed (a whole number >= 0)');
  });

  it('checks BACKOFF_MAX_DELAY >= BACKOFF_MIN_DELAY across fields', () => {
    const r = applySettings({ BACKOFF_MAX_DELAY: 0.5 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0].message).toMatch(/^BACKOFF_MAX_DELAY: 0.5 is not allowed \(a number >= BACKOFF_MIN_DELAY \(1\)\)/);
  });

  it('parses RANDOMIZE_DOWNLOAD_DELAY as bool, factor or pair', () => {
    expect(parseSettings({ RANDOMIZE_DOWNLOAD_DELAY: false }).RANDOMIZE_DOWNLOAD_DELAY).toBe(false);
    expect(parseSettings({ RANDOMIZE_DOWNLOAD_DELAY: 0.2 }).RANDOMIZE_DOWNLOAD_DELAY).toBe(0.2);
    expect(parseSettings({ RANDOMIZE_DOWNLOAD_DELAY: [-0.1, 0.3] }).RANDOMIZE_DOWNLOAD_DELAY).toEqual([-0.1, 0.3]);
    expect(() => parseSettings({ RANDOMIZE_DOWNLOAD_DELAY: 1.5 })).toThrow(SettingsError);
    expect(() => parseSettings({ RANDOMIZE_DOWNLOAD_DELAY: [0.5, 0.1] })).toThrow(/RANDOMIZE_DOWNLOAD_DELAY/);
    expect(drawFactor(false, () => 0.9)).toBe(1);
    expect(drawFactor(0.5, () => 0)).toBe(0.5);
    expect(drawFactor(0.5, () => 0.999999)).toBeCloseTo(1.5, 5);
    expect(drawFactor([-0.1, 0.3], () => 0.5)).toBeCloseTo(1.1, 12);
  });

  it('validates nested DOWNLOAD_SLOTS and THROTTLING_SCOPES, naming the key', () => {
    expect(parseSettings({ DOWNLOAD_SLOTS: { 'a.test': { concurrency: 2, delay: 0.5 } } }).DOWNLOAD_SLOTS['a.test'].delay).toBe(0.5);
    const r = applySettings({ DOWNLOAD_SLOTS: { 'a.test': { concurrency: 0 } } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0].message).toMatch(/DOWNLOAD_SLOTS: .* key "a.test": "concurrency": 0/);
    const t = applySettings({ THROTTLING_SCOPES: { api: { backoff: { delay_factor: 1 } } } });
    expect(t.ok).toBe(false);
    if (!t.ok) expect(t.errors[0].message).toMatch(/THROTTLING_SCOPES.*key "api".*delay_factor/);
  });

  it('lists what changed relative to the base', () => {
    const base = parseSettings({ DOWNLOAD_DELAY: 1 });
    const r = applySettings({ DOWNLOAD_DELAY: '1', AUTOTHROTTLE_ENABLED: true }, base);
    expect(r.ok && r.changed).toEqual(['AUTOTHROTTLE_ENABLED']);
  });

  it('offers the three presets of SPEC 2, each valid and with AutoThrottle on', () => {
    expect(PRESETS.map((p) => p.id)).toEqual(['polite', 'cooperative', 'many-sites']);
    for (const p of PRESETS) {
      const s = parseSettings(p.settings);
      expect(s.AUTOTHROTTLE_ENABLED).toBe(true);
    }
    const polite = parseSettings(PRESETS[0].settings);
    expect([polite.AUTOTHROTTLE_TARGET_CONCURRENCY, polite.AUTOTHROTTLE_MAX_DELAY, polite.AUTOTHROTTLE_START_DELAY,
      polite.CONCURRENT_REQUESTS_PER_DOMAIN, polite.DOWNLOAD_DELAY, polite.DOWNLOAD_DELAY_PER_SLOT]).toEqual([1, 10, 2, 1, 1, 1]);
  });
});
