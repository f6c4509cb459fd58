// Issue 15: values the HTTP client cannot send, delays past any timer, and hostile map keys are
// refused by name (setting, value, what is allowed) or kept as plain keys: never a TypeError,
// never silently dropped, never a crawl that hangs.
import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  applySettings, DEFAULT_SETTINGS, MAX_DELAY_SECONDS, parseSettings, SETTINGS_SCHEMA, validateDelayPin, type Settings,
} from '../../../shared/settings';
import { SlotPolicy as Slot } from '../../../electron/core/engine/throttle/policy';

const HOSTILE = ['__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'constructor'] as const;

function refusal(patch: unknown, base?: Settings) {
  const r = applySettings(patch, base);
  expect(r.ok, JSON.stringify(patch)).toBe(false);
  if (r.ok) throw new Error('accepted');
  return r.errors;
}

/** Whether Node's HTTP stack (the same rule undici applies) would send this header value. */
function sendable(v: string): boolean {
  try {
    validateHeaderValue('user-agent', v);
    return true;
  } catch {
    return false;
  }
}

describe('USER_AGENT is a header value the HTTP client can send', () => {
  it.each([
    ['a character above U+00FF', 'Bot\u0100/1.0'],
    ['an emoji', 'Bot \u{1F600}'],
    ['a NUL', 'Bot\u0000/1.0'],
    ['CR LF', 'Bot/1.0\r\nX-Evil: 1'],
    ['a lone LF', 'Bot/1.0\nX'],
    ['a tab', 'Bot\t1.0'],
    ['DEL', 'Bot\u007f'],
    ['a C1 control', 'Bot\u0085'],
  ])('refuses %s, naming the setting, the value and what is allowed', (_what, ua) => {
    const errors = refusal({ USER_AGENT: ua });
    expect(errors).toHaveLength(1);
    expect(errors[0].setting).toBe('USER_AGENT');
    expect(errors[0].value).toBe(ua);
    expect(errors[0].allowed).toMatch(/U\+00FF/);
    expect(errors[0].message).toContain('USER_AGENT: ');
    expect(errors[0].message).toContain(JSON.stringify(ua));
    expect(errors[0].message).toContain(errors[0].allowed);
  });

  it('accepts printable ASCII and Latin-1, and everything it accepts the HTTP client sends', () => {
    expect(parseSettings({ USER_AGENT: 'Bot/1.0 (+https://example.test/bot; café)' }).USER_AGENT).toBe('Bot/1.0 (+https://example.test/bot; café)');
    for (let c = 0; c <= 0x2ff; c++) {
      const ua = `Bot${String.fromCharCode(c)}1`;
      if (applySettings({ USER_AGENT: ua }).ok) expect(sendable(ua), `U+${c.toString(16)}`).toBe(true);
    }
    expect(sendable(DEFAULT_SETTINGS.USER_AGENT)).toBe(true);
  });
});

describe('durations are bounded (one day) so every timer can be armed', () => {
  it('has one bound, MAX_DELAY_SECONDS = 86400', () => {
    expect(MAX_DELAY_SECONDS).toBe(86_400);
  });

  it('refuses DOWNLOAD_TIMEOUT beyond a day (1.8e305 s overflowed undici\'s timeout to Infinity)', () => {
    for (const v of [1.8e305, 1e10, 86_401]) {
      const [e] = refusal({ DOWNLOAD_TIMEOUT: v });
      expect(e.setting).toBe('DOWNLOAD_TIMEOUT');
      expect(e.allowed).toBe('a number > 0 and <= 86400');
      expect(e.message).toBe(`DOWNLOAD_TIMEOUT: ${JSON.stringify(v)} is not allowed (a number > 0 and <= 86400)`);
    }
    expect(parseSettings({ DOWNLOAD_TIMEOUT: 86_400 }).DOWNLOAD_TIMEOUT).toBe(86_400);
  });

  const TOP = ['DOWNLOAD_DELAY', 'DOWNLOAD_DELAY_PER_SLOT', 'AUTOTHROTTLE_START_DELAY', 'AUTOTHROTTLE_MAX_DELAY', 'BACKOFF_MIN_DELAY',
    'BACKOFF_MAX_DELAY', 'BACKOFF_WINDOW', 'THROTTLING_WINDOW', 'THROTTLING_ROBOTSTXT_MAX_DELAY', 'DOWNLOAD_TIMEOUT'] as const;

  it.each(TOP)('refuses %s over 86400 s and says so; accepts 86400', (name) => {
    const base = name === 'BACKOFF_MIN_DELAY' ? parseSettings({ BACKOFF_MAX_DELAY: 86_400 }) : DEFAULT_SETTINGS;
    const [e] = refusal({ [name]: 3_000_000 }, base);
    expect(e.setting).toBe(name);
    expect(e.value).toBe(3_000_000);
    expect(e.allowed).toMatch(/<= 86400$/);
    expect(SETTINGS_SCHEMA.find((s) => s.name === name)!.allowed).toBe(e.allowed);
    expect(applySettings({ [name]: 86_400, ...(name === 'BACKOFF_MIN_DELAY' ? { BACKOFF_MAX_DELAY: 86_400 } : {}) }).ok).toBe(true);
  });

  it.each([
    ['DOWNLOAD_SLOTS', { a: { delay: 3_000_000 } }, 'delay'],
    ['THROTTLING_SCOPES', { a: { delay: 3_000_000 } }, 'delay'],
    ['THROTTLING_SCOPES', { a: { window: 3_000_000 } }, 'window'],
    ['THROTTLING_SCOPES', { a: { backoff: { min_delay: 3_000_000 } } }, 'min_delay'],
    ['THROTTLING_SCOPES', { a: { backoff: { max_delay: 3_000_000 } } }, 'max_delay'],
    ['THROTTLING_SCOPES', { a: { backoff: { window: 3_000_000 } } }, 'window'],
    ['THROTTLING_SCOPES', { a: { autothrottle: { start_delay: 3_000_000 } } }, 'start_delay'],
    ['THROTTLING_SCOPES', { a: { autothrottle: { max_delay: 3_000_000 } } }, 'max_delay'],
  ])('refuses a per-slot or per-scope %s duration over a day: %j', (name, value, field) => {
    const [e] = refusal({ [name]: value });
    expect(e.setting).toBe(name);
    expect(e.allowed).toMatch(/<= 86400$/);
    expect(e.message).toContain(`"${field}": 3000000`);
    expect(e.message).toContain('key "a"');
  });

  it('validateDelayPin (for the per-slot pin API): a number from 0 to 86400 s, or null; anything else a RangeError saying what is allowed', () => {
    expect(validateDelayPin(null)).toBe(null);
    expect(validateDelayPin(0)).toBe(0);
    expect(validateDelayPin(86_400)).toBe(86_400);
    expect(validateDelayPin(2.5)).toBe(2.5);
    for (const bad of [1e308, 86_400.5, -1, NaN, Infinity, '2', undefined]) {
      expect(() => validateDelayPin(bad), String(bad)).toThrow(RangeError);
      expect(() => validateDelayPin(bad)).toThrow(/^delay pin: .+ is not allowed \(a number of seconds >= 0 and <= 86400, or null to clear\)$/);
    }
  });
});

describe('hostile map keys', () => {
  it.each(['THROTTLING_SCOPES', 'DOWNLOAD_SLOTS'] as const)('%s keeps __proto__, toString, valueOf, hasOwnProperty, constructor as plain keys', (name) => {
    const text = `{"${name}": {${HOSTILE.map((k, i) => `"${k}": {"concurrency": ${i + 2}}`).join(', ')}}}`;
    const s = parseSettings(JSON.parse(text));
    const map = s[name] as Readonly<Record<string, { concurrency?: number }>>;
    expect(Object.keys(map)).toEqual([...HOSTILE]);
    HOSTILE.forEach((k, i) => {
      expect(Object.hasOwn(map, k), k).toBe(true);
      expect(map[k].concurrency, k).toBe(i + 2);
    });
    // Nothing leaked onto the map's prototype chain.
    expect(Object.getPrototypeOf(map)).toBe(null);
    expect(map.other).toBeUndefined();
    expect(JSON.parse(JSON.stringify(map))).toEqual(JSON.parse(text)[name]);
  });

  it.each(['THROTTLING_SCOPES', 'DOWNLOAD_SLOTS'] as const)('a %s lookup of an unset hostile key finds nothing (defaults, parsed and copied bases)', (name) => {
    const plainBase = { ...DEFAULT_SETTINGS, [name]: { a: { concurrency: 2 } } } as Settings;
    const sources: Settings[] = [
      DEFAULT_SETTINGS,
      parseSettings({ [name]: { a: { concurrency: 2 } } }),
      parseSettings({ DOWNLOAD_DELAY: 1 }, plainBase),
    ];
    for (const s of sources) {
      const map = s[name] as Readonly<Record<string, unknown>>;
      for (const k of HOSTILE) expect(map[k], `${name}[${k}]`).toBeUndefined();
    }
  });

  it.each([
    ['THROTTLING_SCOPES', 'a scope\'s settings'],
    ['DOWNLOAD_SLOTS', 'a slot\'s settings'],
  ] as const)('refuses a hostile key inside %s (%s) by name, without a TypeError', (name, _what) => {
    for (const k of HOSTILE) {
      const errors = refusal(JSON.parse(`{"${name}": {"a": {"${k}": 1}}}`));
      expect(errors).toHaveLength(1);
      expect(errors[0].setting).toBe(name);
      expect(errors[0].message).toContain(`unknown key "${k}"`);
    }
  });

  it('refuses a hostile key inside a scope\'s backoff or autothrottle map by name', () => {
    for (const k of HOSTILE) {
      for (const inner of ['backoff', 'autothrottle']) {
        const errors = refusal(JSON.parse(`{"THROTTLING_SCOPES": {"a": {"${inner}": {"${k}": 1}}}}`));
        expect(errors[0].message).toContain(`unknown key "${k}"`);
      }
    }
  });

  it('refuses hostile setting names as unknown settings', () => {
    for (const k of HOSTILE) {
      const errors = refusal(JSON.parse(`{"${k}": 1}`));
      expect(errors[0].setting).toBe(k);
      expect(errors[0].message).toContain('unknown setting');
    }
  });

  it('a slot whose key is a hostile name has no scope settings unless configured, and works', () => {
    const s = parseSettings({ THROTTLING_SCOPES: { other: { delay: 2 } }, DOWNLOAD_DELAY: 0.5 });
    for (const k of HOSTILE) {
      const slot = new Slot(k, s.DOWNLOAD_SLOTS[k], s);
      expect(slot.scope(s), k).toBeUndefined();
      expect(slot.quota(s), k).toBe(null);
      expect(slot.delaySeconds(s), k).toBe(0.5);
    }
    const configured = parseSettings(JSON.parse('{"THROTTLING_SCOPES": {"__proto__": {"delay": 2}, "constructor": {"quota": 5}}}'));
    expect(new Slot('__proto__', undefined, configured).delaySeconds(configured)).toBe(2);
    expect(new Slot('constructor', undefined, configured).quota(configured)?.limit).toBe(5);
  });
});
